// Package configs holds boxd's settings: their names, types, defaults and
// checks, the commented boxd.yaml that lists them, and the loader that merges
// the config file, BOXD_* environment variables and command-line flags.
package configs

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
)

// DefaultFile is where `boxd serve` looks for its config file when --config is
// not given. A missing default file means built-in defaults.
const DefaultFile = "/etc/boxd/boxd.yaml"

// DefaultYAML is configs/boxd.yaml: every setting with its default, commented.
// Tests check that it matches the table below exactly.
//
//go:embed boxd.yaml
var DefaultYAML []byte

// Secret is a string that never prints: fmt, slog and JSON all see
// "[redacted]". Reveal returns the value.
type Secret string

// String implements fmt.Stringer.
func (s Secret) String() string { return s.redacted() }

// GoString implements fmt.GoStringer.
func (s Secret) GoString() string { return s.redacted() }

// LogValue implements slog.LogValuer.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.redacted()) }

// MarshalText implements encoding.TextMarshaler (used by JSON and YAML).
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.redacted()), nil }

// Reveal returns the secret itself. Call it only to compare.
func (s Secret) Reveal() string { return string(s) }

// IsSet reports whether a secret was configured.
func (s Secret) IsSet() bool { return s != "" }

func (s Secret) redacted() string {
	if s == "" {
		return ""
	}
	return "[redacted]"
}

// Config is the validated, typed configuration of one boxd process.
type Config struct {
	Listen           string
	AllowNonLoopback bool
	StateDir         string
	DataDir          string
	Origins          []string
	AllowedHosts     []string
	AdminSecret      Secret
	AdminSecretFile  string
	ShutdownGraceS   int
	Log              LogConfig
	Limits           Limits
	Bounds           Bounds
	Receipts         Receipts
	Models           Models
	ASR              ASR
	LLM              LLM
	Retrieval        Retrieval
	A11y             A11y
	DocReader        DocReader
	Diarize          Diarize
	Outbound         Outbound
	Audit            Audit
	Migration        Migration
	GPU              GPU

	// File is the config file that was read ("" when none was).
	File string
	// sources records where each key's value came from.
	sources map[string]string
}

// LogConfig selects the structured log output.
type LogConfig struct {
	Level  string
	Format string
}

// Limits are the self-hosted defaults of contract section 8.
type Limits struct {
	SessionsPerAddressPerHour int
	SessionsPerHour           int
	SessionLifetimeS          int
	LiveCap                   int
	AudioBudgetS              int
	TokenBudget               int
	StopReserveTokens         int
	// RequireSynthetic: routes that take the caller's own data (a file,
	// documents, a page's HTML) need synthetic: true
	// (limits.require_synthetic; on for hosted demo deployments).
	RequireSynthetic bool
}

// Bounds hold what the box allows one client against hostile or broken
// clients (keys limits.*, beside the contract's Limits): how long a request
// body may take to arrive, connections per address and in all, record
// verifications at once, and wrong admin secrets per address.
type Bounds struct {
	BodyReadFloorS         int
	BodyReadMinBytesPerS   int
	ConnectionsPerAddress  int
	Connections            int
	RecordVerifications    int
	AdminFailuresPerMinute int
	// DemoConcurrentCalls is how many model calls one demo token runs at
	// once (limits.demo_concurrent_calls).
	DemoConcurrentCalls int
	// LiveIdleS is how long a live socket may send no audio
	// (limits.live_idle_s).
	LiveIdleS int
	// LiveSpeechIdleS is how long a live socket may go without speech
	// (limits.live_speech_idle_s).
	LiveSpeechIdleS int
	// BodyMemoryMB bounds the request bodies held at once, in all
	// (limits.body_memory_mb).
	BodyMemoryMB int
	// DemoModelCalls is how many chat completions demo tokens together
	// run at once (limits.demo_model_calls; 0: the model's sequences less
	// one).
	DemoModelCalls int
}

// Receipts bound the stored model-call receipts.
type Receipts struct {
	RetentionDays int
	Max           int
}

// Models names the model files the box loads.
type Models struct {
	LLM      LLMModel
	ASR      ModelFile
	VAD      ModelFile
	Embedder ModelFile
	Reranker ModelFile
	// Diarizer is the segmentation network (pyannote segmentation-3.0
	// converted to GGUF); DiarizerEmbedding the speaker-embedding network
	// (WeSpeaker ResNet34 converted to GGUF). Both or neither: without
	// them pass 2 diarizes with the model-free boxd-classical-1.
	Diarizer          ModelFile
	DiarizerEmbedding ModelFile
	// Mirror is the base URL `boxd models pull NAME` fetches the
	// catalogue's files from (MIRROR/FILE) instead of their publishers'
	// URLs, for boxes without internet ("": the publishers').
	Mirror string
}

