//go:build linux && amd64

package systemd_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"golang.org/x/sys/unix"

	"boxd/engine/models/testmodels"
)

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
	buildDir  string // removed by TestMain
)

// boxdBinary is the real binary, built once for the package's tests, or
// CONFINE_BOXD where a prepared one is given (the GPU check).
func boxdBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CONFINE_BOXD"); p != "" {
		return p
	}
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "boxd-unit-"); buildErr != nil {
			return
		}
		// /usr/bin's stand-in: the service user executes from it.
		if buildErr = os.Chmod(buildDir, 0o755); buildErr != nil {
			return
		}
		builtBin = filepath.Join(buildDir, "boxd")
		cmd := exec.Command("go", "build", "-o", builtBin, "./cmd/boxd")
		cmd.Dir = repoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// unitDirectives reads boxd.service.
func unitDirectives(t *testing.T) map[string][]string {
	t.Helper()
	unit, err := os.ReadFile("boxd.service")
	if err != nil {
		t.Fatal(err)
	}
	return directives(t, unit)
}

// writableDir makes the state directory's stand-in: owned by the service
// user, 0700, as StateDirectory= makes /var/lib/boxd.
func writableDir(t *testing.T, s spec) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, s.UID, s.GID); err != nil {
		t.Fatal(err)
	}
	return dir
}

// videoGID is the group the GPU's device nodes belong to where the driver
// restricts them (NVreg_DeviceFileGID; Debian's video group is 44).
func videoGID() int {
	if g, err := user.LookupGroup("video"); err == nil {
		if id, err := strconv.Atoi(g.Gid); err == nil {
			return id
		}
	}
	return 44
}

// probe runs inside the mirror (CONFINE_STAGE=probe) and reports, as JSON
// on stdout, what the sandbox lets it do: the checks that the mirror is
// the sandbox the unit describes (TestConfinedProbe).
func probe() int {
	res := map[string]string{}
	errName := func(err error) string {
		var e syscall.Errno
		switch {
		case err == nil:
			return "ok"
		case errors.As(err, &e):
			return unix.ErrnoName(e)
		default:
			return err.Error()
		}
	}
	status, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(status), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			switch k {
			case "Uid", "Gid", "Groups", "CapBnd", "CapEff", "NoNewPrivs", "Seccomp":
				res["status."+k] = strings.Join(strings.Fields(v), " ")
			}
		}
	}
	// @resources is filtered out: lowering one's own priority and setting
	// one's own CPU affinity, which any user may do, fail.
	res["setpriority"] = errName(unix.Setpriority(unix.PRIO_PROCESS, 0, 10))
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		res["sched_setaffinity"] = "getaffinity: " + errName(err)
	} else {
		res["sched_setaffinity"] = errName(unix.SchedSetaffinity(0, &set))
	}
	// @debug is not in @system-service.
	_, _, e := unix.RawSyscall6(unix.SYS_PERF_EVENT_OPEN, 0, 0, ^uintptr(0), ^uintptr(0), 0, 0)
	res["perf_event_open"] = errName(errOrNil(e))
	// RestrictAddressFamilies=.
	for name, fam := range map[string]int{"netlink": unix.AF_NETLINK, "packet": unix.AF_PACKET, "inet": unix.AF_INET, "inet6": unix.AF_INET6, "unix": unix.AF_UNIX} {
		typ := unix.SOCK_DGRAM
		if fam == unix.AF_NETLINK || fam == unix.AF_PACKET {
			typ = unix.SOCK_RAW
		}
		fd, err := unix.Socket(fam, typ|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
		}
		res["socket."+name] = errName(err)
	}
	// RestrictNamespaces=true.
	res["unshare_user"] = errName(unix.Unshare(unix.CLONE_NEWUSER))
	res["unshare_net"] = errName(unix.Unshare(unix.CLONE_NEWNET))
	_, _, e = unix.RawSyscall(unix.SYS_CLONE3, 0, 0, 0)
	res["clone3"] = errName(errOrNil(e))
	// ProtectProc=invisible: init (root) and the mirror's stage 2 (root)
	// are not in /proc; this process is.
	_, err := os.Stat("/proc/1")
	res["proc_init"] = errName(err)
	_, err = os.Stat(fmt.Sprintf("/proc/%d", os.Getpid()))
	res["proc_self"] = errName(err)
	// The network: loopback only.
	c, err := net.DialTimeout("tcp", "192.0.2.1:80", 3*time.Second)
	if c != nil {
		c.Close()
	}
	res["connect_public"] = errName(err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err == nil {
		c, err = net.Dial("tcp", ln.Addr().String())
		if c != nil {
			c.Close()
		}
		ln.Close()
	}
	res["loopback"] = errName(err)
	// ProtectSystem=strict, ProtectHome=true, PrivateTmp=true.
	f, err := os.Create("/usr/.boxd-probe")
	if f != nil {
		f.Close()
		os.Remove(f.Name())
	}
	res["write_usr"] = errName(err)
	f, err = os.Create(filepath.Join(os.Getenv("CONFINE_WRITABLE"), "probe"))
	if f != nil {
		f.Close()
	}
	res["write_state"] = errName(err)
	_, err = os.ReadDir("/home")
	res["read_home"] = errName(err)
	_, err = os.Stat(os.Getenv("CONFINE_HOST_TMP_FILE"))
	res["host_tmp_file"] = errName(err)
	// The GPU's device nodes (stand-ins): one of the user's (unmapped)
	// supplementary group, one of another group.
	for i, p := range strings.Split(os.Getenv("CONFINE_NODES"), ",") {
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if f != nil {
			f.Close()
		}
		res["node"+strconv.Itoa(i)] = errName(err)
	}
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
	return 0
}

