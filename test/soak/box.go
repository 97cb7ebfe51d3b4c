package soak

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Box is one boxd process started from its binary, as a user starts it:
// `boxd serve` on a random loopback port with its own state directory.
type Box struct {
	Base     string // http://127.0.0.1:port
	StateDir string
	LogPath  string

	cmd    *exec.Cmd
	exited chan struct{}
	waitMu sync.Mutex
	err    error // cmd.Wait's error, once exited is closed
	http   *http.Client
}

// BoxOptions are the settings the box starts with.
type BoxOptions struct {
	Bin      string // the boxd binary
	WorkDir  string // the config file, the state directory and the log go here
	DataDir  string // reference data (ICD-10-CM, RxNorm)
	LLM      string // chat model GGUF
	Template string // its chat template family
	ASR      string // Whisper GGUF
	VAD      string // Silero VAD
	// AdminSecret, when set, is written to a file the config names
	// (admin_secret_file), for POST /v1/keys.
	AdminSecret string
}

// readyLine is the JSON log line boxd writes once it serves.
type readyLine struct {
	Msg  string `json:"msg"`
	Addr string `json:"addr"`
}

// StartBox starts boxd serve and waits (up to timeout) for its ready log
// line, which names the address it listens on. The environment is the
// caller's without BOXD_* settings, so nothing outside o configures it.
func StartBox(o BoxOptions, timeout time.Duration) (*Box, error) {
	if err := os.MkdirAll(o.WorkDir, 0o700); err != nil {
		return nil, fmt.Errorf("soak: work dir: %w", err)
	}
	conf := "# soak: built-in defaults; the models and directories come as flags\n"
	if o.AdminSecret != "" {
		secret := filepath.Join(o.WorkDir, "admin.secret")
		if err := os.WriteFile(secret, []byte(o.AdminSecret+"\n"), 0o600); err != nil {
			return nil, fmt.Errorf("soak: admin secret: %w", err)
		}
		conf += fmt.Sprintf("admin_secret_file: %q\n", secret)
	}
	config := filepath.Join(o.WorkDir, "boxd.yaml")
	if err := os.WriteFile(config, []byte(conf), 0o600); err != nil {
		return nil, fmt.Errorf("soak: config: %w", err)
	}
	b := &Box{StateDir: filepath.Join(o.WorkDir, "state"), LogPath: filepath.Join(o.WorkDir, "boxd.log"),
		exited: make(chan struct{}), http: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}}
	logFile, err := os.Create(b.LogPath)
	if err != nil {
		return nil, fmt.Errorf("soak: log: %w", err)
	}
	cmd := exec.Command(o.Bin, "serve", "--config", config, "--state-dir", b.StateDir,
		"--listen", "127.0.0.1:0", "--data-dir", o.DataDir, "--log-format", "json",
		"--models-llm-path", o.LLM, "--models-llm-template", o.Template,
		"--models-asr-path", o.ASR, "--models-vad-path", o.VAD)
	cmd.Env = cleanEnv()
	// The box never outlives the soak, whatever ends it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		logFile.Close()
		return nil, fmt.Errorf("soak: %w", err)
	}
	cmd.Stdout = logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("soak: start %s: %w", o.Bin, err)
	}
	b.cmd = cmd
	addr := make(chan string, 1)
	go func() {
		// Every log line goes to the file; the ready line's address is
		// passed on once.
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		sent := false
		for sc.Scan() {
			line := sc.Bytes()
			_, _ = logFile.Write(append(line, '\n'))
			var r readyLine
			if !sent && json.Unmarshal(line, &r) == nil && r.Msg == "ready" && r.Addr != "" {
				addr <- r.Addr
				sent = true
			}
		}
		_, _ = io.Copy(logFile, stderr)
		err := cmd.Wait()
		logFile.Close()
		b.waitMu.Lock()
		b.err = err
		b.waitMu.Unlock()
		close(b.exited)
	}()
	select {
	case a := <-addr:
		b.Base = "http://" + a
		return b, nil
	case <-b.exited:
		return nil, fmt.Errorf("soak: boxd exited before ready (%v); see %s", b.exitErr(), b.LogPath)
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-b.exited
		return nil, fmt.Errorf("soak: boxd not ready within %s; see %s", timeout, b.LogPath)
	}
}

// cleanEnv is the environment without BOXD_* settings (boxd refuses
// unknown ones and would take known ones as its configuration) and
// without systemd's notify and watchdog variables.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BOXD_") && !strings.HasPrefix(kv, "NOTIFY_SOCKET=") && !strings.HasPrefix(kv, "WATCHDOG_") {
			env = append(env, kv)
		}
	}
	return env
}

func (b *Box) exitErr() error {
	b.waitMu.Lock()
	defer b.waitMu.Unlock()
	return b.err
}

// PID is the box's process id.
func (b *Box) PID() int { return b.cmd.Process.Pid }

// Exited is closed once the process has exited.
func (b *Box) Exited() <-chan struct{} { return b.exited }

// Stop sends SIGTERM and waits up to grace for the process to exit; it
// returns the exit error (nil for a clean exit). Past grace it kills it.
func (b *Box) Stop(grace time.Duration) error {
	select {
	case <-b.exited:
		return fmt.Errorf("soak: boxd had already exited: %v", b.exitErr())
	default:
	}
	if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("soak: SIGTERM: %w", err)
	}
	select {
	case <-b.exited:
		return b.exitErr()
	case <-time.After(grace):
		_ = b.cmd.Process.Kill()
		<-b.exited
		return fmt.Errorf("soak: boxd did not exit within %s of SIGTERM", grace)
	}
}

