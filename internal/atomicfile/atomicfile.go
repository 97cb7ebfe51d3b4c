// Package atomicfile writes whole files atomically: the content goes to a
// temporary file in the same directory, which is synced and then renamed
// (or, for WriteNew, hard-linked) into place, so a reader or a crash sees
// either the old file or the complete new one, never a partial file.
package atomicfile

import (
	"io"
	"os"
	"path/filepath"
)

// Write writes data to path atomically with permissions perm (exactly perm:
// the umask does not apply). A file already at path is replaced.
func Write(path string, data []byte, perm os.FileMode) error {
	return WriteFunc(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFunc is Write for content that is streamed: write is given the
// temporary file and its error is returned as is. On any failure the
// temporary file is removed and path is left as it was.
func WriteFunc(path string, perm os.FileMode, write func(io.Writer) error) error {
	return place(path, perm, write, os.Rename)
}

// WriteNew is Write for a file that must not be replaced: the complete file
// is hard-linked into place, which fails (errors.Is(err, fs.ErrExist)) when
// path already exists, so of several writers racing exactly one wins and no
// reader ever sees a partial file.
func WriteNew(path string, data []byte, perm os.FileMode) error {
	return place(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, os.Link)
}

// SyncDir syncs directory dir, making a rename or link in it durable. Some
// file systems cannot sync directories; Write and WriteFunc ignore its error.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// place writes a temporary file beside path and moves it there with move
// (os.Rename or os.Link).
func place(path string, perm os.FileMode, write func(io.Writer) error, move func(oldpath, newpath string) error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	closed := false
	defer func() {
		if !closed {
			f.Close()
		}
		// After a rename there is nothing left to remove; after a link, or
		// a failure, the temporary file goes here.
		os.Remove(tmp)
	}()
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if err := write(f); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	closed = true
	if err := f.Close(); err != nil {
		return err
	}
	if err := move(tmp, path); err != nil {
		return err
	}
	_ = SyncDir(dir)
	return nil
}
