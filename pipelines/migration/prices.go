package migration

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// PriceTable is a dated table of closed models' list prices: what an
// incumbent named by model costs per million tokens.
type PriceTable struct {
	Date   string       `json:"date"`
	Source string       `json:"source"`
	Models []PriceEntry `json:"models"`
}

// PriceEntry is one model's price.
type PriceEntry struct {
	Model      string  `json:"model"`
	Vendor     string  `json:"vendor"`
	InputPerM  float64 `json:"input_per_m"`
	OutputPerM float64 `json:"output_per_m"`
}

//go:embed prices.json
var shippedPrices []byte

// ShippedPrices is the table built into boxd (prices.json).
func ShippedPrices() PriceTable {
	t, err := ParsePrices(shippedPrices)
	if err != nil {
		panic("migration: the shipped price table: " + err.Error())
	}
	return t
}

var isoDate = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// ParsePrices reads a table (the shape of prices.json), checking its date
// and prices.
func ParsePrices(b []byte) (PriceTable, error) {
	var t PriceTable
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.DisallowUnknownFields()
	if err := d.Decode(&t); err != nil {
		return t, fmt.Errorf("price table: %w", err)
	}
	if !isoDate.MatchString(t.Date) {
		return t, fmt.Errorf("price table: date must be YYYY-MM-DD, the day the prices were read")
	}
	seen := map[string]bool{}
	for i, m := range t.Models {
		k := strings.ToLower(m.Model)
		if m.Model == "" || seen[k] || m.InputPerM < 0 || m.OutputPerM < 0 {
			return t, fmt.Errorf("price table: models[%d]: a unique model name and prices of 0 or more", i)
		}
		seen[k] = true
	}
	return t, nil
}

// LoadPrices reads an operator's table (migration.price_table).
func LoadPrices(path string) (PriceTable, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return PriceTable{}, err
	}
	return ParsePrices(b)
}

// Find is the entry of a model (case-insensitive), nil when not listed.
func (t PriceTable) Find(model string) *PriceEntry {
	for i := range t.Models {
		if strings.EqualFold(t.Models[i].Model, model) {
			return &t.Models[i]
		}
	}
	return nil
}
