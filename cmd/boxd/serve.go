package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"boxd/internal/atomicfile"
	box "boxd/internal/daemon"

	"github.com/coreos/go-systemd/v22/daemon"
	"github.com/spf13/cobra"

	"boxd/configs"
	"boxd/engine/asr"
	"boxd/engine/asr/stream"
	"boxd/engine/attest"
	"boxd/engine/llm"
	"boxd/engine/models"
	"boxd/engine/models/gguf"
	"boxd/gpu"
	"boxd/internal/platform"
	"boxd/internal/receipts"
	"boxd/internal/store"
	"boxd/internal/version"
	"boxd/pipelines/chat"
	"boxd/pipelines/codes"
	"boxd/pipelines/live"
	"boxd/pipelines/live/verticals"
	"boxd/pipelines/migration"
	"boxd/pipelines/outbound"
	"boxd/pipelines/retrieval"
	"boxd/web"
)

func newServe() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Load the configured models and serve the API (systemd: Type=notify)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := configs.Load(cmd.Flags())
			if err != nil {
				return configError{err}
			}
			return serve(cmd.Context(), cfg, cmd.ErrOrStderr())
		},
	}
	configs.RegisterFlags(cmd.Flags())
	return cmd
}

func newLogger(cfg *configs.Config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.Log.Level))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.Log.Format == "text" {
		return slog.New(namedLines{slog.NewTextHandler(w, opts)})
	}
	return slog.New(namedLines{slog.NewJSONHandler(w, opts)})
}

// namedLines gives a message to log lines that come without one: ollama's
// ggml backend logs a model file's metadata (architecture, name,
// num_tensors, ...) as a line whose message is "".
type namedLines struct{ slog.Handler }

// unnamedLine is the message of a line logged without one.
const unnamedLine = "model file (ggml backend)"

func (h namedLines) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "" {
		r.Message = unnamedLine
	}
	return h.Handler.Handle(ctx, r)
}

func (h namedLines) WithAttrs(attrs []slog.Attr) slog.Handler {
	return namedLines{h.Handler.WithAttrs(attrs)}
}

func (h namedLines) WithGroup(name string) slog.Handler { return namedLines{h.Handler.WithGroup(name)} }

// notify sends a state line to systemd when NOTIFY_SOCKET is set.
func notify(log *slog.Logger, state string) {
	if _, err := daemon.SdNotify(false, state); err != nil {
		log.Warn("sd_notify failed", "state", strings.SplitN(state, "=", 2)[0], "err", err)
	}
}

// extendWhile calls extend at once and then every interval until stop is
// called, so that slow start-up work that reports no progress of its own
// keeps the start timeout extended (the extension before it may be nearly
// spent). stop waits until no call is running.
func extendWhile(every time.Duration, extend func()) (stop func()) {
	extend()
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				extend()
			}
		}
	}()
	return func() { close(done); <-finished }
}

// testRoutes, when set (by this package's tests only), adds routes to the
// server before it starts.
var testRoutes func(*web.Server)

