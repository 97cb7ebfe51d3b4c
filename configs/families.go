package configs

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Audit governs the endpoint audit (/audit/*).
type Audit struct {
	// AllowPrivate lets base_url name plain-http, loopback and private
	// endpoints (an ollama or llama-server on the LAN).
	AllowPrivate bool
	// Targets are endpoints the operator registers as demo targets, each
	// "id|base_url|model|claimed_model" (claimed_model optional).
	Targets []string
	// RecordAtStart records a reference fixture of the chat model at
	// start when there is none.
	RecordAtStart bool
}

// AuditTarget is one parsed audit.targets entry.
type AuditTarget struct{ ID, BaseURL, Model, ClaimedModel string }

// ParseAuditTarget reads "id|base_url|model|claimed_model".
func ParseAuditTarget(s string) (AuditTarget, error) {
	f := strings.Split(s, "|")
	if len(f) < 3 || len(f) > 4 {
		return AuditTarget{}, fmt.Errorf("audit target %q: write id|base_url|model or id|base_url|model|claimed_model", s)
	}
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
	}
	t := AuditTarget{ID: f[0], BaseURL: f[1], Model: f[2]}
	if len(f) == 4 {
		t.ClaimedModel = f[3]
	}
	if t.ID == "" || t.Model == "" {
		return AuditTarget{}, fmt.Errorf("audit target %q: the id and the model may not be empty", s)
	}
	u, err := url.Parse(t.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || !strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/v1") {
		return AuditTarget{}, fmt.Errorf("audit target %q: base_url must be an http(s) URL ending /v1", s)
	}
	return t, nil
}

func checkAuditTargets(v any) error {
	seen := map[string]bool{}
	for _, s := range v.([]string) {
		t, err := ParseAuditTarget(s)
		if err != nil {
			return err
		}
		if seen[t.ID] || t.ID == "box-chat" {
			return fmt.Errorf("audit target id %q is used twice (box-chat is the chat model's)", t.ID)
		}
		seen[t.ID] = true
	}
	return nil
}

// Migration governs the migration check (/migration/*).
type Migration struct {
	// Candidates are open models registered besides the chat model, each
	// "id|path" or "id|path|template" (a GGUF the engine loads at start).
	Candidates []string
	// Judge is the freetext judge: "" for the chat model, or a candidate
	// id.
	Judge string
	// HourCost is what an hour of this box's model time costs in dollars
	// (energy and amortisation), a decimal; "" leaves the candidates'
	// cost unstated.
	HourCost string
	// PriceTable is a JSON file replacing the shipped price table.
	PriceTable string
}

// MigrationCandidate is one parsed migration.candidates entry.
type MigrationCandidate struct{ ID, Path, Template string }

// ParseMigrationCandidate reads "id|path" or "id|path|template".
func ParseMigrationCandidate(s string) (MigrationCandidate, error) {
	f := strings.Split(s, "|")
	if len(f) < 2 || len(f) > 3 {
		return MigrationCandidate{}, fmt.Errorf("migration candidate %q: write id|path or id|path|template", s)
	}
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
	}
	c := MigrationCandidate{ID: f[0], Path: f[1], Template: "auto"}
	if len(f) == 3 && f[2] != "" {
		c.Template = f[2]
	}
	if c.ID == "" || strings.ContainsAny(c.ID, " ,/") || len(c.ID) > 64 {
		return MigrationCandidate{}, fmt.Errorf("migration candidate %q: the id must be 1 to 64 characters without spaces, commas or slashes", s)
	}
	if err := checkModelFile(c.Path); err != nil {
		return MigrationCandidate{}, fmt.Errorf("migration candidate %s: %w", c.ID, err)
	}
	return c, nil
}

func checkMigrationCandidates(v any) error {
	seen := map[string]bool{}
	for _, s := range v.([]string) {
		c, err := ParseMigrationCandidate(s)
		if err != nil {
			return err
		}
		if seen[c.ID] {
			return fmt.Errorf("migration candidate id %q is used twice", c.ID)
		}
		seen[c.ID] = true
	}
	return nil
}

// HourDollars is migration.hour_cost as a number (0 when unset).
func (m Migration) HourDollars() float64 {
	f, _ := strconv.ParseFloat(m.HourCost, 64)
	return f
}

func checkHourCost(v any) error {
	s := v.(string)
	if s == "" {
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > 10000 {
		return fmt.Errorf("%q is not a cost in dollars an hour (a decimal from 0 to 10000, like 0.85)", s)
	}
	return nil
}

// familySettings are the tool families' settings, after the core ones.
var familySettings = []setting{
	{key: "migration.candidates", kind: kindList, def: []string{}, usage: "open models a migration check may run besides the chat model, each id|path or id|path|template (a GGUF loaded at start)",
		field: func(c *Config) any { return &c.Migration.Candidates }, check: checkMigrationCandidates},
	{key: "migration.judge", kind: kindString, def: "", usage: "the migration check's freetext judge: empty for the chat model, or a migration.candidates id",
		field: func(c *Config) any { return &c.Migration.Judge }},
	{key: "migration.hour_cost", kind: kindString, def: "", usage: "dollars an hour of this box's model time costs (energy and amortisation), for a candidate's cost per 1,000 requests; empty: not stated",
		field: func(c *Config) any { return &c.Migration.HourCost }, check: checkHourCost},
	{key: "migration.price_table", kind: kindString, def: "", usage: "JSON file replacing the shipped, dated price table of closed models (GET /migration/info shows its shape)",
		field: func(c *Config) any { return &c.Migration.PriceTable }, check: checkModelFile},
}
