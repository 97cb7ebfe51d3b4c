package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"boxd/engine/asr/asrtest"
	"boxd/engine/attest"
	"boxd/engine/diarize/diarizetest"
	"boxd/engine/llm"
	"boxd/engine/models"
	"boxd/engine/models/testmodels"
	"boxd/web"
)

// The test binary doubles as the boxd binary: with GO_TEST_BOXD_MAIN=1 it
// runs main's code path on its arguments, so tests can send real signals to
// a real process without building a second binary.
func TestMain(m *testing.M) {
	if os.Getenv("GO_TEST_BOXD_MAIN") == "1" {
		testRoutes = func(s *web.Server) {
			// A request that is inside its handler when SIGTERM arrives:
			// it answers its headers at once and its body after ms.
			s.Handle(http.MethodGet, "/test/slow", func(w http.ResponseWriter, r *http.Request) {
				ms, _ := strconv.Atoi(r.URL.Query().Get("ms"))
				w.WriteHeader(http.StatusOK)
				_, _ = io.WriteString(w, "started\n")
				_ = http.NewResponseController(w).Flush()
				time.Sleep(time.Duration(ms) * time.Millisecond)
				_, _ = io.WriteString(w, "finished\n")
			})
		}
		os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// boxdCmd prepares a boxd process with a clean BOXD_* environment.
func boxdCmd(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BOXD_") && !strings.HasPrefix(kv, "NOTIFY_SOCKET=") && !strings.HasPrefix(kv, "WATCHDOG_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "GO_TEST_BOXD_MAIN=1")
	// The reference data (data_dir must hold it); a test's env may override.
	if d := os.Getenv("BOXD_TEST_DATA"); d != "" {
		cmd.Env = append(cmd.Env, "BOXD_DATA_DIR="+d)
	}
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

// notifySocket listens where the process sends sd_notify messages.
type notifySocket struct {
	path   string
	conn   *net.UnixConn
	msgs   chan string
	exited chan error // set by watch
}

// watch starts cmd and reports its exit to waitFor.
func (ns *notifySocket) watch(t *testing.T, cmd *exec.Cmd) chan error {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	exited := make(chan error, 1)
	ns.exited = exited
	go func() {
		err := cmd.Wait()
		exited <- err
		done <- err
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return done
}

func newNotifySocket(t *testing.T) *notifySocket {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	ns := &notifySocket{path: path, conn: conn, msgs: make(chan string, 256)}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				close(ns.msgs)
				return
			}
			ns.msgs <- string(buf[:n])
		}
	}()
	t.Cleanup(func() { conn.Close() })
	return ns
}

// waitFor returns the first message containing want; it fails at once if
// the process behind the socket exits first.
func (ns *notifySocket) waitFor(t *testing.T, want string, timeout time.Duration) string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case err := <-ns.exited:
			t.Fatalf("process exited (%v) while waiting for %q", err, want)
		case m, ok := <-ns.msgs:
			if !ok {
				t.Fatalf("notify socket closed waiting for %q", want)
			}
			if strings.Contains(m, want) {
				return m
			}
		case <-deadline:
			t.Fatalf("no %q from sd_notify within %s", want, timeout)
		}
	}
}

func serveArgs(t *testing.T, extra ...string) []string {
	return append([]string{"serve", "--config", writeConfig(t, "# empty: built-in defaults\n"),
		"--state-dir", filepath.Join(t.TempDir(), "state"), "--listen", "127.0.0.1:0", "--log-format", "text"}, extra...)
}

