package live

import (
	"fmt"

	"boxd/pipelines/live/codes"
)

// Verticals builds the live verticals. The clinical codes lane needs the
// ICD-10-CM and RxNorm tables under dataDir (data_dir); when they cannot be
// read, the other three are returned with an error that says why clinical
// is missing.
func Verticals(dataDir string) (map[string]*Vertical, error) {
	vs := map[string]*Vertical{
		"sales":     Sales(),
		"field":     Field(),
		"translate": Translate(),
	}
	t, err := codes.Load(dataDir)
	if err != nil {
		return vs, fmt.Errorf("live: the clinical vertical needs the code tables in data_dir: %w", err)
	}
	vs["clinical"] = Clinical(t)
	return vs, nil
}
