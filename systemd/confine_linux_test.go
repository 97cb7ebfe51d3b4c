//go:build linux && amd64

package systemd_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The mirror: where systemd cannot run (no systemd as PID 1 here, nor in
// CI), the unit's sandbox is built with the same kernel mechanisms and the
// real binary is run in it. The test binary does it in two stages, as
// systemd's exec does:
//
//   - stage 2 starts, as root, in a mount namespace of its own, with the
//     user's supplementary groups: it mounts what ProtectSystem=strict,
//     ProtectHome=true, PrivateTmp=true and ProtectProc= mount (read-only
//     file system but for the state directory, /dev and the private /tmp,
//     empty /home and /root, a /proc with hidepid=), then starts stage 3;
//   - stage 3 starts in a new user namespace mapping only root and the
//     service user to themselves (PrivateUsers=true; the groups set before
//     stay, unmapped, as systemd leaves them) and a network namespace with
//     only loopback (a stricter stand-in for IPAddressDeny=any with
//     IPAddressAllow=localhost, which systemd enforces with a cgroup BPF
//     program), drops the capability bounding set (CapabilityBoundingSet=),
//     becomes the service user, sets no_new_privs (NoNewPrivileges=),
//     loads the seccomp filter of policy.program (SystemCallFilter=,
//     SystemCallErrorNumber=, SystemCallArchitectures=,
//     RestrictAddressFamilies=, RestrictNamespaces=) and executes the
//     program.
//
// Paths the test needs that the mounts would hide (inputs under /tmp or
// /root, like the test models, and the state directory's stand-in) are
// put back at the same place, read-only but for the state directory: on a
// real box they live in /usr/share/boxd and /var/lib/boxd.
const (
	stageEnv = "CONFINE_STAGE"
	specEnv  = "CONFINE_SPEC"
)

// spec is one confined run: the unit's sandbox (mirrorSpec) and what runs
// in it.
type spec struct {
	Policy     policy
	Proc       string // the service's /proc mount options (ProtectProc=, ProcSubset=)
	Users      bool   // PrivateUsers=true
	UID, GID   int    // the service user (User=, Group=)
	Groups     []int  // its supplementary groups
	System     bool   // ProtectSystem=strict
	Home       bool   // ProtectHome=true
	Tmp        bool   // PrivateTmp=true
	Loopback   bool   // IPAddressDeny=any, IPAddressAllow=localhost
	NoCaps     bool   // CapabilityBoundingSet= (empty)
	NoNewPrivs bool   // NoNewPrivileges=true
	Writable   string // the state directory's stand-in, the one writable path
	Keep       []string
	Argv       []string // Argv[0] "self" is this test binary
	Env        []string
}

// mirrorSpec reads the unit's sandbox into a spec; a directive the mirror
// cannot reproduce as written fails the test rather than being skipped.
func mirrorSpec(t *testing.T, d map[string][]string) spec {
	t.Helper()
	one := func(key string) string {
		v := d["Service."+key]
		if len(v) != 1 {
			t.Fatalf("%s=%q: the mirror needs exactly one value", key, v)
		}
		return v[0]
	}
	s := spec{Policy: unitPolicy(t, d), UID: 65534, GID: 65534}
	switch v := one("ProtectProc"); v {
	case "invisible", "noaccess", "ptraceable":
		s.Proc = "hidepid=" + v
	default:
		t.Fatalf("ProtectProc=%s: not mirrored", v)
	}
	if v := d["Service.ProcSubset"]; len(v) > 0 {
		if !slices.Equal(v, []string{"pid"}) {
			t.Fatalf("ProcSubset=%q: not mirrored", v)
		}
		s.Proc += ",subset=pid"
	}
	s.Users = one("PrivateUsers") == "true"
	s.System = one("ProtectSystem") == "strict"
	s.Home = one("ProtectHome") == "true"
	s.Tmp = one("PrivateTmp") == "true"
	s.NoNewPrivs = one("NoNewPrivileges") == "true"
	s.NoCaps = one("CapabilityBoundingSet") == "" && one("AmbientCapabilities") == ""
	s.Loopback = one("IPAddressDeny") == "any" && one("IPAddressAllow") == "localhost"
	if !s.Users || !s.System || !s.Home || !s.Tmp || !s.NoNewPrivs || !s.NoCaps || !s.Loopback {
		t.Fatalf("the unit's sandbox is not the one the mirror reproduces: %+v", s)
	}
	return s
}

// needMirror skips (fails under CI=true) where the mirror cannot be built:
// it needs root (mount and user namespaces, setns) and systemd-analyze.
func needMirror(t *testing.T) {
	t.Helper()
	why := ""
	if os.Geteuid() != 0 {
		why = "the unit's mirror needs root (namespaces, mounts)"
	} else if err := exec.Command("unshare", "--user", "--mount", "--net", "true").Run(); err != nil {
		why = fmt.Sprintf("no user, mount and network namespaces here: %v", err)
	}
	if why == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
}

func TestMain(m *testing.M) {
	switch os.Getenv(stageEnv) {
	case "":
		code := m.Run()
		if buildDir != "" {
			os.RemoveAll(buildDir)
		}
		os.Exit(code)
	case "2":
		os.Exit(stage2())
	case "3":
		stage3()
		os.Exit(127)
	case "probe":
		os.Exit(probe())
	default:
		fmt.Fprintf(os.Stderr, "unknown %s=%s\n", stageEnv, os.Getenv(stageEnv))
		os.Exit(2)
	}
}

// readSpec reads the spec the stage was started with (JSON in specEnv: a
// file could be hidden by the mounts).
func readSpec() (spec, error) {
	var s spec
	err := json.Unmarshal([]byte(os.Getenv(specEnv)), &s)
	return s, err
}

func fail(stage string, err error) int {
	fmt.Fprintf(os.Stderr, "confine %s: %v\n", stage, err)
	return 126
}

// stage2 mounts the service's file system view and runs stage 3 in it,
// passing on SIGTERM and SIGINT; it exits with stage 3's status.
func stage2() int {
	s, err := readSpec()
	if err != nil {
		return fail("2", err)
	}
	// fd 3 is where the test reads the program's pid; nothing started
	// from here inherits it.
	pidPipe := os.NewFile(3, "pid")
	unix.CloseOnExec(3)
	if err := mounts(s); err != nil {
		return fail("2: mounts", err)
	}
	cmd := exec.Command("/proc/self/exe")
	cmd.Env = append(os.Environ(), stageEnv+"=3")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	attr := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if s.Users {
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}, {ContainerID: s.UID, HostID: s.UID, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}, {ContainerID: s.GID, HostID: s.GID, Size: 1}}
	}
	if s.Loopback {
		attr.Cloneflags |= syscall.CLONE_NEWNET
	}
	cmd.SysProcAttr = attr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	if err := cmd.Start(); err != nil {
		return fail("2: start stage 3", err)
	}
	if _, err := fmt.Fprintf(pidPipe, "%d\n", cmd.Process.Pid); err != nil {
		return fail("2", err)
	}
	pidPipe.Close()
	go func() {
		for sig := range sigs {
			_ = cmd.Process.Signal(sig)
		}
	}()
	if err := cmd.Wait(); err != nil && cmd.ProcessState == nil {
		return fail("2: wait", err)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}