// serve runs the daemon until ctx ends or SIGTERM/SIGINT arrives.
func serve(parent context.Context, cfg *configs.Config, logw io.Writer) error {
	log := newLogger(cfg, logw)
	slog.SetDefault(log)
	start := time.Now()
	log.Info("starting", "version", version.Version, "config", cfg.File, "listen", cfg.Listen, "state_dir", cfg.StateDir,
		"llm", cfg.Models.LLM.Path != "", "admin_secret", cfg.AdminSecret.IsSet())

	ctx, stop := signal.NotifyContext(parent, syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	// Settings that only need reading are checked before anything is
	// written (the state directory, the signing key): a refused start
	// leaves no trace.
	if err := web.CheckListen(ctx, cfg); err != nil {
		return configError{err}
	}
	if err := web.ProbeListen(ctx, cfg); err != nil {
		return err // not a configuration error: the port may be free at the next start
	}
	codeTables, err := codes.Load(cfg.DataDir)
	if err != nil {
		err = fmt.Errorf("the clinical vertical and /hcc/read-chart need the code tables in data_dir: %w", err)
	}
	verticals := verticals.FromTables(codeTables)
	if err != nil {
		return configError{fmt.Errorf("data_dir (%s): %w; set data_dir to the directory that holds icd10cm/ and rxnorm/ (the package installs %s)", cfg.Source("data_dir"), err, configs.Defaults().DataDir)}
	}

	// The signing key lives in the state directory: other users must not
	// read it (an existing 0755 one this user owns is tightened).
	if was, err := attest.SecureDir(cfg.StateDir); err != nil {
		return configError{fmt.Errorf("state_dir: %w", err)}
	} else if was != 0 {
		log.Warn("tightened the state directory to 0700: other users could read it", "path", cfg.StateDir, "was", fmt.Sprintf("%04o", was))
	}
	// Writes a kill cut short leave their temporary files; those an hour
	// old are no write in progress (a model pull keeps its file fresh).
	if n, err := atomicfile.Sweep(cfg.StateDir, time.Hour); err != nil {
		log.Warn("sweeping unfinished writes from the state directory", "err", err)
	} else if n > 0 {
		log.Info("removed the temporary files of unfinished writes", "files", n)
	}
	key, created, err := attest.LoadOrCreateKey(cfg.StateDir)
	if err != nil {
		return configError{err}
	}
	if created {
		log.Info("created the instance signing key; back up the state directory", "key_id", key.ID(), "path", cfg.StateDir)
	} else {
		log.Info("instance signing key loaded", "key_id", key.ID())
	}
	st, err := store.Open(ctx, cfg.StateDir)
	if err != nil {
		return err
	}
	defer st.Close()
	plat := platform.New(cfg, st, nil)
	book := receipts.New(key, st, cfg, nil)

	gpu.Init(cfg.GPU.LibraryPath)
	arbiter := gpu.NewArbiter()
	// The chat model and Whisper share the CPUs instead of each taking
	// every one (configs.Config.Threads).
	llmThreads, asrThreads := cfg.Threads(runtime.NumCPU())
	log.Info("cpu threads", "cpus", runtime.NumCPU(), "llm", llmThreads, "asr", asrThreads)
	// Speech recognition: Whisper and the VAD that cuts live audio. They
	// load before the chat model: ollama's ggml backend, which runs them,
	// resets (cudaDeviceReset) every GPU a model it loads does not use,
	// which would free the memory of a model already on that GPU.
	var speech *stream.Engine
	if cfg.Models.ASR.Path != "" {
		notify(log, "STATUS=loading "+cfg.Models.ASR.Path)
		e, err := loadSpeech(ctx, cfg, arbiter, asrThreads, log)
		if err != nil {
			if ctx.Err() != nil {
				log.Info("stopped during start-up")
				return nil
			}
			return configError{err}
		}
		defer e.Close()
		speech = e
	}

	chatSvc := &chat.Service{ModelID: cfg.Models.LLM.ID, Provider: key.ID(), Receipts: book}
	if cfg.Models.LLM.Path != "" {
		notify(log, "STATUS=loading "+cfg.Models.LLM.Path)
		e, root, err := loadLLM(ctx, cfg, chatSpec(cfg), arbiter, llmThreads, log)
		if errors.Is(err, llm.ErrCancelled) {
			log.Info("stopped during start-up")
			return nil
		}
		if err != nil {
			if errors.Is(err, llm.ErrProjector) {
				return configError{fmt.Errorf("models.llm.projector (%s): %w", cfg.Source("models.llm.projector"), err)}
			}
			return configError{fmt.Errorf("models.llm.path (%s): %w", cfg.Source("models.llm.path"), err)}
		}
		defer e.Close()
		chatSvc.Engine, chatSvc.WeightsRoot = e, root
		chatSvc.Upstream = e.Info().Name
		if chatSvc.Upstream == "" {
			chatSvc.Upstream = filepath.Base(cfg.Models.LLM.Path)
		}
		chatSvc.Aliases = modelAliases(cfg)
		log.Info("chat model names", "id", chatSvc.ModelID, "aliases", chatSvc.Aliases)
	}
	migCands, closeCands, err := migrationCandidates(ctx, cfg, arbiter, llmThreads, key.ID(), book, log)
	if err != nil {
		if ctx.Err() != nil {
			log.Info("stopped during start-up")
			return nil
		}
		return configError{err}
	}
	defer closeCands()
	var migPrices *migration.PriceTable
	if p := cfg.Migration.PriceTable; p != "" {
		t, err := migration.LoadPrices(p)
		if err != nil {
			return configError{fmt.Errorf("migration.price_table (%s): %w", cfg.Source("migration.price_table"), err)}
		}
		migPrices = &t
	}
	// A model that loads but cannot chat (a base model without a chat
	// template) does not stop start-up: speech and the other routes serve.
	// /healthz says llm false with llm_error, and this line says it once.
	var llmError string
	if err := chatSvc.ChatError(); err != nil {
		llmError = err.Error()
		log.Warn("chat completions and live lanes answer 502 until models.llm.template is set; /healthz says llm false", "err", err)
	}

	// The retrieval models: loaded now so a bad file stops start-up; the
	// retrieval routes use them.
	retr := &retrieval.Service{}
	for _, m := range []struct {
		key, path string
		rerank    bool
	}{{"models.embedder.path", cfg.Models.Embedder.Path, false}, {"models.reranker.path", cfg.Models.Reranker.Path, true}} {
		if m.path == "" {
			continue
		}
		// All the CPUs, tuned down when fewer are measured faster (an
		// index built on a busy box: threadtune).
		emb, err := llm.OpenEmbedder(ctx, llm.Options{Path: m.path, GPULayers: cfg.GPU.Layers, TuneThreads: true})
		if errors.Is(err, llm.ErrCancelled) {
			return nil
		}
		if err != nil {
			return configError{fmt.Errorf("%s (%s): %w", m.key, cfg.Source(m.key), err)}
		}
		defer emb.Close()
		if emb.IsReranker() != m.rerank {
			return configError{fmt.Errorf("%s (%s): %s is not a %s model", m.key, cfg.Source(m.key), m.path, map[bool]string{true: "reranking (rank pooling)", false: "sentence-embedding"}[m.rerank])}
		}
		hashes := models.OpenHashCache(cfg.StateDir)
		root, _, err := hashes.WeightsRootOf(ctx, m.path)
		if err != nil {
			return configError{fmt.Errorf("%s (%s): %w", m.key, cfg.Source(m.key), err)}
		}
		_ = hashes.Save()
		name := emb.Info().Name
		if name == "" {
			name = strings.TrimSuffix(filepath.Base(m.path), filepath.Ext(m.path))
		}
		// The revision is the weights root: a local file has no other.
		rm := retrieval.Model{Ref: retrieval.ModelRef{Repo: name, Revision: root.Root}, WeightsRoot: root.Root, File: filepath.Base(m.path), Licence: ggufLicence(m.path)}
		if m.rerank {
			retr.Reranker, retr.RerankerModel = emb, rm
		} else {
			retr.Embedder, retr.EmbedderModel = emb, rm
		}
		log.Info("model loaded", "model", strings.TrimSuffix(strings.TrimPrefix(m.key, "models."), ".path"), "architecture", emb.Info().Architecture,
			"parameters", emb.Info().Parameters, "weights_root", root.Root)
	}

	// The quota before the load: a start finishes a replacement a crash
	// cut short by the owners' bounds (web keeps a quota already set).
	retr.Quota = retrieval.Quota{Max: cfg.Retrieval.MaxIndexes, PerKey: cfg.Retrieval.IndexesPerKey, Demo: cfg.Retrieval.DemoIndexes, PerDemo: cfg.Retrieval.IndexesPerDemo}
	if cfg.Retrieval.Persist {
		retr.PersistDir = filepath.Join(cfg.StateDir, "retrieval")
		n, err := retr.LoadPersisted()
		if err != nil {
			log.Warn("retrieval indexes left out", "err", err)
		}
		log.Info("retrieval indexes loaded", "indexes", n, "dir", retr.PersistDir)
	}

	policy, err := outbound.PolicyFromSettings(cfg.Outbound.AllowPrivate, cfg.Outbound.AllowCIDRs, cfg.Outbound.CAFile, "boxd-sitecheck/"+version.Version)
	if err != nil {
		return configError{err}
	}
	diar, closeDiar, err := diarization(cfg, log)
	if err != nil {
		return configError{err}
	}
	defer closeDiar()

	ln, err := web.Listen(ctx, cfg, log)
	if err != nil {
		return configError{err}
	}
	bx := box.New(cfg, box.Deps{
		Outbound: outbound.New(policy),
		Probes: web.Probes{
			LLMReady:      func() bool { return chatSvc.Engine != nil },
			LLMError:      func() string { return llmError },
			ASRReady:      func() bool { return speech != nil },
			Queue:         arbiter.Queued,
			RandomWeights: randomWeights(cfg, log),
		},
		Platform:  plat,
		Key:       key,
		Receipts:  book,
		Retrieval: retr,
		Chat:      chatSvc,
		// Live audio: Whisper per session (Options(lang, "transcribe") →
		// Session → stream.Start); nil without models.asr.path (1011).
		Transcribe:    live.SpeechTranscriber(speech),
		LiveModels:    live.Models{ASR: asrName(speech, cfg), LLM: cfg.Models.LLM.ID},
		LiveVerticals: verticals,
		Diarize:       diar,
		Codes:         codeTables,

		MigrationCandidates: migCands,
		MigrationPrices:     migPrices,
	}, log)
	srv := bx.Server
	// The audit's reference fixture of the chat model, recorded once
	// (audit.record_at_start): its probes run beside the first requests.
	go bx.RecordAuditReference(ctx)
	srv.OnDrain = func() { notify(log, "STOPPING=1") }
	if testRoutes != nil {
		testRoutes(srv)
	}

	addr := ln.Addr().String()
	log.Info("ready", "addr", addr, "startup_ms", time.Since(start).Milliseconds())
	notify(log, "READY=1\nSTATUS=serving on "+addr)
	go watchdog(ctx, log, addr)

	go func() {
		<-ctx.Done()
		stop() // a second signal ends the process at once
	}()
	err = srv.Serve(ctx, ln)
	if errors.Is(err, web.ErrGraceExpired) {
		log.Warn("stopped with requests cut", "err", err)
		return nil
	}
	if err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}

// llmSpec is a chat model to load: the chat model's models.llm.*
// settings, or a migration candidate's.
type llmSpec struct {
	role                          string // "llm" or "migration candidate" (logs)
	pool                          string // the engine's arbiter pool ("": "llm")
	id, path, projector, template string
	contextLength, parallel       int
}

func chatSpec(cfg *configs.Config) llmSpec {
	m := cfg.Models.LLM
	return llmSpec{role: "llm", id: m.ID, path: m.Path, projector: m.Projector, template: m.Template, contextLength: m.ContextLength, parallel: m.Parallel}
}

func loadLLM(ctx context.Context, cfg *configs.Config, spec llmSpec, arbiter *gpu.Arbiter, threads int, log *slog.Logger) (*llm.Engine, string, error) {
	gpus := gpu.GPUs()
	layers, why := gpu.LayersFor(cfg.GPU.Layers, gpus, 0, 0, 0)
	if cfg.GPU.Layers < 0 && len(gpus) > 0 {
		info, err := llm.ReadInfo(ctx, spec.path)
		if err != nil {
			return nil, "", err
		}
		// KV cache (K and V, f16) for every sequence plus compute buffers,
		// and the vision projector's weights beside them.
		reserve := uint64(2*info.Layers*spec.contextLength*spec.parallel*info.EmbeddingSize*2) + 512<<20
		if p := spec.projector; p != "" {
			if st, err := os.Stat(p); err == nil {
				reserve += uint64(st.Size())
			}
		}
		layers, why = gpu.LayersFor(cfg.GPU.Layers, gpus, info.SizeBytes, info.Layers, reserve)
	}
	var tmpl models.Template
	if spec.template != "auto" {
		tmpl = models.Template(spec.template)
	}
	log.Info("loading model", "model", spec.role, "id", spec.id, "gpu_layers", layers, "why", why)
	lastExtend := time.Now()
	e, err := llm.Open(ctx, llm.EngineOptions{
		Options: llm.Options{
			Path:          spec.path,
			Projector:     spec.projector,
			GPULayers:     layers,
			ContextLength: spec.contextLength,
			Parallel:      spec.parallel,
			Threads:       threads,
			// llm.threads 0: threadtune measures whether fewer threads
			// decode faster on this machine (other work holding CPUs).
			TuneThreads: cfg.LLM.Threads == 0,
			Progress: func(float32) {
				if time.Since(lastExtend) > 5*time.Second {
					lastExtend = time.Now()
					notify(log, "EXTEND_TIMEOUT_USEC=60000000")
				}
			},
		},
		Arbiter:  arbiter,
		Template: tmpl,
		Pool:     spec.pool,
	})
	if err != nil {
		return nil, "", err
	}
	hashes := models.OpenHashCache(cfg.StateDir)
	// A new model file is read in full for its hash (minutes for a big one
	// on a slow disk): keep systemd's start timeout extended meanwhile.
	// SIGTERM (ctx) stops the read.
	stopExtending := extendWhile(20*time.Second, func() { notify(log, "EXTEND_TIMEOUT_USEC=60000000") })
	root, cached, err := hashes.WeightsRootOf(ctx, spec.path)
	stopExtending()
	if err != nil {
		e.Close()
		return nil, "", err
	}
	if err := hashes.Save(); err != nil {
		log.Warn("could not remember the model's hash; the next start reads the file again", "err", err)
	}
	info := e.Info()
	log.Info("model loaded", "model", spec.role, "id", spec.id, "architecture", info.Architecture,
		"parameters", info.Parameters, "quantisation", info.Quantisation, "chat_template", e.Template(),
		"weights_root", root.Root, "weights_root_cached", cached, "context_per_request", e.ContextPerRequest(), "parallel", e.Parallel(), "vision", e.Vision())
	return e, root.Root, nil
}

// loadSpeech loads the Whisper model and the VAD; decodes take one of the
// arbiter's "asr" slots at live priority, as many as the model decodes at
// once (asr.parallel), their steps batched.
func loadSpeech(ctx context.Context, cfg *configs.Config, arbiter *gpu.Arbiter, threads int, log *slog.Logger) (*stream.Engine, error) {
	vad := cfg.VADPath()
	if vad == "" {
		return nil, fmt.Errorf("models.vad.path: no Silero VAD file; set it to ggml-silero-v6.2.0.bin (the package installs %s)", configs.PackagedVAD)
	}
	layers := cfg.GPU.Layers
	if len(gpu.GPUs()) == 0 {
		layers = 0
	}
	flash, err := asr.ParseFlash(cfg.ASR.FlashAttention)
	if err != nil {
		return nil, fmt.Errorf("asr.flash_attention (%s): %w", cfg.Source("asr.flash_attention"), err)
	}
	e, err := stream.Load(ctx, cfg.Models.ASR.Path, vad, stream.Settings{
		BeamSize: cfg.ASR.BeamSize, PartialStepMS: cfg.ASR.PartialStepMS, MaxSentenceS: float64(cfg.ASR.MaxSentenceS), GPULayers: layers, Threads: threads,
		Parallel: cfg.ASR.Parallel, Flash: flash,
	})
	var le *stream.LoadError
	if errors.As(err, &le) && le.VAD {
		return nil, fmt.Errorf("models.vad.path (%s): %w", cfg.Source("models.vad.path"), le.Err)
	}
	if err != nil {
		return nil, fmt.Errorf("models.asr.path (%s): %w", cfg.Source("models.asr.path"), err)
	}
	pool := arbiter.Pool("asr", max(1, cfg.ASR.Parallel), 256)
	e.Defaults.Acquire = func(ctx context.Context) (func(), error) { return pool.Acquire(ctx, gpu.Live) }
	hp := e.Model.HParams()
	log.Info("model loaded", "model", "asr", "name", e.Model.Name(), "layers", hp.NAudioLayer, "mels", hp.NMels,
		"multilingual", e.Model.Tokenizer().Multilingual, "gpu_layers", layers, "parallel", max(1, cfg.ASR.Parallel), "flash_attention", e.Model.FlashAttention(), "vad", vad)
	return e, nil
}

// asrName names the speech model in live ready events ("" without one).
func asrName(speech *stream.Engine, cfg *configs.Config) string {
	if speech == nil {
		return ""
	}
	if n := speech.Model.Name(); n != "" {
		return n
	}
	return strings.TrimSuffix(filepath.Base(cfg.Models.ASR.Path), filepath.Ext(cfg.Models.ASR.Path))
}

// watchdog pings systemd at half the unit's WatchdogSec, but only while the
// server answers its own /healthz: a wedged server is restarted.
func watchdog(ctx context.Context, log *slog.Logger, addr string) {
	interval, err := daemon.SdWatchdogEnabled(false)
	if err != nil || interval <= 0 {
		return
	}
	host, port, _ := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	url := "http://" + net.JoinHostPort(host, port) + "/healthz"
	client := &http.Client{Timeout: interval / 3}
	tick := time.NewTicker(interval / 2)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err != nil {
			log.Warn("watchdog: self-check failed; not pinging systemd", "err", err)
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			notify(log, "WATCHDOG=1")
		}
	}
}

