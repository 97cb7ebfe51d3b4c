package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func stateDirArgs(t *testing.T, state string) []string {
	return []string{"serve", "--config", writeConfig(t, "# empty: built-in defaults\n"), "--state-dir", state, "--listen", "127.0.0.1:0", "--log-format", "text"}
}

// TestServeTightensStateDir: boxd serve given an existing state directory
// with mode 0755 (its own) tightens it to 0700 before it writes the
// signing key, and logs a warning saying so.
func TestServeTightensStateDir(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(state, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(state, 0o755); err != nil {
		t.Fatal(err)
	}
	ns := newNotifySocket(t)
	var logs bytes.Buffer
	cmd := boxdCmd(t, []string{"NOTIFY_SOCKET=" + ns.path}, stateDirArgs(t, state)...)
	cmd.Stderr = &logs
	exited := ns.watch(t, cmd)
	ns.waitFor(t, "READY=1", 30*time.Second)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := <-exited; err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(state)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("state dir after serve: %v %v", st.Mode(), err)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "tightened the state directory to 0700") || !strings.Contains(logs.String(), "was=0755") {
		t.Errorf("no warning about the tightened state directory:\n%s", logs.String())
	}
	if _, err := os.Stat(filepath.Join(state, "instance.key")); err != nil {
		t.Errorf("no signing key: %v", err)
	}
}

// TestServeRefusesOthersOpenStateDir: a state directory other users can
// read that belongs to another user is not changed; serve exits with a
// configuration error naming the path and the fix. (Needs root to give
// the directory away.)
func TestServeRefusesOthersOpenStateDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a directory to another user needs root")
	}
	state := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(state, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(state, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(state, 65534, 65534); err != nil {
		t.Skip(err)
	}
	var stderr bytes.Buffer
	cmd := boxdCmd(t, nil, stateDirArgs(t, state)...)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A serve that is not refused would run until stopped.
	stop := time.AfterFunc(30*time.Second, func() { _ = cmd.Process.Kill() })
	defer stop.Stop()
	err := cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != exitConfig {
		t.Fatalf("exit = %v, want status %d; stderr:\n%s", err, exitConfig, stderr.String())
	}
	if !strings.Contains(stderr.String(), "chmod 700 "+state) || !strings.Contains(stderr.String(), "0755") {
		t.Errorf("stderr lacks the path and the fix:\n%s", stderr.String())
	}
	if st, _ := os.Stat(state); st.Mode().Perm() != 0o755 {
		t.Errorf("another user's directory changed to %04o", st.Mode().Perm())
	}
	if _, err := os.Stat(filepath.Join(state, "instance.key")); err == nil {
		t.Error("a signing key was written")
	}
}