// ModelFile is one optional model file.
type ModelFile struct {
	Path string
}

// LLMModel is the chat model: its file, the id clients send, and its context.
type LLMModel struct {
	Path string
	ID   string
	// Aliases are more names clients may send as model (besides ID and
	// the file's own name).
	Aliases       []string
	ContextLength int
	Parallel      int
	Template      string
	// Projector is the vision projector (mmproj GGUF) made for the chat
	// model: with it the model reads images.
	Projector string
}

// ASR tunes live speech recognition.
type ASR struct {
	BeamSize      int
	PartialStepMS int
	MaxSentenceS  int
	// Threads is the CPU threads Whisper computes with (0: the default
	// split, see Threads).
	Threads int
	// Parallel is how many transcriptions decode at once, their decoder
	// steps batched into one graph.
	Parallel int
	// FlashAttention runs Whisper's attention as ggml's flash attention:
	// "auto" (on when Whisper's layers are on a GPU), "on" or "off".
	FlashAttention string
}

// Diarize tunes pass 2's diarization (who spoke when, after a clinical or
// sales session).
type Diarize struct {
	// MinSpeakers and MaxSpeakers bound the speakers a diarization finds
	// (diarize.min_speakers, diarize.max_speakers).
	MinSpeakers, MaxSpeakers int
	// MaxAudioS bounds the audio a session keeps in memory for pass 2
	// (diarize.max_audio_s): 32,000 bytes a second.
	MaxAudioS int
}

// A11y tunes the accessibility audit.
type A11y struct {
	// AxeDir holds the rule engine, axe-core (axe.min.js and its
	// package.json).
	AxeDir string
}

// DocReader tunes the document reader.
type DocReader struct {
	// MaxPages is the most pages one call reads (the hosted limit, 10,
	// by default; a self-hosted operator may raise it).
	MaxPages int
}

// Retrieval tunes evidence retrieval.
type Retrieval struct {
	// Persist keeps indexes in the state directory across restarts,
	// without the hour's expiry (a self-hosted box's choice).
	Persist bool
	// MaxIndexes, IndexesPerKey, DemoIndexes and IndexesPerDemo bound
	// the indexes held: on the box, per key, by all demo sessions
	// together, per demo session.
	MaxIndexes     int
	IndexesPerKey  int
	DemoIndexes    int
	IndexesPerDemo int
}

// LLM tunes the chat model's runtime.
type LLM struct {
	// Threads is the CPU threads the chat model computes with (0: the
	// default split, see Threads).
	Threads int
}

// Threads splits cpus CPU threads between the chat model and Whisper so
// that, running together, they never use more threads than there are CPUs:
// ggml's worker threads spin between operations, and two engines with a
// thread per CPU each fight over every core (a chat answer took 100 times
// longer beside a live session on 2 cores). A setting above 0 is taken as
// given; an engine that is not loaded takes no share. Each gets at least
// one thread.
func (c *Config) Threads(cpus int) (llm, asr int) {
	hasLLM, hasASR := c.Models.LLM.Path != "", c.Models.ASR.Path != ""
	llm, asr = c.LLM.Threads, c.ASR.Threads
	switch {
	case llm > 0 && asr > 0:
	case llm > 0:
		asr = max(1, cpus-llm)
	case asr > 0:
		llm = max(1, cpus-asr)
	case hasLLM && hasASR:
		asr = max(1, cpus/2)
		llm = max(1, cpus-asr)
	default:
		llm, asr = max(1, cpus), max(1, cpus)
	}
	return llm, asr
}

// Outbound governs the fetches site checks and audits make.
type Outbound struct {
	AllowPrivate bool
	AllowCIDRs   []string
	CAFile       string
}

// PackagedVAD is where the .deb installs Silero VAD; models.vad.path
// defaults to it.
const PackagedVAD = "/usr/share/boxd/models/ggml-silero-v6.2.0.bin"

// VADPath is the Silero VAD file to load: models.vad.path, else the
// packaged one when it exists ("" when neither).
func (c *Config) VADPath() string {
	if c.Models.VAD.Path != "" {
		return c.Models.VAD.Path
	}
	if _, err := os.Stat(PackagedVAD); err == nil {
		return PackagedVAD
	}
	return ""
}

// GPU holds the accelerator settings.
type GPU struct {
	// Layers is the number of model layers offloaded to the GPU: -1 picks
	// from free GPU memory, 0 keeps everything on the CPU.
	Layers int
	// LibraryPath is where the ggml GPU backend libraries (make cuda) live.
	LibraryPath string
}

