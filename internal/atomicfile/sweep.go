package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// leftover is the name of a temporary file place makes: "." + the
// target's name + ".tmp-" + os.CreateTemp's random digits.
var leftover = regexp.MustCompile(`^\..+\.tmp-[0-9]+$`)

// Sweep removes, under dir and its subdirectories, the temporary files
// of writes that never finished (a process killed between creating one
// and moving it into place) and not modified for olderThan: a write in
// progress in another process (a model pull beside a running server)
// keeps its file fresh and is left alone. It returns how many it removed.
func Sweep(dir string, olderThan time.Duration) (int, error) {
	n := 0
	cutoff := time.Now().Add(-olderThan)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return err
			}
			return nil // an unreadable subdirectory is not ours to sweep
		}
		if d.IsDir() || !d.Type().IsRegular() || !leftover.MatchString(d.Name()) {
			return nil
		}
		info, err := d.Info()
		if err != nil || info.ModTime().After(cutoff) {
			return nil
		}
		if os.Remove(path) == nil {
			n++
		}
		return nil
	})
	return n, err
}