// withConfigFile rewrites serve args to use an explicit, existing config.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "boxd.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestServeLifecycle(t *testing.T) {
	model := testmodels.Shared(t, "stories260K.gguf")
	ns := newNotifySocket(t)
	cfg := writeConfig(t, "shutdown_grace_s: 10\n")
	var logs bytes.Buffer
	state := filepath.Join(t.TempDir(), "state")
	cmd := boxdCmd(t, []string{"NOTIFY_SOCKET=" + ns.path, "WATCHDOG_USEC=400000"},
		"serve", "--config", cfg, "--state-dir", state, "--listen", "127.0.0.1:0",
		"--models-llm-path", model, "--log-format", "json")
	cmd.Stderr = &logs
	exited := ns.watch(t, cmd)

	// READY=1 comes only once the model is loaded and the socket listens.
	ready := ns.waitFor(t, "READY=1", 60*time.Second)
	addr := strings.TrimSpace(ready[strings.Index(ready, "serving on ")+len("serving on "):])
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatalf("READY=1 sent before the socket listens: %v", err)
	}
	var h map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&h)
	resp.Body.Close()
	// stories260K has no chat template and none is set: the model loads,
	// the box serves, and /healthz says chat cannot (TestQuickStartChats
	// sets the template).
	if llmErr, _ := h["llm_error"].(string); h["llm"] != false || h["ok"] != true || !strings.Contains(llmErr, "no chat template; set models.llm.template") {
		t.Errorf("healthz after READY: %v", h)
	}

	// The unit's WatchdogSec arrives as WATCHDOG_USEC: pings follow.
	ns.waitFor(t, "WATCHDOG=1", 5*time.Second)

	// A request inside its handler when SIGTERM arrives.
	resp, err = http.Get("http://" + addr + "/test/slow?ms=1500")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if line, _ := br.ReadString('\n'); line != "started\n" {
		t.Fatalf("slow handler: %q", line)
	}
	// And an idle keep-alive connection, which draining closes.
	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if _, err := io.WriteString(idle, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	idleReader := bufio.NewReader(idle)
	r, err := http.ReadResponse(idleReader, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(r.Body)

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	ns.exited = nil // exiting is expected from here on
	ns.waitFor(t, "STOPPING=1", 5*time.Second)

	// No new connections once draining.
	deadline := time.Now().Add(3 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("still accepting connections after SIGTERM")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The idle connection is closed by the server.
	_ = idle.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := idleReader.ReadByte(); err != io.EOF {
		t.Errorf("idle keep-alive connection: read %v, want EOF", err)
	}
	select {
	case err := <-exited:
		t.Fatalf("exited (%v) before the in-flight request finished", err)
	default:
	}

	// The in-flight request finishes.
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "finished\n" {
		t.Fatalf("in-flight request cut: %q %v", rest, err)
	}

	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, logs.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("did not exit after draining")
	}
	out := logs.String()
	for _, want := range []string{`"msg":"ready"`, `"msg":"draining"`, `"msg":"stopped"`, `"weights_root":"`, `"weights_root_cached":false`,
		`"msg":"chat completions and live lanes answer 502 until models.llm.template is set; /healthz says llm false"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s", want)
		}
	}
	// The model's hash is remembered for the next start.
	if sum := models.OpenHashCache(state).Cached(model); len(sum) != 64 {
		t.Errorf("no remembered hash for %s in %s", model, state)
	}
}

func TestServeWithoutModelReportsLLMFalse(t *testing.T) {
	ns := newNotifySocket(t)
	cmd := boxdCmd(t, []string{"NOTIFY_SOCKET=" + ns.path}, serveArgs(t)...)
	ns.watch(t, cmd)
	ready := ns.waitFor(t, "READY=1", 30*time.Second)
	addr := strings.TrimSpace(ready[strings.Index(ready, "serving on ")+len("serving on "):])
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&h)
	resp.Body.Close()
	if h["llm"] != false || h["asr"] != false || h["ok"] != true || h["llm_route"] != "direct" {
		t.Errorf("healthz = %v", h)
	}
}

// diarizerSeg is a random-weight segmentation GGUF, made once.
func diarizerSeg(t *testing.T) string {
	seg, _ := diarizerGGUFs(t)
	return seg
}

var diarizerFiles struct {
	once     sync.Once
	seg, emb string
	err      error
}

// diarizerGGUFs are random-weight segmentation and embedding GGUFs, made
// once for the package's tests.
func diarizerGGUFs(t *testing.T) (seg, emb string) {
	t.Helper()
	diarizerFiles.once.Do(func() {
		dir, err := os.MkdirTemp("", "boxd-diarizer-")
		if err != nil {
			diarizerFiles.err = err
			return
		}
		diarizerFiles.seg, diarizerFiles.emb = diarizetest.GGUFs(tempDirTB{dir: dir})
	})
	if diarizerFiles.err != nil {
		t.Fatal(diarizerFiles.err)
	}
	return diarizerFiles.seg, diarizerFiles.emb
}

// tempDirTB hands diarizetest a fixed directory (the files outlive one
// test; the OS's temporary directory holds them).
type tempDirTB struct{ dir string }

func (tempDirTB) Helper()                           {}
func (tempDirTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (d tempDirTB) TempDir() string                 { return d.dir }

// TestServeLoadsTheNeuralDiarizer: with both diarizer GGUFs configured,
// both networks load at start and /healthz names the neural diarizer;
// without them it names boxd-classical-1.
func TestServeLoadsTheNeuralDiarizer(t *testing.T) {
	seg, emb := diarizerGGUFs(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--models-diarizer-path", seg, "--models-diarizer-embedding-path", emb}, "pyannote-segmentation-3.0+wespeaker-resnet34"},
		{nil, "boxd-classical-1"},
	} {
		ns := newNotifySocket(t)
		cmd := boxdCmd(t, []string{"NOTIFY_SOCKET=" + ns.path}, serveArgs(t, c.args...)...)
		exited := ns.watch(t, cmd)
		ready := ns.waitFor(t, "READY=1", 60*time.Second)
		addr := strings.TrimSpace(ready[strings.Index(ready, "serving on ")+len("serving on "):])
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		var h map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&h)
		resp.Body.Close()
		if h["diarize"] != true || h["diarizer"] != c.want {
			t.Errorf("healthz = %v, want diarize true and diarizer %s", h, c.want)
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := <-exited; err != nil {
			t.Fatal(err)
		}
	}
}

// TestDiarizeCommand: boxd diarize prints RTTM for a WAV (the
// model-free diarizer here: two espeak-ng voices), and refuses bad input
// saying what to fix.
func TestDiarizeCommand(t *testing.T) {
	wav := filepath.Join(t.TempDir(), "two.wav")
	var pcm []float32
	pcm = append(pcm, asrtest.Silence(0.3)...)
	pcm = append(pcm, asrtest.Speak(t, "Good morning, what brings you in today? Tell me about the pain.", "en-us+m3")...)
	pcm = append(pcm, asrtest.Silence(0.7)...)
	pcm = append(pcm, asrtest.Speak(t, "My lower back has been hurting for about two weeks now.", "en+f4")...)
	pcm = append(pcm, asrtest.Silence(0.5)...)
	if err := os.WriteFile(wav, wavFile(pcm), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := boxdCmd(t, nil, "diarize", wav, "--config", writeConfig(t, "# defaults\n"))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	speakers := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		f := strings.Fields(line)
		if len(f) != 10 || f[0] != "SPEAKER" || f[1] != "two" {
			t.Fatalf("not an RTTM line: %q", line)
		}
		speakers[f[7]] = true
	}
	if len(speakers) != 2 || !strings.Contains(stderr.String(), "boxd-classical-1: 2 speakers") {
		t.Errorf("speakers %v; stderr %s", speakers, stderr.String())
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"diarize", wav, "--max-speakers", "0"}, "max_speakers is 0"},
		{[]string{"diarize", wav, "--min-speakers", "3", "--max-speakers", "2"}, "max_speakers (2) is below min_speakers (3)"},
		{[]string{"diarize", writeConfig(t, "not audio")}, "give a 16 kHz mono 16-bit WAV"},
		{[]string{"diarize", wav, "--file-id", "a b"}, "an RTTM file id has no spaces"},
	} {
		cmd := boxdCmd(t, nil, append(c.args, "--config", writeConfig(t, "# defaults\n"))...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err == nil || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: %v, stderr %q; want %q", c.args, err, stderr.String(), c.want)
		}
	}
}

// wavFile is pcm as a 16 kHz mono PCM16 WAV file.
func wavFile(pcm []float32) []byte {
	data := make([]byte, 2*len(pcm))
	for i, v := range pcm {
		binary.LittleEndian.PutUint16(data[2*i:], uint16(int16(max(-1, min(1, v))*32767)))
	}
	h := make([]byte, 44)
	copy(h, "RIFF")
	binary.LittleEndian.PutUint32(h[4:], uint32(36+len(data)))
	copy(h[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(h[16:], 16)
	binary.LittleEndian.PutUint16(h[20:], 1)
	binary.LittleEndian.PutUint16(h[22:], 1)
	binary.LittleEndian.PutUint32(h[24:], 16000)
	binary.LittleEndian.PutUint32(h[28:], 32000)
	binary.LittleEndian.PutUint16(h[32:], 2)
	binary.LittleEndian.PutUint16(h[34:], 16)
	copy(h[36:], "data")
	binary.LittleEndian.PutUint32(h[40:], uint32(len(data)))
	return append(h, data...)
}

// TestServeLoadsSpeech: with a Whisper GGUF and the VAD configured,
// /healthz says asr true once READY.
func TestServeLoadsSpeech(t *testing.T) {
	ns := newNotifySocket(t)
	var logs bytes.Buffer
	cmd := boxdCmd(t, []string{"NOTIFY_SOCKET=" + ns.path, "BOXD_MODELS_VAD_PATH=" + testmodels.Shared(t, "ggml-silero-v6.2.0.bin")},
		serveArgs(t, "--models-asr-path", testmodels.Generated(t, testmodels.WhisperMicroGGUF), "--log-format", "json")...)
	cmd.Stderr = &logs
	exited := ns.watch(t, cmd)
	ready := ns.waitFor(t, "READY=1", 60*time.Second)
	addr := strings.TrimSpace(ready[strings.Index(ready, "serving on ")+len("serving on "):])
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&h)
	resp.Body.Close()
	if h["asr"] != true || h["llm"] != false {
		t.Errorf("healthz = %v", h)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := <-exited; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), `"model":"asr","name":"boxd-micro-whisper"`) {
		t.Errorf("log lacks the asr model line:\n%s", logs.String())
	}
	// ollama's ggml backend logs the VAD file's metadata without a message.
	if strings.Contains(logs.String(), `"msg":""`) || !strings.Contains(logs.String(), `"msg":"`+unnamedLine+`","architecture":"silero-vad"`) {
		t.Errorf("a log line without a message, or the VAD's metadata line unnamed:\n%s", logs.String())
	}
}

func TestServeStartUpErrors(t *testing.T) {
	cases := []struct {
		name string
		env  []string
		args []string
		want []string
	}{
		{"non-loopback listen refused", nil, serveArgs(t, "--listen", "0.0.0.0:0"), []string{"not a loopback address", "allow_non_loopback"}},
		{"missing data_dir", nil, serveArgs(t, "--data-dir", "/nonexistent/data"), []string{"data_dir (flag --data-dir)", "icd10cm/ and rxnorm/", "/usr/share/boxd/data"}},
		{"bad value names the key", nil, serveArgs(t, "--limits-live-cap", "0"), []string{"limits.live_cap", "out of range"}},
		{"bad env names the key", []string{"BOXD_GPU_LAYERS=lots"}, serveArgs(t), []string{"gpu.layers (env BOXD_GPU_LAYERS)"}},
		{"unknown env var", []string{"BOXD_MODELS_LLM_PATHS=x"}, serveArgs(t), []string{"BOXD_MODELS_LLM_PATHS is not a setting", "BOXD_MODELS_LLM_PATH"}},
		{"missing model", nil, serveArgs(t, "--models-llm-path", "/nonexistent/m.gguf"), []string{"models.llm.path", "does not exist"}},
		{"unknown file key", nil, []string{"serve", "--config", writeConfig(t, "listne: 127.0.0.1:1\n")}, []string{"unknown setting listne", "did you mean listen"}},
		{"missing explicit config", nil, []string{"serve", "--config", "/nonexistent/boxd.yaml"}, []string{"/nonexistent/boxd.yaml"}},
		{"embedder that is a reranker", nil, serveArgs(t, "--models-embedder-path", testmodels.Generated(t, testmodels.RerankFile)), []string{"models.embedder.path", "is not a sentence-embedding model"}},
		{"asr file that is not whisper", []string{"BOXD_MODELS_VAD_PATH=" + testmodels.Shared(t, "ggml-silero-v6.2.0.bin")}, serveArgs(t, "--models-asr-path", testmodels.Shared(t, "stories260K.gguf")), []string{"models.asr.path", "not a Whisper GGUF"}},
		{"asr without a vad", nil, serveArgs(t, "--models-asr-path", testmodels.Generated(t, testmodels.WhisperMicroGGUF)), []string{"models.vad.path", "ggml-silero-v6.2.0.bin"}},
		{"vad file that is not silero", nil, serveArgs(t, "--models-asr-path", testmodels.Generated(t, testmodels.WhisperMicroGGUF), "--models-vad-path", testmodels.Shared(t, "stories260K.gguf")), []string{"models.vad.path", "vad"}},
		{"llm file that is not a model", nil, serveArgs(t, "--models-llm-path", writeConfig(t, "not a model")), []string{"models.llm.path", "could not load"}},
		{"diarizer without its embedding", nil, serveArgs(t, "--models-diarizer-path", testmodels.Shared(t, "stories260K.gguf")), []string{"models.diarizer.path and models.diarizer.embedding_path go together"}},
		{"diarizer that is not a segmentation", nil, serveArgs(t, "--models-diarizer-path", testmodels.Shared(t, "stories260K.gguf"), "--models-diarizer-embedding-path", testmodels.Shared(t, "stories260K.gguf")), []string{"models.diarizer.path (flag --models-diarizer-path)", "not a pyannote segmentation-3.0"}},
		{"diarizer embedding that is not a ResNet34", nil, serveArgs(t, "--models-diarizer-path", diarizerSeg(t), "--models-diarizer-embedding-path", testmodels.Shared(t, "stories260K.gguf")), []string{"models.diarizer.embedding_path (flag --models-diarizer-embedding-path)", "wespeaker-resnet34"}},
		{"missing diarizer file", nil, serveArgs(t, "--models-diarizer-path", "/nonexistent/seg.gguf", "--models-diarizer-embedding-path", "/nonexistent/emb.gguf"), []string{"models.diarizer.path", "does not exist"}},
		{"max speakers zero", nil, serveArgs(t, "--diarize-max-speakers", "0"), []string{"diarize.max_speakers (flag --diarize-max-speakers)", "out of range"}},
		{"migration judge that is no candidate", nil, serveArgs(t, "--migration-judge", "nope"), []string{"migration.judge (flag --migration-judge)", "not a migration.candidates id"}},
		{"migration candidate that is not a model", nil, serveArgs(t, "--migration-candidates", "b|"+writeConfig(t, "not a model")), []string{"migration.candidates b", "could not load"}},
		{"migration candidate without a path", nil, serveArgs(t, "--migration-candidates", "b"), []string{"migration.candidates", "id|path"}},
		{"migration price table that does not read", nil, serveArgs(t, "--migration-price-table", writeConfig(t, "{\"models\": []}")), []string{"migration.price_table (flag --migration-price-table)", "date must be YYYY-MM-DD"}},
		{"migration hour cost that is no number", nil, serveArgs(t, "--migration-hour-cost", "cheap"), []string{"migration.hour_cost", "dollars an hour"}},
		{"projector that is not one", nil, serveArgs(t, "--models-llm-path", testmodels.Generated(t, testmodels.ChatFile), "--models-llm-projector", testmodels.Generated(t, testmodels.EmbedFile)), []string{"models.llm.projector (flag --models-llm-projector)", "did not load"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			cmd := boxdCmd(t, tc.env, tc.args...)
			cmd.Stderr = &stderr
			err := cmd.Run()
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != exitConfig {
				t.Fatalf("exit = %v, want status %d; stderr:\n%s", err, exitConfig, stderr.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
			// Settings that need only reading are refused before any side
			// effect: no signing key is made for a start that cannot run.
			if i := slices.Index(tc.args, "--state-dir"); i >= 0 && (strings.Contains(tc.name, "listen") || strings.Contains(tc.name, "data_dir")) {
				if _, err := os.Stat(filepath.Join(tc.args[i+1], attest.KeyFile)); err == nil {
					t.Errorf("a signing key was created in %s before the refusal", tc.args[i+1])
				}
			}
		})
	}
}

// TestServePortInUse: a port another process holds is reported at once,
// before any model loads or anything is written (no signing key), with
// what to do; the exit status is 1, not the configuration's 2, so the unit
// tries again.
func TestServePortInUse(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	args := serveArgs(t, "--listen", held.Addr().String(), "--models-llm-path", testmodels.Generated(t, testmodels.ChatFile))
	var stderr bytes.Buffer
	cmd := boxdCmd(t, nil, args...)
	cmd.Stderr = &stderr
	start := time.Now()
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit = %v, want status 1; stderr:\n%s", err, stderr.String())
	}
	for _, w := range []string{"address already in use", "another process serves this port", "set listen (flag --listen)"} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
		}
	}
	if strings.Contains(stderr.String(), "loading") || strings.Contains(stderr.String(), "signing key") {
		t.Errorf("the start went on before the refusal:\n%s", stderr.String())
	}
	state := args[slices.Index(args, "--state-dir")+1]
	if _, err := os.Stat(filepath.Join(state, attest.KeyFile)); err == nil {
		t.Errorf("a signing key was created in %s before the refusal", state)
	}
	t.Logf("refused after %v", time.Since(start).Round(time.Millisecond))
}

func TestServeNonLoopbackWhenAllowed(t *testing.T) {
	ns := newNotifySocket(t)
	var logs bytes.Buffer
	cmd := boxdCmd(t, []string{"NOTIFY_SOCKET=" + ns.path}, serveArgs(t, "--listen", "0.0.0.0:0", "--allow-non-loopback")...)
	cmd.Stderr = &logs
	exited := ns.watch(t, cmd)
	ns.waitFor(t, "READY=1", 30*time.Second)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := <-exited; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "non-loopback address because allow_non_loopback is true") {
		t.Errorf("the log must say the box listens beyond loopback:\n%s", logs.String())
	}
}

func TestSecretNeverLogged(t *testing.T) {
	const secret = "do-not-log-this-secret-123"
	ns := newNotifySocket(t)
	var logs bytes.Buffer
	cmd := boxdCmd(t, []string{"NOTIFY_SOCKET=" + ns.path, "BOXD_ADMIN_SECRET=" + secret}, serveArgs(t, "--log-level", "debug")...)
	cmd.Stderr = &logs
	cmd.Stdout = &logs
	exited := ns.watch(t, cmd)
	ready := ns.waitFor(t, "READY=1", 30*time.Second)
	addr := strings.TrimSpace(ready[strings.Index(ready, "serving on ")+len("serving on "):])
	if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
		resp.Body.Close()
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	<-exited
	if strings.Contains(logs.String(), secret) {
		t.Fatalf("admin secret in the log:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "admin_secret=true") {
		t.Errorf("the log should say a secret is configured:\n%s", logs.String())
	}
}

func TestVersion(t *testing.T) {
	var out bytes.Buffer
	if code := run(context.Background(), []string{"version"}, &out, io.Discard); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.HasPrefix(out.String(), "boxd 0.1.0 ") {
		t.Errorf("version = %q", out.String())
	}
	var flag bytes.Buffer
	if code := run(context.Background(), []string{"--version"}, &flag, io.Discard); code != 0 || flag.String() != out.String() {
		t.Errorf("boxd --version: exit %d, %q; want %q", code, flag.String(), out.String())
	}
}

func TestModelsInspect(t *testing.T) {
	model := testmodels.Shared(t, "stories260K.gguf")
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"models", "inspect", model}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	info, err := llm.Inspect(context.Background(), model)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"architecture    llama",
		fmt.Sprintf("parameters      293K (%d)", info.Parameters),
		"context length  2048",
		"quantisation    all F32 (guessed)",
		"chat template   none",
		"weights root    " + info.WeightsRoot,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}

	// README's sample is this output, line for line (the file's path
	// aside).
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "$ boxd models inspect ../shared/models/stories260K.gguf\n")
	block, _, _ = strings.Cut(block, "```")
	if !ok {
		t.Fatal("README has no models inspect sample")
	}
	gotLines, wantLines := strings.Split(strings.TrimSpace(out.String()), "\n"), strings.Split(strings.TrimSpace(block), "\n")
	if len(gotLines) != len(wantLines) {
		t.Errorf("README's sample has %d lines, the output %d:\n%s", len(wantLines), len(gotLines), out.String())
	}
	for i := range min(len(gotLines), len(wantLines)) {
		if !strings.HasPrefix(gotLines[i], "file ") && gotLines[i] != wantLines[i] {
			t.Errorf("README's sample says %q where the output says %q", wantLines[i], gotLines[i])
		}
	}

	out.Reset()
	if code := run(context.Background(), []string{"models", "inspect", "--json", model}, &out, io.Discard); code != 0 {
		t.Fatalf("--json exit %d", code)
	}
	var got map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("--json output: %v", err)
	}
	for _, k := range []string{"architecture", "parameters", "context_length", "quantisation", "chat_template", "weights_root"} {
		if _, ok := got[k]; !ok {
			t.Errorf("--json lacks %s", k)
		}
	}

	var errOut bytes.Buffer
	if code := run(context.Background(), []string{"models", "inspect", filepath.Join(t.TempDir(), "none.gguf")}, io.Discard, &errOut); code == 0 {
		t.Error("inspect of a missing file succeeded")
	}
}

func TestConfigCommandShowsSources(t *testing.T) {
	cfg := writeConfig(t, "limits:\n  live_cap: 6\n")
	var out bytes.Buffer
	cmd := boxdCmd(t, []string{"BOXD_LISTEN=127.0.0.1:9999", "BOXD_ADMIN_SECRET=0123456789abcdef-x"}, "config", "--config", cfg, "--models-llm-id", "local-chat")
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, re := range [][]string{
		{"limits.live_cap", "6", "file " + cfg},
		{"listen", "127.0.0.1:9999", "env BOXD_LISTEN"},
		{"models.llm.id", "local-chat", "flag --models-llm-id"},
		{"admin_secret", "[redacted]", "env BOXD_ADMIN_SECRET"},
		{"limits.token_budget", "200000", "default"},
	} {
		found := false
		for _, line := range strings.Split(text, "\n") {
			f := strings.Fields(line)
			if len(f) >= 3 && f[0] == re[0] && f[1] == re[1] && strings.Join(f[2:], " ") == re[2] {
				found = true
			}
		}
		if !found {
			t.Errorf("no line %v in:\n%s", re, text)
		}
	}
	if strings.Contains(text, "0123456789abcdef-x") {
		t.Error("config printed the secret")
	}
}

func TestMakeTestModels(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "models", "make-test-models", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	files := strings.Fields(out)
	if len(files) != 7 {
		t.Fatalf("wrote %v", files)
	}
	for _, f := range files {
		if filepath.Base(f) == testmodels.VisionFile {
			continue // a vision projector (clip), not a model llama.cpp loads alone
		}
		code, out, errOut := runCLI(t, "models", "inspect", "--json", f)
		if code != 0 {
			t.Fatalf("inspect %s: %s", f, errOut)
		}
		var info map[string]any
		if err := json.Unmarshal([]byte(out), &info); err != nil {
			t.Fatal(err)
		}
		if info["architecture"] != "llama" && info["architecture"] != "bert" {
			t.Errorf("%s: %v", f, info)
		}
	}
	// Deterministic: the same bytes again.
	again := t.TempDir()
	runCLI(t, "models", "make-test-models", again)
	for _, f := range files {
		a, _ := os.ReadFile(f)
		b, _ := os.ReadFile(filepath.Join(again, filepath.Base(f)))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs between runs", filepath.Base(f))
		}
	}
}

