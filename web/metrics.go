package web

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"boxd/internal/platform"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"boxd/internal/version"
	"boxd/pipelines/llmcall"
)

// metrics is the server's own Prometheus registry. Labels carry route
// patterns and status codes only, never paths with ids or query strings.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// refused counts connections the listener refused over its limits
	// (limits.go, limitListener), which never reach a handler and so are
	// not in requests.
	refused *prometheus.CounterVec
	llm     *llmMeter
	handler http.Handler
}

// llmMeter counts the chat model's calls (every chat completion and live
// lane run goes through llmcall), as llama-server's /metrics counts its
// tokens: prompt and generated tokens, generation time (tokens per second
// follow), time to the first token, calls running.
type llmMeter struct {
	promptTokens, generatedTokens, generating prometheus.Counter
	calls                                     *prometheus.CounterVec
	firstToken                                prometheus.Histogram
	running                                   prometheus.Gauge
	mu                                        sync.Mutex
	decoded                                   int     // tokens after each call's first
	decodeSeconds                             float64 // the time they took
}

var _ llmcall.Meter = (*llmMeter)(nil)

func newLLMMeter() *llmMeter {
	return &llmMeter{
		promptTokens: prometheus.NewCounter(prometheus.CounterOpts{Name: "boxd_llm_prompt_tokens_total",
			Help: "Prompt tokens of the chat model's calls (cached ones included)."}),
		generatedTokens: prometheus.NewCounter(prometheus.CounterOpts{Name: "boxd_llm_generated_tokens_total",
			Help: "Tokens the chat model generated."}),
		generating: prometheus.NewCounter(prometheus.CounterOpts{Name: "boxd_llm_generation_seconds_total",
			Help: "Seconds from each call's first generated token to its last."}),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "boxd_llm_calls_total",
			Help: "Chat model calls that generated, by finish reason."}, []string{"finish"}),
		firstToken: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "boxd_llm_time_to_first_token_seconds",
			Help: "Seconds from a call's start (queue wait and prompt processing) to its first generated token.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 12)}),
		running: prometheus.NewGauge(prometheus.GaugeOpts{Name: "boxd_llm_calls_running",
			Help: "Chat model calls generating now."}),
	}
}

func (l *llmMeter) Running(delta int) { l.running.Add(float64(delta)) }

func (l *llmMeter) Call(finish string, prompt, generated int, firstToken, generating time.Duration) {
	l.promptTokens.Add(float64(prompt))
	l.generatedTokens.Add(float64(generated))
	l.generating.Add(generating.Seconds())
	l.calls.WithLabelValues(finish).Inc()
	if firstToken > 0 {
		l.firstToken.Observe(firstToken.Seconds())
	}
	if generated > 1 && generating > 0 {
		l.mu.Lock()
		l.decoded += generated - 1
		l.decodeSeconds += generating.Seconds()
		l.mu.Unlock()
	}
}

// tokensPerSecond is the mean decode speed since start: tokens after each
// call's first over the time they took (0 before any).
func (l *llmMeter) tokensPerSecond() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.decodeSeconds == 0 {
		return 0
	}
	return float64(l.decoded) / l.decodeSeconds
}

func newMetrics(s *Server, pl *platform.Platform) *metrics {
	m := &metrics{reg: prometheus.NewRegistry(), llm: newLLMMeter()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "boxd_http_requests_total",
		Help: "HTTP requests by route pattern and status code.",
	}, []string{"route", "code"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "boxd_http_request_duration_seconds",
		Help:    "HTTP request duration by route pattern.",
		Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
	}, []string{"route"})
	m.refused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "boxd_connections_refused_total",
		Help: "Connections the listener refused over its limits, by limit (connections_per_address: 429, connections: 503) and whether the refusal was answered or the connection closed at once (every refuser busy).",
	}, []string{"limit", "how"})
	for _, l := range []string{"connections_per_address", "connections"} {
		for _, h := range []string{"answered", "closed"} {
			m.refused.WithLabelValues(l, h) // present at 0 from the start
		}
	}
	loaded := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "boxd_model_loaded",
		Help: "1 when the model is loaded and serving, 0 otherwise.",
	}, []string{"model"})
	m.reg.MustRegister(
		m.requests, m.duration, m.refused,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "boxd_live_sessions", Help: "Open live audio sessions."},
			func() float64 { return float64(callInt(s.probes.LiveSessions)) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "boxd_demo_sessions", Help: "Unexpired demo sessions in memory."},
			func() float64 { return float64(pl.DemoSessions()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "boxd_queue_depth", Help: "Requests waiting for the GPU arbiter."},
			func() float64 { return float64(callInt(s.probes.Queue)) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "boxd_draining", Help: "1 while the server drains after SIGTERM."},
			func() float64 { return b2f(s.api.Draining()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "boxd_build_info", Help: "Build information.", ConstLabels: prometheus.Labels{"version": version.Version}},
			func() float64 { return 1 }),
		loadedCollector{loaded: loaded, s: s},
		m.llm.promptTokens, m.llm.generatedTokens, m.llm.generating, m.llm.calls, m.llm.firstToken, m.llm.running,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "boxd_llm_tokens_per_second",
			Help: "Mean decode speed of the chat model since start: generated tokens after each call's first, per second."},
			m.llm.tokensPerSecond),
	)
	m.handler = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
	return m
}

// loadedCollector refreshes boxd_model_loaded from the probes at scrape time.
type loadedCollector struct {
	loaded *prometheus.GaugeVec
	s      *Server
}

func (c loadedCollector) Describe(ch chan<- *prometheus.Desc) { c.loaded.Describe(ch) }

func (c loadedCollector) Collect(ch chan<- prometheus.Metric) {
	c.loaded.WithLabelValues("llm").Set(b2f(c.s.Health().LLM))
	c.loaded.WithLabelValues("asr").Set(b2f(callBool(c.s.probes.ASRReady)))
	c.loaded.WithLabelValues("diarizer").Set(b2f(c.s.probes.Diarizer != ""))
	c.loaded.Collect(ch)
}

func (m *metrics) serve(w http.ResponseWriter, r *http.Request) { m.handler.ServeHTTP(w, r) }

// connRefused counts one connection the listener refused with status
// (429 per address, 503 in all); answered is false when it was closed
// without an answer.
func (m *metrics) connRefused(status int, answered bool) {
	limit, how := "connections", "closed"
	if status == http.StatusTooManyRequests {
		limit = "connections_per_address"
	}
	if answered {
		how = "answered"
	}
	m.refused.WithLabelValues(limit, how).Inc()
}

// statusWriter remembers the status code a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach Flush and Hijack underneath.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// observe counts and logs every request by route pattern and status. The
// log line holds the request id, method, pattern, status and duration only.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := newRequestID()
		w.Header().Set("X-Request-Id", id)
		if s.api.Draining() {
			w.Header().Set("Connection", "close")
		}
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		if sw.code == 0 {
			sw.code = http.StatusOK
		}
		route := r.Pattern // set by ServeMux on this request
		if route == "" || route == "/" {
			route = "unmatched"
		}
		elapsed := time.Since(start)
		s.metrics.requests.WithLabelValues(route, strconv.Itoa(sw.code)).Inc()
		s.metrics.duration.WithLabelValues(route).Observe(elapsed.Seconds())
		s.log.Debug("request", "id", id, "route", route, "status", sw.code, "ms", elapsed.Milliseconds())
	})
}

func callBool(f func() bool) bool { return f != nil && f() }

func callInt(f func() int) int {
	if f == nil {
		return 0
	}
	return f()
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