// under reports whether path is dir or inside it.
func under(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}

// mounts builds the unit's file system view in stage 2's mount namespace.
func mounts(s spec) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	// The state directory is a mount of its own, so that it alone can be
	// writable below.
	if err := unix.Mount(s.Writable, s.Writable, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", s.Writable, err)
	}
	type cover struct {
		dir, mode string
	}
	var covers []cover
	if s.Tmp {
		covers = append(covers, cover{"/tmp", "1777"}, cover{"/var/tmp", "1777"})
	}
	if s.Home {
		covers = append(covers, cover{"/home", "0000"}, cover{"/root", "0000"}, cover{"/run/user", "0000"})
	}
	// Detached copies of what must stay visible under a covered directory.
	type kept struct {
		path string
		fd   int
	}
	var keep []kept
	for _, p := range append([]string{s.Writable}, s.Keep...) {
		if _, err := os.Stat(p); err != nil {
			continue // nothing to keep
		}
		for i, c := range covers {
			if !under(p, c.dir) {
				continue
			}
			fd, err := unix.OpenTree(unix.AT_FDCWD, p, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
			if err != nil {
				return fmt.Errorf("open_tree %s: %w", p, err)
			}
			keep = append(keep, kept{p, fd})
			if c.mode == "0000" {
				covers[i].mode = "0755" // a directory to pass through on the way
			}
		}
	}
	for _, c := range covers {
		if _, err := os.Stat(c.dir); err != nil {
			continue
		}
		if err := unix.Mount("tmpfs", c.dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode="+c.mode); err != nil {
			return fmt.Errorf("cover %s: %w", c.dir, err)
		}
	}
	for _, k := range keep {
		if err := os.MkdirAll(k.path, 0o755); err != nil {
			return err
		}
		if err := unix.MoveMount(k.fd, "", unix.AT_FDCWD, k.path, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("put back %s: %w", k.path, err)
		}
		unix.Close(k.fd)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, s.Proc); err != nil {
		return fmt.Errorf("mount /proc (%s): %w", s.Proc, err)
	}
	if !s.System {
		return nil
	}
	// ProtectSystem=strict: everything read-only but the API file systems
	// (/dev, /proc; /sys stays read-only, as ProtectKernelTunables makes
	// it), the private /tmp and /var/tmp and the state directory.
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fmt.Errorf("read-only /: %w", err)
	}
	writable := []string{"/dev", "/proc", s.Writable}
	if s.Tmp {
		writable = append(writable, "/tmp", "/var/tmp")
	}
	for _, w := range writable {
		flags := uint(0)
		if w == "/dev" {
			flags = unix.AT_RECURSIVE // /dev/shm: chromium's shared memory
		}
		if err := unix.MountSetattr(unix.AT_FDCWD, w, flags, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}); err != nil {
			return fmt.Errorf("writable %s: %w", w, err)
		}
	}
	return nil
}

