package upload

import (
	"bufio"
	"context"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"boxd/internal/scratch"
)

// ownDir is this process's directory in base: where scratch.Dir makes its
// directories.
func ownDir(base string) (string, error) {
	d, err := scratch.Dir("probe-")
	if err != nil {
		return "", err
	}
	defer os.Remove(d)
	return filepath.Dir(d), nil
}

const helperEnv = "BOXD_UPLOAD_HELPER_BASE"

// TestHelperUploadingProcess is not a test: run by TestCrashedUploadsSwept
// with helperEnv set, it is a boxd process in the middle of a request: it
// reads an upload into its directory in Base(), prints the file's path
// and waits to be killed.
func TestHelperUploadingProcess(t *testing.T) {
	base := os.Getenv(helperEnv)
	if base == "" {
		t.Skip("a helper process of TestCrashedUploadsSwept")
	}
	scratch.UseBase(base)
	body := `{"video_b64": "` + base64.StdEncoding.EncodeToString([]byte("a crashed request's upload")) + `"}`
	up, err := Read(context.Background(), strings.NewReader(body), video(1<<20), nil)
	if err != nil {
		os.Stdout.WriteString("error " + err.Error() + "\n")
		os.Exit(1)
	}
	os.Stdout.WriteString(up.Files["video_b64"].Path + "\n")
	time.Sleep(time.Hour)
}

// TestCrashedUploadsSwept: the upload files of a process killed in the
// middle of a request (SIGKILL: no defer runs) stay only until the next
// start's sweep (Prepare), which removes its whole directory; while it
// runs its directory is locked and a sweep leaves it alone, as it leaves
// the sweeping process's own.
func TestCrashedUploadsSwept(t *testing.T) {
	base := t.TempDir()
	defer scratch.UseBase(base)()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperUploadingProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+base)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, base) {
		t.Fatalf("the helper says %q (%v)", line, err)
	}
	path := strings.TrimSpace(line)
	childDir := filepath.Dir(filepath.Dir(path)) // base/p-*/r-*/upload-*
	// This process starts too: its own directory, and a sweep that
	// leaves the running helper's.
	if n, err := scratch.Prepare(""); err != nil || n != 0 {
		t.Fatalf("a sweep while the helper runs removed %d (%v)", n, err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the running helper's upload: %v", err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the killed helper's upload is gone before any sweep (%v): the test proves nothing", err)
	}
	if n, err := scratch.Sweep(base); err != nil || n != 1 {
		t.Fatalf("the sweep after the kill removed %d directories (%v), want 1", n, err)
	}
	for _, p := range []string{path, childDir, childDir + ".lock"} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s still there (%v)", p, err)
		}
	}
	mine, err := ownDir(base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mine); err != nil {
		t.Errorf("the sweep removed this process's own directory: %v", err)
	}
	// A process directory whose lock file is gone (a sweep cut short) is
	// swept too.
	stale := filepath.Join(base, "p-stale")
	if err := os.MkdirAll(filepath.Join(stale, "r-1"), 0o700); err != nil {
		t.Fatal(err)
	}
	if n, err := scratch.Sweep(base); err != nil || n != 1 {
		t.Errorf("a directory without its lock: %d removed (%v)", n, err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("%s still there", stale)
	}
}

// TestRequestDirectoryRemoved: each request's files are in a directory of
// its own, removed whole with them (whatever else was left in it), and
// the default place is this process's directory in Base().
func TestRequestDirectoryRemoved(t *testing.T) {
	base := t.TempDir()
	defer scratch.UseBase(base)()
	body := `{"video_b64": "` + base64.StdEncoding.EncodeToString([]byte("x")) + `"}`
	up, err := Read(context.Background(), strings.NewReader(body), video(1<<20), nil)
	if err != nil {
		t.Fatal(err)
	}
	path := up.Files["video_b64"].Path
	reqDir := filepath.Dir(path)
	mine, _ := ownDir(base)
	if filepath.Dir(reqDir) != mine || !strings.HasPrefix(filepath.Base(reqDir), "r-") {
		t.Fatalf("the upload is at %s, not in a request's directory in %s", path, mine)
	}
	if err := os.WriteFile(filepath.Join(reqDir, "left-by-a-handler"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := up.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(reqDir); !os.IsNotExist(err) {
		t.Errorf("the request's directory is still there (%v)", err)
	}
}