// Source reports where the value of key came from: "default", "file PATH",
// "env BOXD_…" or "flag --…".
func (c *Config) Source(key string) string {
	if s, ok := c.sources[key]; ok {
		return s
	}
	return "default"
}

type kind int

const (
	kindString kind = iota
	kindInt
	kindBool
	kindList
)

func (k kind) want() string {
	switch k {
	case kindInt:
		return "a whole number"
	case kindBool:
		return "true or false"
	case kindList:
		return "a list of strings"
	default:
		return "a string"
	}
}

// setting describes one configuration key.
type setting struct {
	key    string
	kind   kind
	def    any
	usage  string
	secret bool // never on the command line, never printed
	bools  bool // a kindString that takes true and false as "on" and "off" (it was a bool once)
	min    int  // inclusive bounds for kindInt
	max    int
	field  func(c *Config) any // pointer to the Config field
	check  func(v any) error   // optional extra validation of the typed value
}

// env is the environment variable of a key: BOXD_ + upper case, dots to _.
func (s setting) env() string {
	return "BOXD_" + strings.ToUpper(strings.ReplaceAll(s.key, ".", "_"))
}

// flag is the command-line flag of a key: dots and underscores to dashes.
func (s setting) flag() string {
	return strings.NewReplacer(".", "-", "_", "-").Replace(s.key)
}

// settings is the table of every setting: the core ones, then the
// tool families' (families.go).
var settings = slices.Concat(coreSettings, familySettings)

