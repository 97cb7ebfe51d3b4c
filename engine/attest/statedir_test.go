package attest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mode(t *testing.T, dir string) os.FileMode {
	t.Helper()
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

// TestSecureDirTightensOwnDir: an existing state directory with mode 0755
// owned by this user is tightened to 0700 (SecureDir reports the mode it
// had); one already 0700 is left as it is; an absent one is made 0700.
func TestSecureDirTightensOwnDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { // past the umask
		t.Fatal(err)
	}
	was, err := SecureDir(dir)
	if err != nil || was != 0o755 || mode(t, dir) != 0o700 {
		t.Fatalf("SecureDir of a 0755 dir: was %04o, %v; now %04o", was, err, mode(t, dir))
	}
	if was, err := SecureDir(dir); err != nil || was != 0 {
		t.Errorf("SecureDir of a 0700 dir: was %04o, %v", was, err)
	}
	if _, created, err := LoadOrCreateKey(dir); err != nil || !created {
		t.Errorf("key in the tightened dir: %v %v", created, err)
	}
	fresh := filepath.Join(t.TempDir(), "a", "state")
	if was, err := SecureDir(fresh); err != nil || was != 0 || mode(t, fresh) != 0o700 {
		t.Errorf("SecureDir of an absent dir: was %04o, %v, mode %04o", was, err, mode(t, fresh))
	}
}

// TestSecureDirRefusesOthersDir: a state directory other users can read
// that belongs to another user is not changed: the error names the path
// and the fix.
func TestSecureDirRefusesOthersDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	otherUser(t)
	_, err := SecureDir(dir)
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "chmod 700 "+dir) || !strings.Contains(err.Error(), "0750") {
		t.Errorf("another user's 0750 dir: %v", err)
	}
	if mode(t, dir) != 0o750 {
		t.Errorf("mode changed to %04o", mode(t, dir))
	}
	file := filepath.Join(dir, "file")
	_ = os.WriteFile(file, nil, 0o600)
	if _, err := SecureDir(file); err == nil || !strings.Contains(err.Error(), "not a directory") && !strings.Contains(err.Error(), file) {
		t.Errorf("a file as the state dir: %v", err)
	}
}

// otherUser makes the state directories of this test another user's.
func otherUser(t *testing.T) {
	euid := os.Geteuid() + 1
	geteuid = func() int { return euid }
	t.Cleanup(func() { geteuid = os.Geteuid })
}

// TestNoNewKeyInOpenDir: LoadOrCreateKey writes a new key only into a
// directory other users cannot read: its own 0755 directory is tightened
// first, another user's is refused and no key is written.
func TestNoNewKeyInOpenDir(t *testing.T) {
	own := t.TempDir()
	if err := os.Chmod(own, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, created, err := LoadOrCreateKey(own); err != nil || !created || mode(t, own) != 0o700 {
		t.Errorf("new key in this user's 0755 dir: %v %v, dir mode %04o", created, err, mode(t, own))
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	otherUser(t)
	_, _, err := LoadOrCreateKey(dir)
	if err == nil || !strings.Contains(err.Error(), "chmod 700 "+dir) {
		t.Errorf("new key in another user's 0755 dir: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, KeyFile)); !os.IsNotExist(err) {
		t.Errorf("a key was written: %v", err)
	}
}
