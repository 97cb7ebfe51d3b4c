package crashtest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// rounds is how many kills a test makes: BOXD_CRASH_ROUNDS, default 50.
func rounds(t *testing.T) int {
	t.Helper()
	v := os.Getenv("BOXD_CRASH_ROUNDS")
	if v == "" {
		return 50
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("BOXD_CRASH_ROUNDS=%q: want a whole number of at least 1", v)
	}
	return n
}

// seeded returns the test's random source and logs its seed
// (BOXD_CRASH_SEED replays it).
func seeded(t *testing.T) (*rand.Rand, uint64) {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("BOXD_CRASH_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("BOXD_CRASH_SEED=%q: want a whole number", v)
		}
		seed = s
	}
	t.Logf("seed %d (BOXD_CRASH_SEED=%d replays this run's choices; where a kill lands also depends on timing)", seed, seed)
	return rand.New(rand.NewPCG(seed, seed^0x5DEECE66D)), seed
}

// repoRoot is the module's root (this file is <root>/test/crashtest/...).
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

// buildBoxd builds ./cmd/boxd, with the Makefile's cgo settings where
// the environment lacks them (they key Go's build cache: other flags would
// recompile llama.cpp for minutes). The binary goes to one place under the
// system temporary directory: go build does not link again a binary that
// is up to date there (linking takes tens of seconds). BOXD_CRASH_BIN
// names a binary to use instead.
func buildBoxd(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("BOXD_CRASH_BIN"); p != "" {
		return p
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build boxd: %v", err)
	}
	home, _ := os.UserHomeDir()
	defaults := map[string]string{
		"CGO_ENABLED":  "1",
		"CGO_CPPFLAGS": "-I" + filepath.Join(home, ".cache", "boxd", "cgo-include"),
		"CGO_CFLAGS":   "-O2 -g -march=x86-64-v3",
		"CGO_CXXFLAGS": "-O2 -g -march=x86-64-v3",
	}
	env := os.Environ()
	for k, v := range defaults {
		if _, ok := os.LookupEnv(k); !ok {
			env = append(env, k+"="+v)
		}
	}
	dir := filepath.Join(os.TempDir(), "boxd-crashtest-bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "boxd")
	cmd := exec.Command(goBin, "build", "-o", out, "./cmd/boxd")
	cmd.Dir, cmd.Env = repoRoot(), env
	began := time.Now()
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/boxd: %v\n%s", err, b)
	}
	t.Logf("built boxd in %.1f s", time.Since(began).Seconds())
	return out
}

// proc is one boxd serve process.
type proc struct {
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
	msgs    chan string // sd_notify messages
	conn    *net.UnixConn
	started time.Time
	base    string // http://addr once ready
}

// spawner starts boxd serve processes on one state directory.
type spawner struct {
	bin   string
	args  []string
	env   []string
	dir   string // where notify sockets go
	log   *os.File
	count int
}

// spawn starts boxd; it does not wait for it to be ready.
func (s *spawner) spawn(t *testing.T) *proc {
	t.Helper()
	s.count++
	sock := filepath.Join(s.dir, fmt.Sprintf("notify-%d.sock", s.count))
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{exited: make(chan struct{}), msgs: make(chan string, 64), conn: conn}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				close(p.msgs)
				return
			}
			p.msgs <- string(buf[:n])
		}
	}()
	fmt.Fprintf(s.log, "=== start %d\n", s.count)
	p.cmd = exec.Command(s.bin, s.args...)
	p.cmd.Env = append(append([]string{}, s.env...), "NOTIFY_SOCKET="+sock)
	p.cmd.Stdout, p.cmd.Stderr = s.log, s.log
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		conn.Close()
		t.Fatalf("start boxd: %v", err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	// A test that stops early leaves no boxd behind.
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			p.kill()
		}
	})
	return p
}

// ready waits for READY=1 and returns the serving address; it fails at
// once if the process exits first.
func (p *proc) ready(t *testing.T, logTail func() string) {
	t.Helper()
	deadline := time.After(90 * time.Second)
	for {
		select {
		case m, ok := <-p.msgs:
			if !ok {
				t.Fatalf("notify socket closed before READY\n%s", logTail())
			}
			if i := strings.Index(m, "serving on "); strings.Contains(m, "READY=1") && i >= 0 {
				p.base = "http://" + strings.TrimSpace(m[i+len("serving on "):])
				return
			}
		case <-p.exited:
			t.Fatalf("boxd exited before it was ready (%v)\n%s", p.waitErr, logTail())
		case <-deadline:
			p.kill()
			t.Fatalf("boxd not ready after 90 s\n%s", logTail())
		}
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
	p.conn.Close()
}

// tail is the last n bytes of the servers' log.
func tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// serverEnv is the environment without BOXD_* settings, the notify and
// watchdog variables or TMPDIR, plus extra.
func serverEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "BOXD_") || strings.HasPrefix(kv, "NOTIFY_SOCKET=") || strings.HasPrefix(kv, "WATCHDOG_") || strings.HasPrefix(kv, "TMPDIR=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// orphans lists processes whose command line contains marker (the
// temporary directory boxd was given: chromium's profiles live there).
func orphans(marker string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	self := os.Getpid()
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(b, []byte(marker)) {
			continue
		}
		// A zombie (already exited, not yet reaped) holds nothing.
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:])); len(f) > 0 && f[0] == "Z" {
				continue
			}
		}
		out = append(out, pid)
	}
	return out
}

// waitOrphans waits up to limit for the processes under marker to end;
// the ones left are killed (by pid) and returned.
func waitOrphans(marker string, limit time.Duration) []int {
	end := time.Now().Add(limit)
	for {
		left := orphans(marker)
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(end) {
			for _, pid := range left {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}