var coreSettings = []setting{
	{key: "listen", kind: kindString, def: "127.0.0.1:8445", usage: "address to listen on (host:port)",
		field: func(c *Config) any { return &c.Listen }, check: checkListen},
	{key: "allow_non_loopback", kind: kindBool, def: false, usage: "allow listening on an address other than loopback",
		field: func(c *Config) any { return &c.AllowNonLoopback }},
	{key: "state_dir", kind: kindString, def: "/var/lib/boxd", usage: "state directory (signing key, key store, model hashes, demo recordings; models/ for boxd models pull)",
		field: func(c *Config) any { return &c.StateDir }, check: nonEmpty},
	{key: "data_dir", kind: kindString, def: "/usr/share/boxd/data", usage: "reference data directory (ICD-10-CM, RxNorm, WCAG)",
		field: func(c *Config) any { return &c.DataDir }, check: nonEmpty},
	{key: "origins", kind: kindList, def: []string{}, usage: "allowed browser origins besides localhost and 127.0.0.1 (comma-separated)",
		field: func(c *Config) any { return &c.Origins }, check: checkOrigins},
	{key: "allowed_hosts", kind: kindList, def: []string{}, usage: "host names clients may send in Host besides localhost, loopback addresses and the listen address (comma-separated)",
		field: func(c *Config) any { return &c.AllowedHosts }, check: checkHosts},
	{key: "admin_secret", kind: kindString, def: "", secret: true,
		field: func(c *Config) any { return (*string)(&c.AdminSecret) }, check: checkSecret},
	{key: "admin_secret_file", kind: kindString, def: "", usage: "file holding the admin secret",
		field: func(c *Config) any { return &c.AdminSecretFile }},
	{key: "shutdown_grace_s", kind: kindInt, def: 30, min: 1, max: 600, usage: "seconds in-flight requests and live sessions get to finish on SIGTERM",
		field: func(c *Config) any { return &c.ShutdownGraceS }},
	{key: "log.level", kind: kindString, def: "info", usage: "log level: debug, info, warn or error",
		field: func(c *Config) any { return &c.Log.Level }, check: oneOf("debug", "info", "warn", "error")},
	{key: "log.format", kind: kindString, def: "json", usage: "log format: json or text",
		field: func(c *Config) any { return &c.Log.Format }, check: oneOf("json", "text")},
	{key: "limits.sessions_per_address_per_hour", kind: kindInt, def: 1000, min: 1, max: 1_000_000, usage: "demo sessions per client address per hour",
		field: func(c *Config) any { return &c.Limits.SessionsPerAddressPerHour }},
	{key: "limits.sessions_per_hour", kind: kindInt, def: 1000, min: 1, max: 1_000_000, usage: "demo sessions per hour in total",
		field: func(c *Config) any { return &c.Limits.SessionsPerHour }},
	{key: "limits.session_lifetime_s", kind: kindInt, def: 28800, min: 60, max: 604800, usage: "demo session lifetime in seconds",
		field: func(c *Config) any { return &c.Limits.SessionLifetimeS }},
	{key: "limits.live_cap", kind: kindInt, def: 4, min: 1, max: 256, usage: "concurrent live audio sessions (global)",
		field: func(c *Config) any { return &c.Limits.LiveCap }},
	{key: "limits.audio_budget_s", kind: kindInt, def: 3600, min: 1, max: 86400, usage: "demo session audio budget in seconds",
		field: func(c *Config) any { return &c.Limits.AudioBudgetS }},
	{key: "limits.token_budget", kind: kindInt, def: 200000, min: 1, max: 5_000_000, usage: "demo session budget of generated tokens",
		field: func(c *Config) any { return &c.Limits.TokenBudget }},
	{key: "limits.stop_reserve_tokens", kind: kindInt, def: 2000, min: 0, max: 100000, usage: "tokens a live session keeps back for its stop artifact",
		field: func(c *Config) any { return &c.Limits.StopReserveTokens }},
	{key: "limits.require_synthetic", kind: kindBool, def: false, usage: "routes that take the caller's own data (documents, files, a page's HTML) need synthetic: true, confirming it holds no real personal or confidential data: on for a hosted demo deployment, off for a box serving its own office",
		field: func(c *Config) any { return &c.Limits.RequireSynthetic }},
	{key: "limits.demo_concurrent_calls", kind: kindInt, def: 2, min: 1, max: 64, usage: "model calls (chat completions) one demo token may run at once; more answer 429",
		field: func(c *Config) any { return &c.Bounds.DemoConcurrentCalls }},
	{key: "limits.live_idle_s", kind: kindInt, def: 60, min: 5, max: 3600, usage: "seconds a live socket may send no audio before it is closed (4408) to free its live slot",
		field: func(c *Config) any { return &c.Bounds.LiveIdleS }},
	{key: "limits.live_speech_idle_s", kind: kindInt, def: 120, min: 10, max: 3600, usage: "seconds a live socket may go without speech (no sentence recognised) before it is closed (4408) to free its live slot",
		field: func(c *Config) any { return &c.Bounds.LiveSpeechIdleS }},
	{key: "limits.body_memory_mb", kind: kindInt, def: 256, min: 16, max: 1 << 20, usage: "MiB of request bodies held at once, in all, counted as they arrive; a read over it gets 503 with Retry-After",
		field: func(c *Config) any { return &c.Bounds.BodyMemoryMB }},
	{key: "limits.demo_model_calls", kind: kindInt, def: 0, min: 0, max: 64, usage: "chat completions all demo tokens together run at once (503 beyond); 0: the chat model's parallel sequences less one, so a developer key always finds one",
		field: func(c *Config) any { return &c.Bounds.DemoModelCalls }},
	{key: "limits.body_read_floor_s", kind: kindInt, def: 10, min: 1, max: 600, usage: "seconds any request body may take to arrive, plus its size at limits.body_read_min_bytes_per_s; slower bodies get 408",
		field: func(c *Config) any { return &c.Bounds.BodyReadFloorS }},
	{key: "limits.body_read_min_bytes_per_s", kind: kindInt, def: 65536, min: 1024, max: 1 << 30, usage: "slowest rate (bytes per second) a request body is read at beyond the floor",
		field: func(c *Config) any { return &c.Bounds.BodyReadMinBytesPerS }},
	{key: "limits.connections_per_address", kind: kindInt, def: 256, min: 1, max: 1_000_000, usage: "open connections one client address (IPv4 address, IPv6 /64) may hold; more get 429",
		field: func(c *Config) any { return &c.Bounds.ConnectionsPerAddress }},
	{key: "limits.connections", kind: kindInt, def: 0, min: 0, max: 1_000_000, usage: "open connections in all; 0: from the process's file limit, (RLIMIT_NOFILE - 256) / 2; more get 503",
		field: func(c *Config) any { return &c.Bounds.Connections }},
	{key: "limits.record_verifications", kind: kindInt, def: 4, min: 1, max: 256, usage: "POST /record/verify requests served at once; more get 503 with Retry-After",
		field: func(c *Config) any { return &c.Bounds.RecordVerifications }},
	{key: "limits.admin_failures_per_minute", kind: kindInt, def: 10, min: 1, max: 10000, usage: "wrong admin secrets one client address may send per minute; then its admin requests get 429",
		field: func(c *Config) any { return &c.Bounds.AdminFailuresPerMinute }},
	{key: "receipts.retention_days", kind: kindInt, def: 90, min: 1, max: 3650, usage: "days model-call receipts are kept",
		field: func(c *Config) any { return &c.Receipts.RetentionDays }},
	{key: "receipts.max", kind: kindInt, def: 100000, min: 100, max: 100_000_000, usage: "most model-call receipts kept (oldest dropped first)",
		field: func(c *Config) any { return &c.Receipts.Max }},
	{key: "models.llm.path", kind: kindString, def: "", usage: "chat model GGUF file",
		field: func(c *Config) any { return &c.Models.LLM.Path }, check: checkModelFile},
	{key: "models.llm.id", kind: kindString, def: "model-27b", usage: "chat model id clients send as model",
		field: func(c *Config) any { return &c.Models.LLM.ID }, check: checkModelID},
	{key: "models.llm.aliases", kind: kindList, def: []string{}, usage: "more names clients may send as model for the chat model (comma-separated), e.g. the name an app used with ollama; the file's own name (without .gguf) is always one",
		field: func(c *Config) any { return &c.Models.LLM.Aliases }, check: checkModelIDs},
	{key: "models.llm.context_length", kind: kindInt, def: 8192, min: 256, max: 1 << 20, usage: "context one request may use (prompt and answer); allocated per parallel sequence",
		field: func(c *Config) any { return &c.Models.LLM.ContextLength }},
	{key: "models.llm.parallel", kind: kindInt, def: 4, min: 1, max: 64, usage: "parallel sequences (concurrent requests) in one context",
		field: func(c *Config) any { return &c.Models.LLM.Parallel }},
	{key: "models.llm.template", kind: kindString, def: "auto", usage: "chat template family: auto (from the file), gemma, llama3, chatml or mistral",
		field: func(c *Config) any { return &c.Models.LLM.Template }, check: oneOf("auto", "gemma", "llama3", "chatml", "mistral")},
	{key: "models.llm.projector", kind: kindString, def: "", usage: "vision projector (mmproj GGUF) made for the chat model, e.g. Gemma 3's; with it chat completions read image parts and the document reader re-reads hard regions",
		field: func(c *Config) any { return &c.Models.LLM.Projector }, check: checkModelFile},
	{key: "models.asr.path", kind: kindString, def: "", usage: "Whisper GGUF file (boxd models convert)",
		field: func(c *Config) any { return &c.Models.ASR.Path }, check: checkModelFile},
	{key: "models.vad.path", kind: kindString, def: "", usage: "Silero VAD file (ggml-silero-v6.2.0.bin); empty: the packaged " + PackagedVAD,
		field: func(c *Config) any { return &c.Models.VAD.Path }, check: checkModelFile},
	{key: "asr.beam_size", kind: kindInt, def: 5, min: 1, max: 8, usage: "beam width for finished sentences (1: greedy, faster on a CPU)",
		field: func(c *Config) any { return &c.ASR.BeamSize }},
	{key: "asr.partial_step_ms", kind: kindInt, def: 1000, min: 200, max: 10000, usage: "new audio (ms) that triggers a partial re-decode of the sentence in progress",
		field: func(c *Config) any { return &c.ASR.PartialStepMS }},
	{key: "asr.threads", kind: kindInt, def: 0, min: 0, max: 1024, usage: "CPU threads for Whisper (0: half the CPUs when a chat model is loaded too, else all)",
		field: func(c *Config) any { return &c.ASR.Threads }},
	{key: "llm.threads", kind: kindInt, def: 0, min: 0, max: 1024, usage: "CPU threads for the chat model (0: the CPUs Whisper does not take, else all, and fewer while fewer decode faster on a busy machine)",
		field: func(c *Config) any { return &c.LLM.Threads }},
	{key: "a11y.axe_dir", kind: kindString, def: "/usr/share/boxd/axe-core", usage: "directory holding the accessibility rule engine, axe-core (axe.min.js and package.json); without it /a11y/audit answers 503",
		field: func(c *Config) any { return &c.A11y.AxeDir }},
	{key: "docreader.max_pages", kind: kindInt, def: 10, min: 1, max: 2000, usage: "pages one /docreader/read (or chart, fill source) call reads; a longer PDF answers 413 (10 is the hosted limit; each page may take up to a minute of the reader's time)",
		field: func(c *Config) any { return &c.DocReader.MaxPages }},
	{key: "retrieval.persist", kind: kindBool, def: false, usage: "keep retrieval indexes in state_dir/retrieval across restarts, without the hour's expiry (self-hosted boxes)",
		field: func(c *Config) any { return &c.Retrieval.Persist }},
	{key: "retrieval.max_indexes", kind: kindInt, def: 64, min: 1, max: 100000, usage: "retrieval indexes held on the box in all; a new one beyond gets 503",
		field: func(c *Config) any { return &c.Retrieval.MaxIndexes }},
	{key: "retrieval.indexes_per_key", kind: kindInt, def: 8, min: 1, max: 10000, usage: "retrieval indexes one developer key holds; its next one replaces its oldest",
		field: func(c *Config) any { return &c.Retrieval.IndexesPerKey }},
	{key: "retrieval.demo_indexes", kind: kindInt, def: 16, min: 0, max: 100000, usage: "retrieval indexes all demo sessions together hold (at most retrieval.max_indexes less retrieval.indexes_per_key, the rest kept for keys); beyond, 429 until one expires",
		field: func(c *Config) any { return &c.Retrieval.DemoIndexes }},
	{key: "retrieval.indexes_per_demo_session", kind: kindInt, def: 2, min: 1, max: 10000, usage: "retrieval indexes one demo session holds; its next one replaces its oldest",
		field: func(c *Config) any { return &c.Retrieval.IndexesPerDemo }},
	{key: "asr.parallel", kind: kindInt, def: 4, min: 1, max: 16, usage: "transcriptions (live sessions' sentences, batch files) decoded at once, their decoder steps batched into one graph; more wait their turn",
		field: func(c *Config) any { return &c.ASR.Parallel }},
	{key: "asr.flash_attention", kind: kindString, def: "auto", bools: true, usage: "run Whisper's attention as ggml's flash attention: auto (on when Whisper's layers are on a GPU, where it made large-v3 1.14x faster end to end on an H200; off on a CPU, where it made the encoder 1.7x slower), on or off",
		field: func(c *Config) any { return &c.ASR.FlashAttention }, check: oneOf("auto", "on", "off")},
	{key: "asr.max_sentence_s", kind: kindInt, def: 20, min: 5, max: 28, usage: "speech without a pause is cut into sentences of at most this many seconds",
		field: func(c *Config) any { return &c.ASR.MaxSentenceS }},
	{key: "models.embedder.path", kind: kindString, def: "", usage: "embedding model GGUF file",
		field: func(c *Config) any { return &c.Models.Embedder.Path }, check: checkModelFile},
	{key: "models.reranker.path", kind: kindString, def: "", usage: "reranker GGUF file",
		field: func(c *Config) any { return &c.Models.Reranker.Path }, check: checkModelFile},
	{key: "models.diarizer.path", kind: kindString, def: "", usage: "speaker segmentation GGUF (pyannote segmentation-3.0 converted by boxd models convert); set with models.diarizer.embedding_path, or leave both empty for the model-free diarizer boxd-classical-1",
		field: func(c *Config) any { return &c.Models.Diarizer.Path }, check: checkModelFile},
	{key: "models.diarizer.embedding_path", kind: kindString, def: "", usage: "speaker embedding GGUF (WeSpeaker ResNet34 converted by boxd models convert), used with models.diarizer.path",
		field: func(c *Config) any { return &c.Models.DiarizerEmbedding.Path }, check: checkModelFile},
	{key: "diarize.min_speakers", kind: kindInt, def: 1, min: 1, max: 16, usage: "fewest speakers pass 2's diarization finds",
		field: func(c *Config) any { return &c.Diarize.MinSpeakers }},
	{key: "diarize.max_speakers", kind: kindInt, def: 4, min: 1, max: 16, usage: "most speakers pass 2's diarization finds (at least diarize.min_speakers)",
		field: func(c *Config) any { return &c.Diarize.MaxSpeakers }},
	{key: "diarize.max_audio_s", kind: kindInt, def: 3600, min: 60, max: 14400, usage: "seconds of a session's audio kept in memory (never on disk) for pass 2's diarization, 32,000 bytes a second; a longer session's pass 2 falls back to the live transcript",
		field: func(c *Config) any { return &c.Diarize.MaxAudioS }},
	{key: "models.mirror", kind: kindString, def: "", usage: "base URL of a mirror on your network that serves the model catalogue's files under their names; boxd models pull NAME fetches MIRROR/FILE instead of the publisher's URL (boxes without internet)",
		field: func(c *Config) any { return &c.Models.Mirror }, check: checkMirror},
	{key: "outbound.allow_private", kind: kindBool, def: false, usage: "let site checks and audits fetch private, loopback and link-local addresses (self-hosted tests only)",
		field: func(c *Config) any { return &c.Outbound.AllowPrivate }},
	{key: "outbound.allow_cidrs", kind: kindList, def: []string{}, usage: "address ranges outbound fetches may reach even when private (comma-separated CIDRs)",
		field: func(c *Config) any { return &c.Outbound.AllowCIDRs }, check: checkCIDRs},
	{key: "outbound.ca_file", kind: kindString, def: "", usage: "PEM file of extra certificate authorities outbound fetches trust (an office's internal CA)",
		field: func(c *Config) any { return &c.Outbound.CAFile }, check: checkModelFile},
	{key: "audit.allow_private", kind: kindBool, def: false, usage: "let endpoint audits reach plain-http, loopback and private endpoints (an ollama serve or llama-server on the LAN)",
		field: func(c *Config) any { return &c.Audit.AllowPrivate }},
	{key: "audit.targets", kind: kindList, def: []string{}, usage: "endpoints listed as audit demo targets, each id|base_url|model|claimed_model (claimed_model optional)",
		field: func(c *Config) any { return &c.Audit.Targets }, check: checkAuditTargets},
	{key: "audit.record_at_start", kind: kindBool, def: true, usage: "record a reference fixture of the chat model at start when the box has none (seconds on a GPU; see README)",
		field: func(c *Config) any { return &c.Audit.RecordAtStart }},
	{key: "gpu.layers", kind: kindInt, def: -1, min: -1, max: 10000, usage: "model layers on the GPU: -1 auto, 0 CPU only",
		field: func(c *Config) any { return &c.GPU.Layers }},
	{key: "gpu.library_path", kind: kindString, def: "/usr/lib/boxd/lib/ollama", usage: "directory of the ggml GPU backend libraries",
		field: func(c *Config) any { return &c.GPU.LibraryPath }},
}