func errOrNil(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// TestConfinedProbe checks the mirror itself, so that a box serving in it
// means something: inside it a process is the service user with no
// capabilities and no_new_privs, under the seccomp filter (the calls the
// unit filters out fail with EPERM, the address families and namespaces
// it restricts are refused), sees no other user's processes in /proc,
// reaches loopback only, writes only to the state directory, sees neither
// /home nor the host's /tmp, and still opens a device node through a
// supplementary group the user namespace does not map (the GPU's, where
// the driver gives its nodes to video).
func TestConfinedProbe(t *testing.T) {
	needMirror(t)
	s := mirrorSpec(t, unitDirectives(t))
	t.Logf("policy: %s", s.Policy)
	s.Writable = writableDir(t, s)
	video := videoGID()
	s.Groups = []int{video}

	// The device nodes (char 1:3, /dev/null's) on the state directory's
	// file system: mode 0660, one of group video, one of a group the
	// user is not in.
	var nodes []string
	for i, gid := range []int{video, 6} {
		p := filepath.Join(t.TempDir(), "nvidia"+strconv.Itoa(i))
		if err := unix.Mknod(p, unix.S_IFCHR|0o660, int(unix.Mkdev(1, 3))); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, 0, gid); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0o660); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, p)
		s.Keep = append(s.Keep, filepath.Dir(p))
	}
	// A file in the host's /tmp the private /tmp must not show.
	hostTmp, err := os.CreateTemp("/tmp", "boxd-confine-host-")
	if err != nil {
		t.Fatal(err)
	}
	hostTmp.Close()
	t.Cleanup(func() { os.Remove(hostTmp.Name()) })

	s.Argv = []string{"self"}
	s.Env = []string{stageEnv + "=probe", "CONFINE_WRITABLE=" + s.Writable, "CONFINE_NODES=" + strings.Join(nodes, ","),
		"CONFINE_HOST_TMP_FILE=" + hostTmp.Name(), "PATH=/usr/bin:/bin"}
	c := startConfined(t, s)
	if code := c.wait(t, time.Minute); code != 0 {
		t.Fatalf("probe exited %d:\n%s", code, c.out)
	}
	out := c.out.String()
	var res map[string]string
	if err := json.Unmarshal([]byte(out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:]), &res); err != nil {
		t.Fatalf("probe output: %v\n%s", err, out)
	}
	t.Logf("probe: %v", res)
	for k, want := range map[string]string{
		"status.Uid": "65534 65534 65534 65534", "status.Gid": "65534 65534 65534 65534",
		// The unmapped video group shows as the overflow group.
		"status.Groups": "65534",
		"status.CapBnd": "0000000000000000", "status.CapEff": "0000000000000000", "status.NoNewPrivs": "1", "status.Seccomp": "2",
		"setpriority": "EPERM", "sched_setaffinity": "EPERM", "perf_event_open": "EPERM",
		"socket.netlink": "EAFNOSUPPORT", "socket.packet": "EAFNOSUPPORT", "socket.inet": "ok", "socket.inet6": "ok", "socket.unix": "ok",
		"unshare_user": "EPERM", "unshare_net": "EPERM", "clone3": "ENOSYS",
		"proc_init": "ENOENT", "proc_self": "ok",
		"connect_public": "ENETUNREACH", "loopback": "ok",
		"write_usr": "EROFS", "write_state": "ok", "read_home": "EACCES", "host_tmp_file": "ENOENT",
		"node0": "ok", "node1": "EACCES",
	} {
		if got := res[k]; !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
}

