package upload

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

// Where uploads are kept while their request runs: boxd's own directory,
// Base() (<TMPDIR>/boxd-uploads, mode 0700), holds one directory per boxd
// process (p-XXXX, next to p-XXXX.lock, which the process holds locked
// with flock(2) for as long as it runs) and in it one directory per
// request (r-XXXX) that Upload.Remove deletes whole when the request's run
// returns. A process that crashed or was killed leaves its directory
// behind, unlocked: the kernel drops a dead process's locks. Prepare,
// at the next start (web.New), removes every process directory whose lock
// it can take, so no upload of a crashed request stays on disk; the
// directories of processes still running (another boxd, tests) are locked
// and left alone.

// Base is boxd's own directory of upload files.
func Base() string {
	if testBase != "" {
		return testBase
	}
	return filepath.Join(os.TempDir(), "boxd-uploads")
}

// testBase replaces Base in tests.
var testBase string

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

// requestDir makes a new directory for one request's files: in dir when
// the caller gave one (Options.Dir, which it owns), else in this
// process's directory in Base().
func requestDir(dir string) (string, error) {
	if dir == "" {
		p, err := processDir(Base())
		if err != nil {
			return "", err
		}
		dir = p
	}
	return os.MkdirTemp(dir, "r-")
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
		return "", fmt.Errorf("upload: %w", err)
	}
	for range 10 {
		lock, err := os.CreateTemp(base, "p-*.lock")
		if err != nil {
			return "", fmt.Errorf("upload: %w", err)
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
			return "", fmt.Errorf("upload: %w", err)
		}
		procs.dirs[base] = dir
		procs.locks = append(procs.locks, lock) // kept: a collected *os.File closes, and unlocks
		return dir, nil
	}
	return "", errors.New("upload: could not lock a directory of this process")
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
		return 0, fmt.Errorf("upload: %w", err)
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