// Keys lists every setting name in table order.
func Keys() []string {
	keys := make([]string, len(settings))
	for i, s := range settings {
		keys[i] = s.key
	}
	return keys
}

// EnvName is the environment variable that sets key.
func EnvName(key string) string {
	return setting{key: key}.env()
}

// FlagName is the command-line flag (without dashes) that sets key; "" for
// secrets, which are never taken from the command line.
func FlagName(key string) string {
	for _, s := range settings {
		if s.key == key && !s.secret {
			return s.flag()
		}
	}
	return ""
}

// Defaults returns the built-in configuration.
func Defaults() *Config {
	c := &Config{sources: map[string]string{}}
	for _, s := range settings {
		if err := s.assign(c, s.def); err != nil {
			panic(fmt.Sprintf("configs: default of %s: %v", s.key, err))
		}
	}
	return c
}

// assign converts raw strictly to the setting's type and stores it.
func (s setting) assign(c *Config, raw any) error {
	switch p := s.field(c).(type) {
	case *string:
		v, ok := raw.(string)
		if b, isBool := raw.(bool); isBool && s.bools {
			v, ok = map[bool]string{true: "on", false: "off"}[b], true
		} else if ok && s.bools {
			if b, err := strconv.ParseBool(strings.TrimSpace(v)); err == nil {
				v = map[bool]string{true: "on", false: "off"}[b]
			}
		}
		if !ok {
			return fmt.Errorf("want %s, got %s", s.kind.want(), describe(raw))
		}
		*p = strings.TrimSpace(v)
	case *bool:
		v, err := toBool(raw)
		if err != nil {
			return err
		}
		*p = v
	case *int:
		v, err := toInt(raw)
		if err != nil {
			return err
		}
		if v < int64(s.min) || v > int64(s.max) {
			return fmt.Errorf("%d is out of range: use %d to %d", v, s.min, s.max)
		}
		*p = int(v)
	case *[]string:
		v, err := toList(raw)
		if err != nil {
			return err
		}
		*p = v
	default:
		return fmt.Errorf("internal: unsupported field type %T", p)
	}
	if s.check != nil {
		return s.check(reflectValue(s.field(c)))
	}
	return nil
}

