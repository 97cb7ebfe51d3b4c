package configs

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// load runs Load the way `boxd serve` does: flags registered, then parsed.
func load(t *testing.T, file string, args ...string) (*Config, error) {
	t.Helper()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	RegisterFlags(fs)
	if file != "" {
		args = append([]string{"--config", file}, args...)
	} else {
		// Keep the machine's /etc/boxd/boxd.yaml out of unit tests.
		args = append([]string{"--config", filepath.Join(t.TempDir(), "none.yaml")}, args...)
		fs.Lookup(ConfigFlag).Changed = false
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if file == "" {
		fs.Lookup(ConfigFlag).Changed = false
	}
	return Load(fs)
}

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "boxd.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDefaultYAMLListsEverySettingWithItsDefault(t *testing.T) {
	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(DefaultYAML)); err != nil {
		t.Fatalf("boxd.yaml does not parse: %v", err)
	}
	got := v.AllKeys()
	want := Keys()
	if len(got) != len(want) {
		t.Errorf("boxd.yaml has %d keys, the settings table %d", len(got), len(want))
	}
	for _, s := range settings {
		if !v.IsSet(s.key) {
			t.Errorf("boxd.yaml lacks %s", s.key)
			continue
		}
		var c Config
		if err := s.assign(&c, v.Get(s.key)); err != nil {
			t.Errorf("boxd.yaml %s: %v", s.key, err)
			continue
		}
		var d Config
		if err := s.assign(&d, s.def); err != nil {
			t.Fatal(err)
		}
		if g, w := reflectValue(s.field(&c)), reflectValue(s.field(&d)); !reflect.DeepEqual(g, w) {
			t.Errorf("boxd.yaml %s = %v, built-in default %v", s.key, g, w)
		}
		if !bytes.Contains(DefaultYAML, []byte(s.key[strings.LastIndex(s.key, ".")+1:]+":")) {
			t.Errorf("boxd.yaml does not spell %s", s.key)
		}
	}
	for _, k := range got {
		if _, ok := lookup(k); !ok {
			t.Errorf("boxd.yaml has unknown key %s", k)
		}
	}
}

