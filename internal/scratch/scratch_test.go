package scratch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDirInProcessDir: Dir makes a new directory with its prefix inside
// this process's locked directory in Base(), a sweep leaves it while the
// process runs, and a process directory whose lock file is gone is swept.
// (A real SIGKILL between Dir and its removal: upload.TestCrashedUploadsSwept.)
func TestDirInProcessDir(t *testing.T) {
	base := filepath.Join(t.TempDir(), "boxd-scratch")
	defer UseBase(base)()
	a, err := Dir("fill-")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Dir("chromium-")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Dir(a)
	if filepath.Dir(b) != p || filepath.Dir(p) != base || !strings.HasPrefix(filepath.Base(p), "p-") ||
		!strings.HasPrefix(filepath.Base(a), "fill-") || !strings.HasPrefix(filepath.Base(b), "chromium-") {
		t.Fatalf("directories %s and %s, want both in one p-* of %s", a, b, base)
	}
	if _, err := os.Stat(p + ".lock"); err != nil {
		t.Fatalf("no lock beside %s: %v", p, err)
	}
	if fi, err := os.Stat(base); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the base's mode: %v %v", fi.Mode(), err)
	}
	if n, err := Sweep(base); err != nil || n != 0 {
		t.Errorf("a sweep while this process runs removed %d (%v)", n, err)
	}
	if _, err := os.Stat(a); err != nil {
		t.Errorf("the sweep removed this process's directory: %v", err)
	}
	stale := filepath.Join(base, "p-stale")
	if err := os.MkdirAll(filepath.Join(stale, "fill-1"), 0o700); err != nil {
		t.Fatal(err)
	}
	if n, err := Sweep(base); err != nil || n != 1 {
		t.Errorf("a directory without its lock: %d removed (%v)", n, err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("%s still there", stale)
	}
}

// TestBaseMustBeOwn: a base that is a link or a file is refused with what
// to do; one of this user's with a wider mode is narrowed to 0700.
func TestBaseMustBeOwn(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "link")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{link, file} {
		restore := UseBase(b)
		if _, err := Dir("x-"); err == nil || !strings.Contains(err.Error(), "set TMPDIR") {
			t.Errorf("base %s: %v", b, err)
		}
		restore()
	}
	wide := filepath.Join(dir, "wide")
	if err := os.Mkdir(wide, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(wide, 0o777); err != nil {
		t.Fatal(err)
	}
	defer UseBase(wide)()
	if _, err := Dir("x-"); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(wide); fi.Mode().Perm() != 0o700 {
		t.Errorf("a base of mode 0777 is left %v", fi.Mode().Perm())
	}
}