// ggufLicence is a GGUF's general.license ("" when it names none or
// cannot be read).
func ggufLicence(path string) string {
	f, err := gguf.ReadFile(path)
	if err != nil {
		return ""
	}
	return f.String("general.license")
}

// modelAliases are the names besides models.llm.id that chat accepts as
// model: models.llm.aliases, then the model file's own name without
// .gguf (what an app used with llama-server or a file-named ollama model
// sends). The id itself and repeats are left out.
func modelAliases(cfg *configs.Config) []string {
	var out []string
	add := func(name string) {
		if name != "" && name != cfg.Models.LLM.ID && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	for _, a := range cfg.Models.LLM.Aliases {
		add(a)
	}
	add(strings.TrimSuffix(filepath.Base(cfg.Models.LLM.Path), ".gguf"))
	return out
}

// randomWeights names the configured models whose GGUF says its weights
// are random (boxd models make-test-models: the quick start's), and warns
// once: they load and run, and what they say is noise.
func randomWeights(cfg *configs.Config, log *slog.Logger) []string {
	var out []string
	for _, m := range []struct{ role, path string }{
		{"llm", cfg.Models.LLM.Path}, {"llm_projector", cfg.Models.LLM.Projector}, {"asr", cfg.Models.ASR.Path},
		{"embedder", cfg.Models.Embedder.Path}, {"reranker", cfg.Models.Reranker.Path},
	} {
		if m.path == "" {
			continue
		}
		if random, err := models.HasRandomWeights(m.path); err == nil && random {
			out = append(out, m.role)
		}
	}
	if len(out) > 0 {
		log.Warn("random-weight test models loaded: they run, and what they say is noise; configure real models for real answers (README, Models)", "models", out)
	}
	return out
}