func TestDefaultsMatchContractSelfHostedLimits(t *testing.T) {
	c, err := load(t, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.File != "" {
		t.Errorf("File = %q with no config file", c.File)
	}
	want := Limits{SessionsPerAddressPerHour: 1000, SessionsPerHour: 1000, SessionLifetimeS: 28800, LiveCap: 4, AudioBudgetS: 3600, TokenBudget: 200000, StopReserveTokens: 2000}
	if c.Limits != want {
		t.Errorf("limits = %+v, want %+v", c.Limits, want)
	}
	if c.Listen != "127.0.0.1:8445" || c.AllowNonLoopback || c.StateDir != "/var/lib/boxd" || c.GPU.Layers != -1 || c.Models.LLM.ID != "model-27b" {
		t.Errorf("unexpected defaults: %+v", c)
	}
	if c.AdminSecret.IsSet() {
		t.Error("admin secret set by default")
	}
}

func TestTheShippedFileLoadsToTheDefaults(t *testing.T) {
	c, err := load(t, "boxd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d := Defaults()
	for _, k := range Keys() {
		s, _ := lookup(k)
		if g, w := reflectValue(s.field(c)), reflectValue(s.field(d)); !reflect.DeepEqual(g, w) && k != "state_dir" && k != "data_dir" {
			t.Errorf("%s = %v, want %v", k, g, w)
		}
		if got := c.Source(k); got != "file boxd.yaml" {
			t.Errorf("source of %s = %q", k, got)
		}
	}
}

func TestPrecedenceFileEnvFlag(t *testing.T) {
	file := writeFile(t, "listen: 127.0.0.1:1001\nmodels:\n  llm:\n    id: from-file\nlimits:\n  live_cap: 5\n  token_budget: 1000\norigins: [https://file.example]\n")
	cases := []struct {
		name      string
		env       map[string]string
		args      []string
		listen    string
		id        string
		liveCap   int
		tokens    int
		origins   []string
		srcListen string
	}{
		{name: "file only", listen: "127.0.0.1:1001", id: "from-file", liveCap: 5, tokens: 1000, origins: []string{"https://file.example"}, srcListen: "file " + file},
		{name: "env beats file",
			env:    map[string]string{"BOXD_LISTEN": "127.0.0.1:1002", "BOXD_MODELS_LLM_ID": "from-env", "BOXD_LIMITS_LIVE_CAP": "6", "BOXD_ORIGINS": "https://a.example, https://b.example:8443"},
			listen: "127.0.0.1:1002", id: "from-env", liveCap: 6, tokens: 1000, origins: []string{"https://a.example", "https://b.example:8443"}, srcListen: "env BOXD_LISTEN"},
		{name: "flag beats env",
			env:    map[string]string{"BOXD_LISTEN": "127.0.0.1:1002", "BOXD_MODELS_LLM_ID": "from-env", "BOXD_LIMITS_LIVE_CAP": "6"},
			args:   []string{"--listen", "127.0.0.1:1003", "--models-llm-id", "from-flag", "--limits-live-cap", "7", "--origins", "http://c.example"},
			listen: "127.0.0.1:1003", id: "from-flag", liveCap: 7, tokens: 1000, origins: []string{"http://c.example"}, srcListen: "flag --listen"},
		{name: "flag beats file without env",
			args:   []string{"--limits-token-budget", "42"},
			listen: "127.0.0.1:1001", id: "from-file", liveCap: 5, tokens: 42, origins: []string{"https://file.example"}, srcListen: "file " + file},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			c, err := load(t, file, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if c.Listen != tc.listen || c.Models.LLM.ID != tc.id || c.Limits.LiveCap != tc.liveCap || c.Limits.TokenBudget != tc.tokens {
				t.Errorf("got listen %s id %s live_cap %d tokens %d", c.Listen, c.Models.LLM.ID, c.Limits.LiveCap, c.Limits.TokenBudget)
			}
			if !reflect.DeepEqual(c.Origins, tc.origins) {
				t.Errorf("origins = %q, want %q", c.Origins, tc.origins)
			}
			if got := c.Source("listen"); got != tc.srcListen {
				t.Errorf("source of listen = %q, want %q", got, tc.srcListen)
			}
		})
	}
}

func TestEnvNamesFollowKeys(t *testing.T) {
	for key, want := range map[string]string{
		"listen":            "BOXD_LISTEN",
		"state_dir":         "BOXD_STATE_DIR",
		"admin_secret":      "BOXD_ADMIN_SECRET",
		"admin_secret_file": "BOXD_ADMIN_SECRET_FILE",
		"models.llm.path":   "BOXD_MODELS_LLM_PATH",
		"models.llm.id":     "BOXD_MODELS_LLM_ID",
		"gpu.layers":        "BOXD_GPU_LAYERS",
	} {
		if got := EnvName(key); got != want {
			t.Errorf("EnvName(%s) = %s, want %s", key, got, want)
		}
	}
	for key, want := range map[string]string{"listen": "listen", "state_dir": "state-dir", "models.llm.path": "models-llm-path", "gpu.layers": "gpu-layers", "admin_secret": ""} {
		if got := FlagName(key); got != want {
			t.Errorf("FlagName(%s) = %q, want %q", key, got, want)
		}
	}
}

func TestEveryKeyCanBeSetFromEnv(t *testing.T) {
	model := filepath.Join(t.TempDir(), "m.gguf")
	if err := os.WriteFile(model, []byte("GGUF"), 0o600); err != nil {
		t.Fatal(err)
	}
	values := map[string]string{
		"listen": "127.0.0.1:9", "allow_non_loopback": "true", "state_dir": "/tmp/s", "data_dir": "/tmp/d",
		"origins": "https://x.example", "allowed_hosts": "box.lan,10.0.0.5", "admin_secret": "0123456789abcdef0", "admin_secret_file": "",
		"shutdown_grace_s": "5", "log.level": "debug", "log.format": "text",
		"limits.sessions_per_address_per_hour": "11", "limits.sessions_per_hour": "12", "limits.session_lifetime_s": "600",
		"limits.live_cap": "2", "limits.audio_budget_s": "60", "limits.token_budget": "99", "limits.stop_reserve_tokens": "10", "limits.require_synthetic": "true",
		"limits.demo_concurrent_calls": "3", "limits.live_idle_s": "30", "limits.live_speech_idle_s": "90", "limits.body_memory_mb": "64", "limits.demo_model_calls": "1",
		"limits.body_read_floor_s": "2", "limits.body_read_min_bytes_per_s": "2048", "limits.connections_per_address": "3",
		"limits.connections": "40", "limits.record_verifications": "1", "limits.admin_failures_per_minute": "5",
		"receipts.retention_days": "7", "receipts.max": "1000",
		"models.llm.path": model, "models.llm.id": "m", "models.llm.aliases": "llama3.2,qwen", "models.llm.context_length": "512", "models.llm.parallel": "2", "models.llm.template": "gemma", "models.llm.projector": model,
		"models.asr.path": model, "models.vad.path": model, "models.embedder.path": model, "models.reranker.path": model, "models.diarizer.path": model, "models.diarizer.embedding_path": model, "diarize.min_speakers": "2", "diarize.max_speakers": "3", "diarize.max_audio_s": "600", "models.mirror": "http://mirror.lan/boxd-models",
		"asr.beam_size": "1", "asr.partial_step_ms": "500", "asr.max_sentence_s": "10", "asr.threads": "1", "llm.threads": "3", "asr.parallel": "2", "asr.flash_attention": "true", "retrieval.persist": "true", "retrieval.max_indexes": "32", "retrieval.indexes_per_key": "4", "retrieval.demo_indexes": "8", "retrieval.indexes_per_demo_session": "1", "a11y.axe_dir": "/opt/axe", "docreader.max_pages": "40",
		"outbound.allow_private": "true", "outbound.allow_cidrs": "127.0.0.1/32,10.0.0.0/8", "outbound.ca_file": model,
		"audit.allow_private": "true", "audit.targets": "lan|http://10.0.0.5:11434/v1|llama3.2|llama-3.2-3b", "audit.record_at_start": "false",
		"migration.candidates": "b|" + model + "|chatml", "migration.judge": "b", "migration.hour_cost": "0.85", "migration.price_table": model,
		"gpu.layers": "0", "gpu.library_path": "/opt/lib/ollama",
	}
	if len(values) != len(settings) {
		t.Fatalf("test covers %d of %d settings", len(values), len(settings))
	}
	for k, v := range values {
		t.Setenv(EnvName(k), v)
	}
	c, err := load(t, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range c.Effective() {
		if e.Source != "env "+EnvName(e.Key) {
			t.Errorf("%s: source %q", e.Key, e.Source)
		}
	}
	if c.Diarize != (Diarize{MinSpeakers: 2, MaxSpeakers: 3, MaxAudioS: 600}) || c.Models.DiarizerEmbedding.Path != model {
		t.Errorf("diarize settings not applied: %+v %+v", c.Diarize, c.Models.DiarizerEmbedding)
	}
	if m := c.Migration; len(m.Candidates) != 1 || m.Judge != "b" || m.HourDollars() != 0.85 || m.PriceTable != model {
		t.Errorf("migration settings not applied: %+v", m)
	}
	if mc, err := ParseMigrationCandidate(c.Migration.Candidates[0]); err != nil || mc.ID != "b" || mc.Template != "chatml" {
		t.Errorf("migration candidate: %+v %v", mc, err)
	}
	if c.Models.Mirror != "http://mirror.lan/boxd-models" {
		t.Errorf("models.mirror not applied: %q", c.Models.Mirror)
	}
	if len(c.AllowedHosts) != 2 || c.AllowedHosts[1] != "10.0.0.5" {
		t.Errorf("allowed_hosts not applied: %q", c.AllowedHosts)
	}
	if !c.AllowNonLoopback || c.Limits.SessionsPerHour != 12 || c.Models.Diarizer.Path != model || c.Models.LLM.Projector != model || c.GPU.LibraryPath != "/opt/lib/ollama" || c.AdminSecret.Reveal() != "0123456789abcdef0" {
		t.Errorf("env not applied: %+v", c)
	}
	if !c.Outbound.AllowPrivate || len(c.Outbound.AllowCIDRs) != 2 || c.Outbound.CAFile != model {
		t.Errorf("outbound settings not applied: %+v", c.Outbound)
	}
	if c.ASR.BeamSize != 1 || c.ASR.PartialStepMS != 500 || c.ASR.MaxSentenceS != 10 || c.ASR.Threads != 1 || c.LLM.Threads != 3 || c.ASR.Parallel != 2 || c.ASR.FlashAttention != "on" || !c.Retrieval.Persist || c.VADPath() != model {
		t.Errorf("asr settings not applied: %+v vad %q", c.ASR, c.VADPath())
	}
	if (c.Bounds != Bounds{BodyReadFloorS: 2, BodyReadMinBytesPerS: 2048, ConnectionsPerAddress: 3, Connections: 40, RecordVerifications: 1, AdminFailuresPerMinute: 5, DemoConcurrentCalls: 3, LiveIdleS: 30,
		LiveSpeechIdleS: 90, BodyMemoryMB: 64, DemoModelCalls: 1}) {
		t.Errorf("bounds not applied: %+v", c.Bounds)
	}
	if (c.Retrieval != Retrieval{Persist: true, MaxIndexes: 32, IndexesPerKey: 4, DemoIndexes: 8, IndexesPerDemo: 1}) {
		t.Errorf("retrieval settings not applied: %+v", c.Retrieval)
	}
}

func TestBadValuesStopStartUpNamingTheKey(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short")
	empty := filepath.Join(dir, "empty")
	good := filepath.Join(dir, "good")
	for p, body := range map[string]string{short: "abc\n", empty: "\n", good: "0123456789abcdef-secret\n"} {
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name string
		file string
		env  map[string]string
		args []string
		want []string // substrings of the error
	}{
		{name: "unknown key with suggestion", file: "modles:\n  llm:\n    path: x\n", want: []string{"unknown setting modles.llm.path", "did you mean models.llm.path"}},
		{name: "unknown top-level key", file: "listen_address: 1\n", want: []string{"unknown setting listen_address"}},
		{name: "group written as scalar", file: "models: foo\n", want: []string{"models is a group of settings"}},
		{name: "int as words", file: "limits:\n  live_cap: many\n", want: []string{"limits.live_cap", "want a whole number", `"many"`}},
		{name: "int out of range", file: "limits:\n  live_cap: 0\n", want: []string{"limits.live_cap", "out of range"}},
		{name: "fractional int", file: "shutdown_grace_s: 1.5\n", want: []string{"shutdown_grace_s", "whole number"}},
		{name: "bool as word", file: "allow_non_loopback: maybe\n", want: []string{"allow_non_loopback", "true or false"}},
		{name: "listen not host:port", file: "listen: localhost\n", want: []string{"listen", "host:port"}},
		{name: "listen bad port", file: "listen: 127.0.0.1:99999\n", want: []string{"listen", "0 to 65535"}},
		{name: "listen as number", file: "listen: 8445\n", want: []string{"listen", "want a string"}},
		{name: "gpu layers below -1", file: "gpu:\n  layers: -2\n", want: []string{"gpu.layers", "-1 to 10000"}},
		{name: "log level", file: "log:\n  level: loud\n", want: []string{"log.level", "not one of"}},
		{name: "flash attention word", file: "asr:\n  flash_attention: sometimes\n", want: []string{"asr.flash_attention", `"sometimes" is not one of auto, on, off`}},
		{name: "flash attention number", file: "asr:\n  flash_attention: 2\n", want: []string{"asr.flash_attention", "want a string"}},
		{name: "origin with path", file: "origins: [\"https://a.example/app\"]\n", want: []string{"origins", "not an origin"}},
		{name: "origin trailing slash", file: "origins: [\"https://a.example/\"]\n", want: []string{"origins", "trailing /"}},
		{name: "origin wildcard", file: "origins: [\"*\"]\n", want: []string{"origins", "not an origin"}},
		{name: "allowed host with scheme", file: "allowed_hosts: [\"http://box.lan\"]\n", want: []string{"allowed_hosts", "not a host name"}},
		{name: "allowed host with port", file: "allowed_hosts: [\"box.lan:8445\"]\n", want: []string{"allowed_hosts", "without scheme, port"}},
		{name: "allowed host wildcard", file: "allowed_hosts: [\"*.lan\"]\n", want: []string{"allowed_hosts", "not a host name"}},
		{name: "origin list item not string", file: "origins: [1]\n", want: []string{"origins", "item 1"}},
		{name: "missing model file", file: "models:\n  llm:\n    path: /nonexistent/model.gguf\n", want: []string{"models.llm.path", "does not exist"}},
		{name: "mirror not a URL", file: "models:\n  mirror: mirror.lan/models\n", want: []string{"models.mirror", "not a mirror base URL"}},
		{name: "mirror with a query", file: "models:\n  mirror: \"https://u:pw@mirror.lan/m?sig=abc\"\n", want: []string{"models.mirror", "https://mirror.lan/m\" is not a mirror base URL"}},
		{name: "bad cidr", file: "outbound:\n  allow_cidrs: [\"10.0.0.0/33\"]\n", want: []string{"outbound.allow_cidrs", "not a CIDR range"}},
		{name: "model path is a directory", file: "models:\n  asr:\n    path: " + dir + "\n", want: []string{"models.asr.path", "not a regular file"}},
		{name: "model id with space", file: "models:\n  llm:\n    id: \"a b\"\n", want: []string{"models.llm.id"}},
		{name: "yaml syntax", file: "listen: [\n", want: []string{"config file"}},
		{name: "short secret", env: map[string]string{"BOXD_ADMIN_SECRET": "short"}, want: []string{"admin_secret (env BOXD_ADMIN_SECRET)", "at least 16"}},
		{name: "short secret file", args: []string{"--admin-secret-file", short}, want: []string{"admin_secret_file", "at least 16"}},
		{name: "empty secret file", args: []string{"--admin-secret-file", empty}, want: []string{"admin_secret_file", "is empty"}},
		{name: "missing secret file", args: []string{"--admin-secret-file", filepath.Join(dir, "nope")}, want: []string{"admin_secret_file", "no such file"}},
		{name: "secret and file", env: map[string]string{"BOXD_ADMIN_SECRET": "0123456789abcdef"}, args: []string{"--admin-secret-file", good}, want: []string{"both set"}},
		{name: "env int", env: map[string]string{"BOXD_LIMITS_AUDIO_BUDGET_S": "1h"}, want: []string{"limits.audio_budget_s (env BOXD_LIMITS_AUDIO_BUDGET_S)", "whole number"}},
		{name: "env unknown", env: map[string]string{"BOXD_LISTN": "x"}, want: []string{"BOXD_LISTN is not a setting", "did you mean BOXD_LISTEN"}},
		{name: "flag out of range", args: []string{"--models-llm-parallel", "0"}, want: []string{"models.llm.parallel (flag --models-llm-parallel)", "out of range"}},
		{name: "max speakers zero", file: "diarize:\n  max_speakers: 0\n", want: []string{"diarize.max_speakers", "out of range: use 1 to 16"}},
		{name: "max speakers below min", file: "diarize:\n  min_speakers: 3\n  max_speakers: 2\n", want: []string{"diarize.max_speakers (2, file ", "below diarize.min_speakers (3"}},
		{name: "diarizer without its embedding", file: "models:\n  diarizer:\n    path: " + good + "\n", want: []string{"models.diarizer.path and models.diarizer.embedding_path go together"}},
		{name: "missing diarizer file", file: "models:\n  diarizer:\n    path: /nonexistent/seg.gguf\n", want: []string{"models.diarizer.path", "does not exist"}},
		{name: "several errors at once", file: "limits:\n  live_cap: x\n  token_budget: y\n", want: []string{"limits.live_cap", "limits.token_budget"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			file := ""
			if tc.file != "" {
				file = writeFile(t, tc.file)
			}
			c, err := load(t, file, tc.args...)
			if err == nil {
				t.Fatalf("accepted: %+v", c)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestMissingConfigFile(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	RegisterFlags(fs)
	if err := fs.Parse([]string{"--config", missing}); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(fs); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("explicit missing --config: err = %v", err)
	}
	fs.Lookup(ConfigFlag).Changed = false // as if it were the default path
	c, err := Load(fs)
	if err != nil {
		t.Fatalf("absent default file: %v", err)
	}
	if c.File != "" || c.Listen != "127.0.0.1:8445" {
		t.Errorf("absent default file should give defaults, got %+v", c)
	}
}

func TestSecretFileIsRead(t *testing.T) {
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte("0123456789abcdef-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := load(t, "", "--admin-secret-file", p)
	if err != nil {
		t.Fatal(err)
	}
	if c.AdminSecret.Reveal() != "0123456789abcdef-from-file" {
		t.Errorf("secret = %q", c.AdminSecret.Reveal())
	}
}

func TestSecretNeverPrints(t *testing.T) {
	const secret = "s3cret-s3cret-s3cret"
	t.Setenv("BOXD_ADMIN_SECRET", secret)
	c, err := load(t, "")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	log.Info("config", "cfg", c, "secret", c.AdminSecret)
	log.Info("config", "effective", c.Effective())
	out := buf.String() + fmt.Sprintf("%v %+v %#v %s %q", c, c, c, c.AdminSecret, c.AdminSecret)
	if strings.Contains(out, secret) {
		t.Fatalf("secret printed: %s", out)
	}
	if !strings.Contains(out, "[redacted]") {
		t.Errorf("expected [redacted] in %s", out)
	}
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	RegisterFlags(fs)
	if fs.Lookup("admin-secret") != nil {
		t.Error("the admin secret must not be a command-line flag (visible in ps)")
	}
}

func TestRelativeDirsBecomeAbsolute(t *testing.T) {
	c, err := load(t, "", "--state-dir", "rel/state")
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(c.StateDir) || !strings.HasSuffix(c.StateDir, "rel/state") {
		t.Errorf("state_dir = %s", c.StateDir)
	}
}

// TestThreadsSplitTheCPUs: the chat model and Whisper together never take
// more threads than there are CPUs unless the operator says so.
func TestThreadsSplitTheCPUs(t *testing.T) {
	for _, tc := range []struct {
		name             string
		llmPath, asrPath string
		llmSet, asrSet   int
		cpus             int
		wantLLM, wantASR int
	}{
		{"both loaded, 2 CPUs", "m", "w", 0, 0, 2, 1, 1},
		{"both loaded, 16 CPUs", "m", "w", 0, 0, 16, 8, 8},
		{"both loaded, 1 CPU", "m", "w", 0, 0, 1, 1, 1},
		{"both loaded, 7 CPUs", "m", "w", 0, 0, 7, 4, 3},
		{"chat only", "m", "", 0, 0, 8, 8, 8},
		{"speech only", "", "w", 0, 0, 8, 8, 8},
		{"asr set", "m", "w", 0, 6, 8, 2, 6},
		{"llm set", "m", "w", 5, 0, 8, 5, 3},
		{"both set", "m", "w", 8, 8, 8, 8, 8},
	} {
		c := Defaults()
		c.Models.LLM.Path, c.Models.ASR.Path = tc.llmPath, tc.asrPath
		c.LLM.Threads, c.ASR.Threads = tc.llmSet, tc.asrSet
		if l, a := c.Threads(tc.cpus); l != tc.wantLLM || a != tc.wantASR {
			t.Errorf("%s: llm %d asr %d, want %d %d", tc.name, l, a, tc.wantLLM, tc.wantASR)
		}
	}
}

// TestFlashAttentionWords: asr.flash_attention is auto by default; auto, on
// and off are taken from the file, the environment and the flag, and the
// true and false of the days it was a bool still mean on and off, so an
// operator's old boxd.yaml keeps its meaning.
func TestFlashAttentionWords(t *testing.T) {
	c, err := load(t, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.ASR.FlashAttention != "auto" {
		t.Errorf("default %q, want auto", c.ASR.FlashAttention)
	}
	for _, tc := range []struct {
		file, env string
		args      []string
		want      string
	}{
		{file: "asr:\n  flash_attention: false\n", want: "off"},
		{file: "asr:\n  flash_attention: true\n", want: "on"},
		{file: "asr:\n  flash_attention: \"off\"\n", want: "off"},
		{file: "asr:\n  flash_attention: auto\n", want: "auto"},
		{env: "false", want: "off"},
		{env: "on", want: "on"},
		{args: []string{"--asr-flash-attention", "off"}, want: "off"},
		{args: []string{"--asr-flash-attention", "true"}, want: "on"},
	} {
		if tc.env != "" {
			t.Setenv(EnvName("asr.flash_attention"), tc.env)
		}
		file := ""
		if tc.file != "" {
			file = writeFile(t, tc.file)
		}
		c, err := load(t, file, tc.args...)
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		if c.ASR.FlashAttention != tc.want {
			t.Errorf("%+v: %q, want %q", tc, c.ASR.FlashAttention, tc.want)
		}
		os.Unsetenv(EnvName("asr.flash_attention"))
	}
}