// wavPCM reads a 16 kHz mono PCM16 WAV file's samples.
func wavPCM(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		t.Fatalf("%s is not a WAV file", path)
	}
	for off := 12; off+8 <= len(b); {
		id, n := string(b[off:off+4]), int(binary.LittleEndian.Uint32(b[off+4:off+8]))
		if id == "fmt " && (binary.LittleEndian.Uint16(b[off+10:]) != 1 || binary.LittleEndian.Uint32(b[off+12:]) != 16000) {
			t.Fatalf("%s is not 16 kHz mono", path)
		}
		if id == "data" {
			return b[off+8 : min(off+8+n, len(b))]
		}
		off += 8 + n + n%2
	}
	t.Fatalf("%s has no data chunk", path)
	return nil
}

// TestConfinedBox runs the real boxd in the mirror of the unit's sandbox
// and uses it as a client would: it starts (READY=1, watchdog pings), and
// /healthz, /metrics, a chat completion (llama.cpp), a live session with
// speech (Whisper, the VAD), the document reader (MuPDF, Tesseract, in its
// worker process) and an accessibility audit (chromium and its renderer)
// all answer; SIGTERM stops it cleanly. It also counts the run's tasks
// (TasksMax=).
func TestConfinedBox(t *testing.T) {
	needMirror(t)
	if testing.Short() {
		t.Skip("builds boxd and runs every engine: not in -short")
	}
	if _, err := exec.LookPath("chromium"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium not found (make deps installs it)")
		}
		t.Skip("chromium not found")
	}
	s := mirrorSpec(t, unitDirectives(t))
	s.Writable = writableDir(t, s)
	s.Groups = []int{videoGID()}

	root, bin := repoRoot(), boxdBinary(t)
	llm := testmodels.Shared(t, "stories260K.gguf")
	vad := testmodels.Shared(t, "ggml-silero-v6.2.0.bin")
	asr := testmodels.Generated(t, testmodels.WhisperMicroGGUF)
	speech := wavPCM(t, testmodels.Shared(t, "jfk.wav"))
	data := os.Getenv("BOXD_TEST_DATA")
	if data == "" {
		data = filepath.Join(root, "..", "shared", "data")
	}
	axe := filepath.Join(root, "pipelines/a11y/axe/npm/node_modules/axe-core")
	if _, err := os.Stat(filepath.Join(axe, "axe.min.js")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("axe-core: %v (make deps)", err)
		}
		t.Skipf("axe-core: %v", err)
	}
	config := filepath.Join(t.TempDir(), "boxd.yaml")
	if err := os.WriteFile(config, []byte("shutdown_grace_s: 10\na11y:\n  axe_dir: \""+axe+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Read-only inputs (on a box: /usr/bin/boxd, /etc/boxd, /usr/share/boxd).
	for _, p := range []string{bin, config, llm, vad, asr, data, axe} {
		s.Keep = append(s.Keep, filepath.Dir(p))
	}
	notify, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: filepath.Join(s.Writable, "notify"), Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer notify.Close()
	if err := os.Chmod(filepath.Join(s.Writable, "notify"), 0o777); err != nil {
		t.Fatal(err)
	}
	msgs := make(chan string, 1024)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := notify.Read(buf)
			if err != nil {
				close(msgs)
				return
			}
			msgs <- string(buf[:n])
		}
	}()

	s.Argv = []string{bin, "serve", "--config", config, "--state-dir", filepath.Join(s.Writable, "state"), "--listen", "127.0.0.1:0",
		"--data-dir", data, "--models-llm-path", llm, "--models-llm-template", "mistral", "--models-asr-path", asr,
		"--models-vad-path", vad, "--log-format", "json"}
	// What systemd gives a User= service: its home (the boxd user's is
	// /var/lib/boxd, the state directory), the default PATH, the notify
	// socket and the watchdog (2 s here, so that pings come at once).
	s.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin", "HOME=" + s.Writable, "USER=nobody", "LANG=C.UTF-8",
		"NOTIFY_SOCKET=" + filepath.Join(s.Writable, "notify"), "WATCHDOG_USEC=2000000"}
	c := startConfined(t, s)
	waitFor := func(want string, timeout time.Duration) string {
		t.Helper()
		deadline := time.After(timeout)
		for {
			select {
			case m, ok := <-msgs:
				if !ok {
					t.Fatalf("notify socket closed waiting for %q", want)
				}
				if strings.Contains(m, want) {
					return m
				}
			case <-c.exited:
				t.Fatalf("boxd exited (%v) waiting for %q:\n%s", c.err, want, c.out)
			case <-deadline:
				t.Fatalf("no %q within %s:\n%s", want, timeout, c.out)
			}
		}
	}
	ready := waitFor("READY=1", 3*time.Minute)
	addr := strings.TrimSpace(ready[strings.Index(ready, "serving on ")+len("serving on "):])
	waitFor("WATCHDOG=1", 10*time.Second)
	base := "http://" + addr
	hc := c.client(t)
	call := func(method, path, token string, body any) (int, []byte) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, base+path, rd)
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", method, path, err, c.out)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	session := func(vertical string) string {
		t.Helper()
		code, b := call("POST", "/demo/session", "", map[string]string{"vertical": vertical})
		var r struct{ Token string }
		if code != 200 || json.Unmarshal(b, &r) != nil || r.Token == "" {
			t.Fatalf("demo session %s: %d %s", vertical, code, b)
		}
		return r.Token
	}

	code, b := call("GET", "/healthz", "", nil)
	var h map[string]any
	if code != 200 || json.Unmarshal(b, &h) != nil || h["llm"] != true || h["asr"] != true {
		t.Errorf("/healthz: %d %s", code, b)
	}
	if code, b := call("GET", "/metrics", "", nil); code != 200 || !bytes.Contains(b, []byte("boxd_build_info")) || !bytes.Contains(b, []byte("process_resident_memory_bytes")) {
		t.Errorf("/metrics: %d %.300s", code, b)
	}
	if code, b := call("POST", "/v1/chat/completions", session("code"),
		map[string]any{"model": "model-27b", "messages": []map[string]string{{"role": "user", "content": "Hello"}}, "max_tokens": 8}); code != 200 || !bytes.Contains(b, []byte(`"choices"`)) {
		t.Errorf("chat completion: %d %s", code, b)
	}
	t.Run("speech", func(t *testing.T) { liveSpeech(t, hc, addr, session("field"), speech) })
	if code, b := call("POST", "/docreader/read", session("clinical"), map[string]any{"sample": "scanned-chart"}); code != 200 || !bytes.Contains(b, []byte(`"pages"`)) {
		t.Errorf("document reader: %d %.500s", code, b)
	}

	// The audit, counting the run's tasks while chromium works.
	peak, oom, stop := 0, -1, make(chan struct{})
	var peakBy map[string]int
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if n, by := c.tasks(); n > peak {
				peak, peakBy = n, by
			}
			oom = max(oom, c.rendererOOMScore())
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	code, b = call("POST", "/a11y/audit", session("storefront-accessibility-pass"), map[string]any{"sample_id": "shop-with-issues"})
	close(stop)
	<-sampled
	var audit struct{ Findings []any }
	if code != 200 || json.Unmarshal(b, &audit) != nil || len(audit.Findings) == 0 {
		t.Errorf("accessibility audit (chromium): %d %.500s", code, b)
	}
	t.Logf("tasks at most %d during the audit (TasksMax=%s), on %d CPUs: %v; renderer oom_score_adj %d", peak,
		unitDirectives(t)["Service.TasksMax"], runtime.NumCPU(), peakBy, oom)
	// OOMPolicy=continue relies on it: at MemoryMax= the kernel picks the
	// renderer (the page's memory) over boxd.
	if oom < 300 {
		t.Errorf("the chromium renderer's oom_score_adj in the sandbox is %d (-1: no renderer seen), want chromium's 300 or more", oom)
	}

	if err := syscall.Kill(c.pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitFor("STOPPING=1", 10*time.Second)
	if code := c.wait(t, time.Minute); code != 0 {
		t.Errorf("exit status %d after SIGTERM:\n%s", code, c.out)
	}
	// Nothing the sandbox refused went by unnoticed in boxd's own log;
	// what the programs it runs printed about refusals is shown. One
	// refusal is expected and said once: the unit refuses user namespaces
	// to the service, so chromium runs without its own sandbox
	// (engine/browser/ownsandbox.go, decisions.md).
	noOwnSandbox := 0
	for _, line := range strings.Split(c.out.String(), "\n") {
		refused := strings.Contains(strings.ToLower(line), "not permitted") || strings.Contains(line, "not supported") ||
			strings.Contains(line, "Permission denied") || strings.Contains(line, "Read-only file system")
		switch {
		case strings.HasPrefix(line, "{") && strings.Contains(line, "chromium runs without its own sandbox") && strings.Contains(line, "user namespaces"):
			noOwnSandbox++
		case refused && strings.HasPrefix(line, "{"):
			t.Errorf("boxd logged a refused operation: %s", line)
		case refused:
			t.Logf("refused, printed by a child: %.300s", line)
		}
	}
	if noOwnSandbox != 1 {
		t.Errorf("boxd said %d times that chromium runs without its own sandbox under the unit, want once", noOwnSandbox)
	}
}