func reflectValue(p any) any {
	switch p := p.(type) {
	case *string:
		return *p
	case *bool:
		return *p
	case *int:
		return *p
	case *[]string:
		return *p
	}
	return nil
}

func describe(raw any) string {
	switch v := raw.(type) {
	case nil:
		return "nothing"
	case string:
		return strconv.Quote(v)
	case []any, []string:
		return "a list"
	case map[string]any:
		return "a mapping"
	default:
		return fmt.Sprintf("%v", v)
	}
}

func toBool(raw any) (bool, error) {
	switch v := raw.(type) {
	case bool:
		return v, nil
	case string:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true", "1", "yes", "on":
			return true, nil
		case "false", "0", "no", "off":
			return false, nil
		}
	}
	return false, fmt.Errorf("want true or false, got %s", describe(raw))
}

func toInt(raw any) (int64, error) {
	switch v := raw.(type) {
	case int:
		return int64(v), nil
	case int64:
		return v, nil
	case int32:
		return int64(v), nil
	case uint64:
		if v <= 1<<62 {
			return int64(v), nil
		}
	case float64:
		if v == float64(int64(v)) {
			return int64(v), nil
		}
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(strings.ReplaceAll(v, "_", "")), 10, 64)
		if err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("want a whole number, got %s", describe(raw))
}

