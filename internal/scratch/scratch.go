// Package scratch is where boxd keeps files only while a request runs
// (uploads, a fill source handed to the document reader, a browser tab's
// profile), so that none outlives the process that made it.
package scratch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// Where: boxd's own directory, Base() (<TMPDIR>/boxd-scratch, mode
// 0700), holds one directory per boxd process (p-XXXX, next to
// p-XXXX.lock, which the process holds locked with flock(2) for as long as
// it runs) and in it one directory per use (Dir: an upload's r-XXXX, a
// fill source's fill-XXXX, a browser profile's chromium-XXXX), which its
// user removes when done. A process that crashed or was killed leaves its
// directory behind, unlocked: the kernel drops a dead process's locks.
// Prepare, at the next start (web.New), removes every process directory
// whose lock it can take, so nothing of a crashed request stays on disk;
// the directories of processes still running (another boxd, tests) are
// locked and left alone. (Under the unit, PrivateTmp empties TMPDIR at
// every start as well; a box run by hand has only this.)

// Base is boxd's own scratch directory.
func Base() string {
	base.Lock()
	defer base.Unlock()
	if base.dir != "" {
		return base.dir
	}
	return filepath.Join(os.TempDir(), "boxd-scratch")
}

var base struct {
	sync.Mutex
	dir string // replaces Base in tests (UseBase)
}

// UseBase makes dir Base() until restore is called: for tests, which
// sweep and kill in a directory of their own.
func UseBase(dir string) (restore func()) {
	base.Lock()
	defer base.Unlock()
	old := base.dir
	base.dir = dir
	return func() {
		base.Lock()
		defer base.Unlock()
		base.dir = old
	}
}

var procs = struct {
	sync.Mutex
	dirs  map[string]string // base → this process's directory in it
	locks []*os.File        // their lock files, open (and locked) until the process ends
}{dirs: map[string]string{}}

// Prepare makes this process's directory in base ("" is Base()), once,
// and removes the directories processes that are gone left there; it
// returns how many it removed.
func Prepare(base string) (removed int, err error) {
	if base == "" {
		base = Base()
	}
	if _, err := processDir(base); err != nil {
		return 0, err
	}
	return Sweep(base)
}

// Dir makes a new directory, named prefix and random characters, in this
// process's directory in Base(); the caller removes it when done.
func Dir(prefix string) (string, error) {
	p, err := processDir(Base())
	if err != nil {
		return "", err
	}
	d, err := os.MkdirTemp(p, prefix)
	if err != nil {
		return "", fmt.Errorf("scratch: %w", err)
	}
	return d, nil
}

// processDir is this process's directory in base, made and locked on
// first use.
func processDir(base string) (string, error) {
	procs.Lock()
	defer procs.Unlock()
	if d, ok := procs.dirs[base]; ok {
		return d, nil
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", fmt.Errorf("scratch: %w (boxd keeps a request's files there: free it, or set TMPDIR)", err)
	}
	if err := own(base); err != nil {
		return "", err
	}
	for range 10 {
		lock, err := os.CreateTemp(base, "p-*.lock")
		if err != nil {
			return "", fmt.Errorf("scratch: %w", err)
		}
		if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			lock.Close() // a sweep took it between its creation and here
			continue
		}
		// A sweep that took the lock first may have removed the file:
		// the lock held must be the file at its name.
		held, err1 := lock.Stat()
		named, err2 := os.Stat(lock.Name())
		if err1 != nil || err2 != nil || !os.SameFile(held, named) {
			lock.Close()
			continue
		}
		dir := strings.TrimSuffix(lock.Name(), ".lock")
		if err := os.Mkdir(dir, 0o700); err != nil {
			lock.Close()
			return "", fmt.Errorf("scratch: %w", err)
		}
		procs.dirs[base] = dir
		procs.locks = append(procs.locks, lock) // kept: a collected *os.File closes, and unlocks
		return dir, nil
	}
	return "", errors.New("scratch: could not lock a directory of this process")
}

// Sweep removes from base the directories of processes that no longer
// run: those whose lock file it can lock, and those whose lock file is
// gone (a sweep stopped between the two). It returns how many.
func Sweep(base string) (int, error) {
	entries, err := os.ReadDir(base)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil
		}
		return 0, fmt.Errorf("scratch: %w", err)
	}
	names := map[string]bool{}
	for _, e := range entries {
		names[e.Name()] = true
	}
	removed := 0
	var errs []error
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, "p-") && strings.HasSuffix(name, ".lock"):
			dir := strings.TrimSuffix(name, ".lock")
			gone, err := sweepLocked(filepath.Join(base, name), filepath.Join(base, dir))
			if err != nil {
				errs = append(errs, err)
			}
			if gone {
				removed++
			}
		case strings.HasPrefix(name, "p-") && e.IsDir() && !names[name+".lock"]:
			if err := os.RemoveAll(filepath.Join(base, name)); err != nil {
				errs = append(errs, err)
				continue
			}
			removed++
		}
	}
	return removed, errors.Join(errs...)
}

// sweepLocked removes dir and its lock file when the lock can be taken
// (its process is gone), and reports whether it did.
func sweepLocked(lockPath, dir string) (bool, error) {
	f, err := os.OpenFile(lockPath, os.O_RDWR, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return false, nil // its process runs
	}
	procs.Lock()
	mine := false
	for _, d := range procs.dirs {
		mine = mine || d == dir
	}
	procs.Unlock()
	if mine { // this process's own (not expected: its lock, on another open file, refuses ours)
		return false, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return false, err
	}
	if err := os.Remove(lockPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	return true, nil
}

// own checks that base is a directory of this user's that nobody else can
// write (TMPDIR may be shared: another user could have made it first, or
// put a link there), and narrows its mode to 0700 when it is this user's.
func own(base string) error {
	fi, err := os.Lstat(base)
	if err != nil {
		return fmt.Errorf("scratch: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("scratch: %s is not a directory (a link or a file is in its place): remove it, or set TMPDIR", base)
	case !ok || int(st.Uid) != os.Geteuid():
		return fmt.Errorf("scratch: %s belongs to another user: remove it, or set TMPDIR to a directory of boxd's own", base)
	case fi.Mode().Perm() != 0o700:
		if err := os.Chmod(base, 0o700); err != nil {
			return fmt.Errorf("scratch: %w", err)
		}
	}
	return nil
}
