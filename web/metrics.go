package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"boxd/version"
)

// metrics is the server's own Prometheus registry. Labels carry route
// patterns and status codes only, never paths with ids or query strings.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	handler  http.Handler
}

func newMetrics(s *Server) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "boxd_http_requests_total",
		Help: "HTTP requests by route pattern and status code.",
	}, []string{"route", "code"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "boxd_http_request_duration_seconds",
		Help:    "HTTP request duration by route pattern.",
		Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
	}, []string{"route"})
	loaded := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "boxd_model_loaded",
		Help: "1 when the model is loaded and serving, 0 otherwise.",
	}, []string{"model"})
	m.reg.MustRegister(
		m.requests, m.duration,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "boxd_live_sessions", Help: "Open live audio sessions."},
			func() float64 { return float64(callInt(s.probes.LiveSessions)) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "boxd_demo_sessions", Help: "Unexpired demo sessions in memory."},
			func() float64 { return float64(s.platform.DemoSessions()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "boxd_queue_depth", Help: "Requests waiting for the GPU arbiter."},
			func() float64 { return float64(callInt(s.probes.Queue)) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "boxd_draining", Help: "1 while the server drains after SIGTERM."},
			func() float64 { return b2f(s.draining.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "boxd_build_info", Help: "Build information.", ConstLabels: prometheus.Labels{"version": version.Version}},
			func() float64 { return 1 }),
		loadedCollector{loaded: loaded, s: s},
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
	c.loaded.WithLabelValues("diarizer").Set(b2f(callBool(c.s.probes.DiarizeReady)))
	c.loaded.Collect(ch)
}

func (m *metrics) serve(w http.ResponseWriter, r *http.Request) { m.handler.ServeHTTP(w, r) }

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
		if s.draining.Load() {
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