// stage3 finishes the sandbox from inside the new user and network
// namespaces and executes the program; it returns only on failure.
func stage3() {
	s, err := readSpec()
	if err != nil {
		fail("3", err)
		return
	}
	if s.Loopback {
		if err := loopbackUp(); err != nil {
			fail("3: lo", err)
			return
		}
	}
	// Everything below acts on this thread, which executes the program.
	runtime.LockOSThread()
	if s.NoCaps {
		// Every capability this kernel knows: past the last one the
		// kernel answers EINVAL.
		for c := 0; ; c++ {
			err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
			if err == unix.EINVAL && c > unix.CAP_SYS_ADMIN {
				break
			}
			if err != nil {
				fail("3: drop capability "+strconv.Itoa(c), err)
				return
			}
		}
	}
	// The raw calls change this thread only (Go's Setresuid would change
	// every thread): the one that executes the program.
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESGID, uintptr(s.GID), uintptr(s.GID), uintptr(s.GID)); e != 0 {
		fail("3: setresgid", e)
		return
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, uintptr(s.UID), uintptr(s.UID), uintptr(s.UID)); e != 0 {
		fail("3: setresuid", e)
		return
	}
	if s.NoNewPrivs {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			fail("3: no_new_privs", err)
			return
		}
	}
	argv0 := s.Argv[0]
	if argv0 == "self" {
		argv0 = "/proc/self/exe"
	}
	env := append(slices.Clone(s.Env), "WATCHDOG_PID="+strconv.Itoa(os.Getpid()))
	prog := s.Policy.program()
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, e := unix.RawSyscall(unix.SYS_PRCTL, unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		fail("3: seccomp", e)
		return
	}
	runtime.KeepAlive(prog)
	err = syscall.Exec(argv0, s.Argv, env)
	fail("3: exec "+argv0, err)
}

// loopbackUp brings up lo in a new network namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// confined is a running confined program.
type confined struct {
	cmd    *exec.Cmd // stage 2
	pid    int       // the program (stage 3, then what it executed)
	mntNS  string    // stage 2's mount namespace: every process of the run
	exited chan struct{}
	err    error
	out    *syncBuffer
}