func toList(raw any) ([]string, error) {
	var items []string
	switch v := raw.(type) {
	case nil:
		return []string{}, nil
	case []string:
		items = v
	case []any:
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("item %d: want a string, got %s", i+1, describe(e))
			}
			items = append(items, s)
		}
	case string:
		items = strings.Split(v, ",")
	default:
		return nil, fmt.Errorf("want a list of strings, got %s", describe(raw))
	}
	out := []string{}
	for _, s := range items {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

func nonEmpty(v any) error {
	if v.(string) == "" {
		return fmt.Errorf("must not be empty")
	}
	return nil
}

func oneOf(allowed ...string) func(any) error {
	return func(v any) error {
		for _, a := range allowed {
			if v.(string) == a {
				return nil
			}
		}
		return fmt.Errorf("%q is not one of %s", v, strings.Join(allowed, ", "))
	}
}

func checkListen(v any) error {
	host, port, err := net.SplitHostPort(v.(string))
	if err != nil {
		return fmt.Errorf("%q is not host:port (for example 127.0.0.1:8445)", v)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("port %q must be a number from 0 to 65535", port)
	}
	if strings.ContainsAny(host, " /") {
		return fmt.Errorf("host %q is not a host name or IP address", host)
	}
	return nil
}

func checkCIDRs(v any) error {
	for _, c := range v.([]string) {
		if _, err := netip.ParsePrefix(c); err != nil {
			return fmt.Errorf("%q is not a CIDR range such as 192.168.1.0/24 or 127.0.0.1/32", c)
		}
	}
	return nil
}

func checkOrigins(v any) error {
	for _, o := range v.([]string) {
		if err := CheckOrigin(o); err != nil {
			return err
		}
	}
	return nil
}

func checkHosts(v any) error {
	for _, h := range v.([]string) {
		if err := CheckHost(h); err != nil {
			return err
		}
	}
	return nil
}

// CheckHost accepts a host name (box.lan) or an IP address as a Host
// header names it, without scheme, port or path.
func CheckHost(h string) error {
	if _, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
		return nil
	}
	ok := h != "" && len(h) <= 253 && !strings.HasPrefix(h, ".") && !strings.HasPrefix(h, "-") && !strings.Contains(h, "..")
	for _, c := range h {
		ok = ok && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_')
	}
	if !ok {
		return fmt.Errorf("%q is not a host name: write the name alone, without scheme, port, path or wildcard, for example box.lan", h)
	}
	return nil
}

