package browser

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestOwnSandboxDecision: chromium's own sandbox is on unless boxd runs
// as root or the kernel refuses unprivileged user namespaces, and the
// reason says which and what to do.
func TestOwnSandboxDecision(t *testing.T) {
	ok := func() error { return nil }
	refused := func() error { return errors.New("operation not permitted") }
	for _, c := range []struct {
		euid int
		ns   func() error
		own  bool
		says string
	}{
		{0, ok, false, "runs as root"},
		{0, refused, false, "runs as root"},
		{998, refused, false, "unprivileged user namespaces"},
		{998, ok, true, ""},
	} {
		own, why := ownSandbox(c.euid, c.ns)
		if own != c.own || !strings.Contains(why, c.says) || (own && why != "") {
			t.Errorf("euid %d: own %v (%q), want %v saying %q", c.euid, own, why, c.own, c.says)
		}
	}
}

// childEnv marks the re-run of TestChromiumOwnSandbox as another user.
const childEnv = "BOXD_TEST_OWN_SANDBOX_CHILD"

// TestChromiumOwnSandbox: the renderer of a tab runs under chromium's
// seccomp sandbox (Seccomp: 2 in its /proc status) when boxd is not root;
// as root it runs with --no-sandbox (Seccomp: 0) and the pool says why.
// Run as root (as CI is), the test runs itself again as nobody (setpriv)
// for the sandboxed half.
func TestChromiumOwnSandbox(t *testing.T) {
	p := newPool(t, 1)
	own, why := p.OwnSandbox()
	wantSeccomp := "0"
	if own {
		wantSeccomp = "2"
	}
	if got := rendererSeccomp(t, p); got != wantSeccomp {
		t.Errorf("own sandbox %v (%s): the renderer's Seccomp is %q, want %s", own, why, got, wantSeccomp)
	}
	if os.Getenv(childEnv) != "" {
		if !own {
			t.Fatalf("as user %d chromium's own sandbox is off: %s", os.Geteuid(), why)
		}
		return
	}
	if os.Geteuid() != 0 {
		if !own {
			t.Logf("chromium's own sandbox is off here: %s", why)
		}
		return
	}
	if own || !strings.Contains(why, "root") {
		t.Errorf("as root: own %v, %q", own, why)
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Fatalf("setpriv (util-linux, make deps) runs the sandboxed half as nobody: %v", err)
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no user nobody: %v", err)
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	gid, _ := strconv.Atoi(nobody.Gid)
	// The test binary and a home and temporary directory nobody may use.
	dir, err := os.MkdirTemp("", "boxd-own-sandbox-") // t.TempDir's parent is root's alone
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "browser.test")
	if err := copyFile(os.Args[0], bin, 0o755); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(home, uid, gid); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), setpriv, "--reuid="+nobody.Uid, "--regid="+nobody.Gid, "--clear-groups",
		bin, "-test.run", "^TestChromiumOwnSandbox$", "-test.count", "1", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"=1", "HOME="+home, "TMPDIR="+home,
		"BOXD_BROWSER_SANDBOX=0") // the child runs inside this test's network walls, as it is
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestChromiumOwnSandbox") {
		t.Errorf("as nobody: %v\n%s", err, out)
	}
}

// rendererSeccomp opens a tab and reads the Seccomp mode of its renderer
// process (a child of the tab's chromium with --type=renderer).
func rendererSeccomp(t *testing.T, p *Pool) string {
	t.Helper()
	tab, err := p.Open(context.Background(), Policy{Network: Offline})
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	if err := tab.LoadHTML(`<!doctype html><title>s</title><p>sandboxed?</p>`); err != nil {
		t.Fatal(err)
	}
	c := chromedp.FromContext(tab.Context())
	if c == nil || c.Browser == nil || c.Browser.Process() == nil {
		t.Fatal("no browser process")
	}
	root := c.Browser.Process().Pid
	for _, pid := range descendants(root) {
		cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), "--type=renderer") {
			continue
		}
		status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(l, "Seccomp:"); ok {
				return strings.TrimSpace(v)
			}
		}
	}
	t.Fatalf("no renderer process under chromium %d", root)
	return ""
}

func copyFile(from, to string, mode os.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