// liveSpeech runs one live session: speech in 100 ms frames, stop, and
// every event until the socket closes; the VAD must cut at least one
// sentence and Whisper give it a final transcript.
func liveSpeech(t *testing.T, hc *http.Client, addr, token string, pcm []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws://"+addr+"/ws/live?vertical=field&token="+token, &websocket.DialOptions{HTTPClient: hc})
	if err != nil {
		t.Fatalf("dial /ws/live: %v", err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(8 << 20)
	for off := 0; off < len(pcm); off += 3200 {
		if err := conn.Write(ctx, websocket.MessageBinary, pcm[off:min(off+3200, len(pcm))]); err != nil {
			t.Fatalf("send audio: %v", err)
		}
	}
	if err := conn.Write(ctx, websocket.MessageText, []byte(`{"type":"stop"}`)); err != nil {
		t.Fatalf("send stop: %v", err)
	}
	finals, types := 0, map[string]int{}
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			if code := websocket.CloseStatus(err); code != websocket.StatusNormalClosure {
				t.Errorf("live session closed %d (%v); events %v", code, err, types)
			}
			break
		}
		var ev map[string]any
		if json.Unmarshal(data, &ev) != nil {
			t.Fatalf("not a JSON event: %.200s", data)
		}
		typ, _ := ev["type"].(string)
		types[typ]++
		if typ == "transcript" && ev["final"] == true {
			finals++
		}
		if typ == "error" {
			t.Errorf("error event: %s", data)
		}
	}
	t.Logf("live events: %v", types)
	if finals == 0 || types["ready"] != 1 || types["done"] != 1 {
		t.Errorf("live session: %d final transcripts, events %v", finals, types)
	}
}

