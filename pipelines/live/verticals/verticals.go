// Package verticals builds the registry of live verticals a box serves:
// clinical, sales, field and translate (packages of the same names under
// pipelines/live).
package verticals

import (
	"fmt"

	"boxd/pipelines/codes"
	"boxd/pipelines/live"
	"boxd/pipelines/live/clinical"
	"boxd/pipelines/live/field"
	"boxd/pipelines/live/sales"
	"boxd/pipelines/live/translate"
)

// Build builds the live verticals, by id. The clinical codes lane needs the
// ICD-10-CM and RxNorm tables under dataDir (data_dir); when they cannot be
// read, the other three are returned with an error that says why clinical
// is missing.
func Build(dataDir string) (map[string]*live.Vertical, error) {
	t, err := codes.Load(dataDir)
	if err != nil {
		return FromTables(nil), fmt.Errorf("live: the clinical vertical needs the code tables in data_dir: %w", err)
	}
	return FromTables(t), nil
}

// FromTables builds the live verticals from tables already read (nil: no
// clinical vertical).
func FromTables(t *codes.Tables) map[string]*live.Vertical {
	vs := map[string]*live.Vertical{
		"sales":     sales.New(),
		"field":     field.New(),
		"translate": translate.New(),
	}
	if t != nil {
		vs["clinical"] = clinical.New(t)
	}
	return vs
}
