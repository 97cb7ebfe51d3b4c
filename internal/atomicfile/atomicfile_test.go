package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// leftovers lists dir's entries other than the named ones.
func leftovers(t *testing.T, dir string, want ...string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	keep := map[string]bool{}
	for _, w := range want {
		keep[w] = true
	}
	var out []string
	for _, e := range ents {
		if !keep[e.Name()] {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestWrite(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	for _, tc := range []struct {
		name     string
		existing []byte // nil: no file there first
		data     []byte
		perm     os.FileMode
	}{
		{"new private", nil, []byte("secret\n"), 0o600},
		{"new world-readable (umask ignored)", nil, []byte("model"), 0o644},
		{"replaces", []byte("old content that is longer"), []byte("new"), 0o640},
		{"empty", []byte("x"), nil, 0o600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f.json")
			if tc.existing != nil {
				if err := os.WriteFile(path, tc.existing, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := Write(path, tc.data, tc.perm); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(tc.data) {
				t.Errorf("content %q, want %q", got, tc.data)
			}
			info, _ := os.Stat(path)
			if info.Mode().Perm() != tc.perm {
				t.Errorf("mode %v, want %v", info.Mode().Perm(), tc.perm)
			}
			if l := leftovers(t, dir, "f.json"); len(l) > 0 {
				t.Errorf("left behind %v", l)
			}
		})
	}
}

func TestWriteFuncFailure(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name     string
		existing bool
		write    func(io.Writer) error
		dir      string // relative to the temp dir; "" is the dir itself
		want     error
	}{
		{"writer fails, nothing there", false, func(w io.Writer) error { w.Write([]byte("part")); return boom }, "", boom},
		{"writer fails, old file kept", true, func(w io.Writer) error { w.Write([]byte("part")); return boom }, "", boom},
		{"missing directory", false, func(io.Writer) error { return nil }, "absent", fs.ErrNotExist},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, tc.dir, "f")
			if tc.existing {
				if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := WriteFunc(path, 0o600, tc.write)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			got, rerr := os.ReadFile(path)
			switch {
			case tc.existing && string(got) != "old":
				t.Errorf("old file now %q (%v)", got, rerr)
			case !tc.existing && !errors.Is(rerr, fs.ErrNotExist):
				t.Errorf("a file appeared: %q", got)
			}
			if l := leftovers(t, dir, "f"); len(l) > 0 {
				t.Errorf("left behind %v", l)
			}
		})
	}
}

func TestWriteNew(t *testing.T) {
	for _, tc := range []struct {
		name     string
		existing bool
		wantErr  error
		want     string
	}{
		{"creates", false, nil, "new"},
		{"refuses to replace", true, fs.ErrExist, "first"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "key")
			if tc.existing {
				if err := os.WriteFile(path, []byte("first"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := WriteNew(path, []byte("new"), 0o600)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			got, _ := os.ReadFile(path)
			if string(got) != tc.want {
				t.Errorf("content %q, want %q", got, tc.want)
			}
			info, _ := os.Stat(path)
			if info.Mode().Perm() != 0o600 {
				t.Errorf("mode %v", info.Mode().Perm())
			}
			if l := leftovers(t, dir, "key"); len(l) > 0 {
				t.Errorf("left behind %v", l)
			}
		})
	}
}

func TestSyncDir(t *testing.T) {
	if err := SyncDir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if err := SyncDir(filepath.Join(t.TempDir(), "absent")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err %v", err)
	}
}