// CheckOrigin accepts a browser origin: scheme http or https, a host, an
// optional port, and nothing else.
func CheckOrigin(o string) error {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return fmt.Errorf("%q is not an origin: write scheme://host[:port], for example https://app.example.com", o)
	}
	if u.Path == "/" {
		return fmt.Errorf("%q: an origin has no path; drop the trailing /", o)
	}
	return nil
}

// minSecretLen is the shortest admin secret accepted.
const minSecretLen = 16

func checkSecret(v any) error {
	if s := v.(string); s != "" && len(s) < minSecretLen {
		return fmt.Errorf("is %d characters long; use at least %d random characters", len(s), minSecretLen)
	}
	return nil
}

// CheckMirror checks a models.mirror value given elsewhere (a flag).
func CheckMirror(m string) error { return checkMirror(m) }

// checkMirror accepts "" or an http(s) URL with a host and no query or
// fragment (files are fetched at MIRROR/FILE).
func checkMirror(v any) error {
	m := v.(string)
	if m == "" {
		return nil
	}
	u, err := url.Parse(m)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return fmt.Errorf("%q is not a mirror base URL: write http(s)://host[:port]/path, for example http://mirror.lan/boxd-models", redactURL(m))
	}
	return nil
}

// redactURL drops a URL's user information, query and fragment (where
// credentials travel) for a message.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

func checkModelID(v any) error {
	id := v.(string)
	if id == "" || len(id) > 128 || strings.ContainsAny(id, " \t\r\n") {
		return fmt.Errorf("%q must be 1 to 128 characters without spaces", id)
	}
	return nil
}

func checkModelIDs(v any) error {
	for _, id := range v.([]string) {
		if err := checkModelID(id); err != nil {
			return err
		}
	}
	return nil
}

func checkModelFile(v any) error {
	path := v.(string)
	if path == "" {
		return nil // not configured
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("file %s does not exist", path)
	case err != nil:
		return fmt.Errorf("cannot read %s: %w", path, err)
	case !st.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cannot open %s: %w", path, err)
	}
	return f.Close()
}