// TestConfinedGPU lists the devices `boxd gpu` sees (ggml's backends loaded
// from gpu.library_path, as serve loads them) outside the sandbox and in
// its mirror: the lists must be the same. Here, without a GPU, that is the
// CPU; on a machine with NVIDIA's driver and the CUDA backend
// (CONFINE_GPU_LIBS, the directory `make cuda` fills; CONFINE_BOXD a
// prepared binary) at least one GPU must be listed in both, with its free
// memory: the user namespace, the seccomp filter and ProtectProc= leave
// the GPU usable. (DeviceAllow= is the device cgroup, which the mirror does
// not build: systemd-analyze verify checks it.)
func TestConfinedGPU(t *testing.T) {
	needMirror(t)
	if testing.Short() {
		t.Skip("builds boxd: not in -short")
	}
	libs := os.Getenv("CONFINE_GPU_LIBS")
	if libs == "" {
		libs = filepath.Join(repoRoot(), "build", "lib", "ollama")
	}
	_, errDev := os.Stat("/dev/nvidiactl")
	_, errLib := os.Stat(filepath.Join(libs, "libggml-cuda.so"))
	wantGPU := errDev == nil && errLib == nil
	if errDev == nil && errLib != nil {
		t.Logf("an NVIDIA driver but no CUDA backend in %s (make cuda, or CONFINE_GPU_LIBS): the CPU only", libs)
	}
	bin := boxdBinary(t)
	args := []string{bin, "gpu", "--json", "--gpu-library-path", libs}
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin", "LANG=C.UTF-8"}

	type listing struct {
		Devices []struct {
			Name       string `json:"name"`
			Kind       string `json:"kind"`
			FreeBytes  uint64 `json:"free_bytes"`
			TotalBytes uint64 `json:"total_bytes"`
		} `json:"devices"`
	}
	read := func(what string, out []byte) listing {
		t.Helper()
		var l listing
		line := strings.TrimSpace(string(out))
		if i := strings.LastIndex(line, "\n{"); i >= 0 {
			line = line[i+1:]
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil || len(l.Devices) == 0 {
			t.Fatalf("boxd gpu %s: %v\n%s", what, err, out)
		}
		return l
	}
	cmd := exec.Command(bin, args[1:]...)
	cmd.Env, cmd.Dir = env, t.TempDir()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("boxd gpu: %v\n%s", err, out)
	}
	free := read("outside", out)

	s := mirrorSpec(t, unitDirectives(t))
	s.Writable = writableDir(t, s)
	s.Groups = []int{videoGID()}
	s.Keep = []string{filepath.Dir(bin), libs}
	s.Argv = args
	s.Env = append(env, "HOME="+s.Writable)
	c := startConfined(t, s)
	if code := c.wait(t, 2*time.Minute); code != 0 {
		t.Fatalf("boxd gpu in the sandbox exited %d:\n%s", code, c.out)
	}
	in := read("in the sandbox", []byte(c.out.String()))
	t.Logf("outside: %+v\nin the sandbox: %+v", free.Devices, in.Devices)
	if len(in.Devices) != len(free.Devices) {
		t.Fatalf("the sandbox sees %d devices, %d outside", len(in.Devices), len(free.Devices))
	}
	gpus := 0
	for i, d := range in.Devices {
		o := free.Devices[i]
		if d.Name != o.Name || d.Kind != o.Kind || d.TotalBytes != o.TotalBytes {
			t.Errorf("device %d: %+v in the sandbox, %+v outside", i, d, o)
		}
		if d.Kind == "gpu" || d.Kind == "igpu" {
			gpus++
			if d.FreeBytes == 0 {
				t.Errorf("GPU %s: no free memory seen in the sandbox", d.Name)
			}
		}
	}
	if wantGPU && gpus == 0 {
		t.Errorf("the driver and the CUDA backend are here, but no GPU is listed in the sandbox")
	}
}