// syncBuffer is a bytes.Buffer safe for the process's writes and the
// test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startConfined runs s.Argv in the mirror; everything it started is killed
// when the test ends.
func startConfined(t *testing.T, s spec) *confined {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	groups := make([]uint32, len(s.Groups))
	for i, g := range s.Groups {
		groups[i] = uint32(g)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	c := &confined{exited: make(chan struct{}), out: &syncBuffer{}}
	c.cmd = exec.Command("/proc/self/exe")
	c.cmd.Env = append(os.Environ(), stageEnv+"=2", specEnv+"="+string(b))
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.out
	c.cmd.ExtraFiles = []*os.File{pw}
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL,
		Credential: &syscall.Credential{Uid: 0, Gid: 0, Groups: groups}}
	// Pdeathsig is tied to the thread that forks, not to the process:
	// client's dials lock a thread and end it, and were that thread the
	// one that started stage 2, stage 2 would be killed mid-run (and the
	// program, which changed credentials and so lost its own Pdeathsig,
	// would run on unwatched). The thread that starts stage 2 stays
	// locked to this goroutine until stage 2 ends.
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := c.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		c.err = c.cmd.Wait()
		close(c.exited)
	}()
	err = <-started
	pw.Close()
	if err != nil {
		t.Fatal(err)
	}
	c.mntNS, _ = os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", c.cmd.Process.Pid))
	t.Cleanup(c.kill)
	// The pid, or EOF when stage 2 failed first.
	_ = pr.SetReadDeadline(time.Now().Add(time.Minute))
	line, _ := bufio.NewReader(pr).ReadString('\n')
	if c.pid, err = strconv.Atoi(strings.TrimSpace(line)); err != nil {
		select {
		case <-c.exited:
		case <-time.After(5 * time.Second):
		}
		t.Fatalf("the mirror did not start the program (%q, %v):\n%s", line, c.err, c.out)
	}
	return c
}

// processes are the pids of every process of the run: those in stage 2's
// mount namespace (none outside the run is).
func (c *confined) processes() []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", pid)); err == nil && ns == c.mntNS && c.mntNS != "" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// tasks counts the threads of every process of the run (what TasksMax=
// counts), in all and by program name.
func (c *confined) tasks() (int, map[string]int) {
	n, by := 0, map[string]int{}
	for _, pid := range c.processes() {
		ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		n += len(ents)
		by[strings.TrimSpace(string(comm))] += len(ents)
	}
	return n, by
}

// rendererOOMScore is the highest oom_score_adj of the run's chromium
// renderers (-1 without one): chromium raises it so that the kernel, at
// the unit's MemoryMax=, kills a renderer before boxd.
func (c *confined) rendererOOMScore() int {
	best := -1
	for _, pid := range c.processes() {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if !bytes.Contains(cmdline, []byte("--type=renderer")) {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/oom_score_adj", pid))
		if n, err2 := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && err2 == nil {
			best = max(best, n)
		}
	}
	return best
}

func (c *confined) kill() {
	for _, pid := range c.processes() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	_ = c.cmd.Process.Kill()
	<-c.exited
}

// wait waits for the run to end and returns stage 2's exit code.
func (c *confined) wait(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-c.exited:
	case <-time.After(timeout):
		t.Fatalf("still running after %s:\n%s", timeout, c.out)
	}
	return c.cmd.ProcessState.ExitCode()
}

// client is an HTTP client whose connections are made inside the run's
// network namespace (the program's loopback is not the test's).
func (c *confined) client(t *testing.T) *http.Client {
	t.Helper()
	fd, err := unix.Open(fmt.Sprintf("/proc/%d/ns/net", c.pid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		type result struct {
			c   net.Conn
			err error
		}
		ch := make(chan result, 1)
		go func() {
			// The thread is never unlocked: it ends with this goroutine
			// and its namespace with it. The socket stays in the
			// namespace it was made in.
			runtime.LockOSThread()
			if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
				ch <- result{nil, fmt.Errorf("setns: %w", err)}
				return
			}
			var d net.Dialer
			conn, err := d.DialContext(ctx, network, addr)
			ch <- result{conn, err}
		}()
		r := <-ch
		return r.c, r.err
	}
	return &http.Client{Timeout: 5 * time.Minute, Transport: &http.Transport{DialContext: dial}}
}