// TestGPUCommand: boxd gpu lists the CPU with its memory, says why there is
// no GPU (a library path that does not exist), and --json holds the same
// devices and the path it loaded from.
func TestGPUCommand(t *testing.T) {
	var out, errb bytes.Buffer
	missing := filepath.Join(t.TempDir(), "lib", "ollama")
	if code := run(context.Background(), []string{"gpu", "--gpu-library-path", missing}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	text := out.String()
	if !strings.Contains(text, "INDEX") || !strings.Contains(text, "cpu") || !strings.Contains(text, "does not exist") || !strings.Contains(text, "make cuda") {
		t.Errorf("output:\n%s", text)
	}
	out.Reset()
	if code := run(context.Background(), []string{"gpu", "--json", "--gpu-library-path", missing}, &out, io.Discard); code != 0 {
		t.Fatal("json: nonzero exit")
	}
	var j struct {
		LibraryPath string `json:"library_path"`
		Devices     []struct {
			Kind       string `json:"kind"`
			TotalBytes uint64 `json:"total_bytes"`
		} `json:"devices"`
	}
	if err := json.Unmarshal(out.Bytes(), &j); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if j.LibraryPath != missing || len(j.Devices) == 0 || j.Devices[0].Kind != "cpu" || j.Devices[0].TotalBytes == 0 {
		t.Errorf("json: %+v", j)
	}
	if code := run(context.Background(), []string{"gpu", "--gpu-layers", "nope"}, io.Discard, io.Discard); code == 0 {
		t.Error("a bad flag was accepted")
	}
	// Help lists what changes the listing, not every serve setting.
	out.Reset()
	if code := run(context.Background(), []string{"gpu", "--help"}, &out, io.Discard); code != 0 {
		t.Fatal("gpu --help: nonzero exit")
	}
	if h := out.String(); !strings.Contains(h, "--gpu-library-path") || !strings.Contains(h, "--config") || !strings.Contains(h, "--json") || strings.Contains(h, "--listen") || strings.Contains(h, "--models-llm-path") {
		t.Errorf("gpu --help:\n%s", h)
	}
}

// TestDocs: boxd docs DIR writes a gzipped manual page per command (the
// package's /usr/share/man/man1) and bash, zsh and fish completions that
// name the commands; the hidden docs command has no page.
func TestDocs(t *testing.T) {
	dir := t.TempDir()
	if code := run(context.Background(), []string{"docs", dir}, io.Discard, io.Discard); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, page := range []string{"boxd.1.gz", "boxd-serve.1.gz", "boxd-keys-create.1.gz", "boxd-verify.1.gz"} {
		f, err := os.Open(filepath.Join(dir, "man", page))
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		b, _ := io.ReadAll(zr)
		f.Close()
		if !strings.Contains(string(b), `.TH "BOXD" "1"`) || !strings.Contains(string(b), ".SH NAME") || !strings.Contains(string(b), "boxd") {
			t.Errorf("%s:\n%.400s", page, b)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "man", "boxd-docs.1.gz")); !os.IsNotExist(err) {
		t.Errorf("the hidden docs command has a page (%v)", err)
	}
	for _, c := range []string{"bash/boxd", "zsh/_boxd", "fish/boxd.fish"} {
		b, err := os.ReadFile(filepath.Join(dir, "completions", c))
		if err != nil || !strings.Contains(string(b), "boxd") {
			t.Errorf("%s: %v %.200s", c, err, b)
		}
	}
}