// Kill ends the process at once (cleanup after a failure).
func (b *Box) Kill() {
	select {
	case <-b.exited:
	default:
		_ = b.cmd.Process.Kill()
		<-b.exited
	}
}

// Probe is one reading of the box's resources.
type Probe struct {
	RSS        int64 // resident set, bytes (/proc/<pid>/status VmRSS)
	FDs        int   // open file descriptors (/proc/<pid>/fd)
	Goroutines int   // go_goroutines of GET /metrics
	LiveNow    int   // boxd_live_sessions of GET /metrics
	StoreBytes int64 // bytes of the files under the state directory
}

// IdleProbe is the idle box's probe: three probes half a second apart,
// with the fewest goroutines and descriptors seen. A leaked goroutine or
// descriptor is in every one; a goroutine that is only passing through
// (the runtime's cleanup and finalizer goroutines while they run, a
// connection's last moments) is not counted as one.
func (b *Box) IdleProbe(ctx context.Context) (Probe, error) {
	var best Probe
	for i := range 3 {
		if i > 0 {
			select {
			case <-time.After(500 * time.Millisecond):
			case <-ctx.Done():
				return best, ctx.Err()
			}
		}
		p, err := b.Probe(ctx)
		if err != nil {
			return best, err
		}
		if i == 0 {
			best = p
			continue
		}
		best.Goroutines = min(best.Goroutines, p.Goroutines)
		best.FDs = min(best.FDs, p.FDs)
		best.LiveNow = max(best.LiveNow, p.LiveNow)
		best.RSS, best.StoreBytes = p.RSS, p.StoreBytes
	}
	return best, nil
}

// Probe reads the process's RSS and open descriptors from /proc (first,
// so the /metrics request's own connection is not among them), then
// /metrics, then the state directory's size.
func (b *Box) Probe(ctx context.Context) (Probe, error) {
	var p Probe
	pid := strconv.Itoa(b.PID())
	status, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return p, fmt.Errorf("soak: %w", err)
	}
	if p.RSS, err = vmRSS(string(status)); err != nil {
		return p, err
	}
	fds, err := os.ReadDir("/proc/" + pid + "/fd")
	if err != nil {
		return p, fmt.Errorf("soak: %w", err)
	}
	p.FDs = len(fds)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.Base+"/metrics", nil)
	if err != nil {
		return p, err
	}
	resp, err := b.http.Do(req)
	if err != nil {
		return p, fmt.Errorf("soak: GET /metrics: %w", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		return p, fmt.Errorf("soak: GET /metrics: %d %v", resp.StatusCode, err)
	}
	m := parseMetrics(string(body))
	g, ok := m["go_goroutines"]
	if !ok {
		return p, errors.New("soak: /metrics has no go_goroutines")
	}
	p.Goroutines = int(g)
	p.LiveNow = int(m["boxd_live_sessions"])
	if p.StoreBytes, err = dirBytes(b.StateDir); err != nil {
		return p, err
	}
	return p, nil
}

// FDKinds is what the box's open descriptors point at, counted by kind:
// a file's path, "socket", "pipe" or the anonymous inode's name.
func (b *Box) FDKinds() (map[string]int, error) {
	dir := "/proc/" + strconv.Itoa(b.PID()) + "/fd"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("soak: %w", err)
	}
	out := map[string]int{}
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		switch {
		case strings.HasPrefix(target, "socket:"):
			target = "socket"
		case strings.HasPrefix(target, "pipe:"):
			target = "pipe"
		}
		out[target]++
	}
	return out, nil
}

// FDDiff lists the kinds whose counts differ between two FDKinds readings
// ("kind: before → after"), sorted.
func FDDiff(before, after map[string]int) []string {
	var out []string
	for k, n := range after {
		if before[k] != n {
			out = append(out, fmt.Sprintf("%s: %d → %d", k, before[k], n))
		}
	}
	for k, n := range before {
		if _, ok := after[k]; !ok {
			out = append(out, fmt.Sprintf("%s: %d → 0", k, n))
		}
	}
	slices.Sort(out)
	return out
}

// vmRSS reads VmRSS (kB) from a /proc/<pid>/status text, in bytes.
func vmRSS(status string) (int64, error) {
	for _, line := range strings.Split(status, "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				kb, err := strconv.ParseInt(f[0], 10, 64)
				if err == nil {
					return kb * 1024, nil
				}
			}
			return 0, fmt.Errorf("soak: unreadable VmRSS line %q", line)
		}
	}
	return 0, errors.New("soak: no VmRSS in /proc/<pid>/status")
}

// parseMetrics reads the unlabelled samples of a Prometheus text
// exposition (name value).
func parseMetrics(text string) map[string]float64 {
	out := map[string]float64{}
	for _, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == '#' || strings.ContainsRune(line, '{') {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		if v, err := strconv.ParseFloat(f[1], 64); err == nil {
			out[f[0]] = v
		}
	}
	return out
}

// dirBytes is the total size of the regular files under dir.
func dirBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // a file removed while walking (SQLite's journal)
			}
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("soak: size of %s: %w", dir, err)
	}
	return n, nil
}
