package sitecheck

import (
	"encoding/json"
	"fmt"
	"reflect"
	"unicode/utf8"
)

// Bounds of what a site check reports and signs. A hostile 2 MiB home page
// (48,769 empty JSON-LD blocks, a million tiny JSON-LD objects, a title of
// two megabytes) made records of tens or hundreds of megabytes; each
// section is now cut to a count and a size, and the report's cut list (and
// the record's "cut" entry) says what was left out. Counts in the summary
// and in the jsonld section stay those of the whole page.
const (
	// MaxJSONLDBlocks and MaxJSONLDObjects bound the blocks and object
	// reports listed; MaxFindings the errors, and the warnings, listed per
	// object.
	MaxJSONLDBlocks  = 100
	MaxJSONLDObjects = 100
	MaxFindings      = 20
	// MaxFixes bounds the fixes listed (errors first).
	MaxFixes = 100
	// MaxProblems bounds the meta and llms.txt problems listed.
	MaxProblems = 50
	// MaxStringBytes bounds every string of the report but its text
	// (which has pagecheck.MaxTextChars): longer ones end in "…".
	MaxStringBytes = 1024
	// MaxRecordBytes bounds the JSON of a signed site-check record (the
	// section budgets below, some 960 KiB, and the entries' hashes); the
	// answer holds the sections once more beside it.
	MaxRecordBytes = 1 << 20
)

// sectionBudget is each section's budget in bytes, measured as the
// section takes them in the record: its JSON, itself written as a JSON
// string (escapes included).
var sectionBudget = map[string]int{
	"page": 16 << 10, "robots": 160 << 10, "llms_txt": 16 << 10, "jsonld": 256 << 10,
	"meta": 64 << 10, "images": 48 << 10, "text": 144 << 10, "fixes": 256 << 10,
}

// Cut says what a site check left out of one part of its report to keep
// the signed record bounded: items of a list (Kept of Kept+Dropped, the
// first ones in report order) or strings shortened to end in "…".
type Cut struct {
	// Section names the list ("jsonld.objects", "fixes",
	// "jsonld.objects.warnings") or, for shortened strings, the section's
	// strings ("meta.strings"; "text" for the page text).
	Section   string `json:"section"`
	Kept      int    `json:"kept"`
	Dropped   int    `json:"dropped"`
	Shortened int    `json:"shortened"`
	// Limit is the bound that cut it.
	Limit string `json:"limit"`
}

// list is a list of a section that may lose its last items: a pointer to
// the slice, how many items the page had in all (more than its length
// when some were never kept), and the count it is cut to (0: none).
type list struct {
	name, section, items string
	ptr                  any
	total, max           int
}

func (l *list) len() int { return reflect.ValueOf(l.ptr).Elem().Len() }

// bound cuts rep's sections to their counts and budgets and returns what
// was cut, in a fixed order. droppedObjects is how many object reports the
// JSON-LD check did not keep; fixTotal how many fixes there were before
// fixes kept MaxFixes.
func bound(rep *Report, droppedObjects, fixTotal int) (cuts []Cut) {
	var out []Cut
	// Findings per object (counted at the end, over the objects kept).
	type found struct{ errors, warnings int }
	had := make([]found, len(rep.JSONLD.Objects))
	for i := range rep.JSONLD.Objects {
		o := &rep.JSONLD.Objects[i]
		had[i] = found{len(o.Errors), len(o.Warnings)}
		o.Errors = o.Errors[:min(len(o.Errors), MaxFindings)]
		o.Warnings = o.Warnings[:min(len(o.Warnings), MaxFindings)]
	}
	defer func() {
		var d, listed found
		for i, o := range rep.JSONLD.Objects {
			d.errors += had[i].errors - len(o.Errors)
			d.warnings += had[i].warnings - len(o.Warnings)
			listed.errors += len(o.Errors)
			listed.warnings += len(o.Warnings)
		}
		for _, f := range []struct {
			which     string
			n, listed int
		}{{"errors", d.errors, listed.errors}, {"warnings", d.warnings, listed.warnings}} {
			if f.n > 0 {
				cuts = append(cuts, Cut{Section: "jsonld.objects." + f.which, Kept: f.listed, Dropped: f.n,
					Limit: fmt.Sprintf("at most %d %s listed per object", MaxFindings, f.which)})
			}
		}
	}()
	lists := []*list{
		{"page.redirects", "page", "redirects", &rep.Page.Redirects, len(rep.Page.Redirects), 0},
		{"llms_txt.problems", "llms_txt", "problems", &rep.LLMsTxt.Problems, len(rep.LLMsTxt.Problems), MaxProblems},
		{"jsonld.objects", "jsonld", "objects", &rep.JSONLD.Objects, len(rep.JSONLD.Objects) + droppedObjects, MaxJSONLDObjects},
		{"jsonld.blocks", "jsonld", "blocks", &rep.JSONLD.Blocks, len(rep.JSONLD.Blocks), MaxJSONLDBlocks},
		{"meta.problems", "meta", "problems", &rep.Meta.Problems, len(rep.Meta.Problems), MaxProblems},
		{"images.examples", "images", "examples", &rep.Images.Examples, len(rep.Images.Examples), 0},
		{"fixes", "fixes", "fixes", &rep.Fixes, fixTotal, MaxFixes},
	}
	for _, l := range lists {
		if v := reflect.ValueOf(l.ptr).Elem(); l.max > 0 && v.Len() > l.max {
			v.Set(v.Slice(0, l.max))
		}
	}
	// Strings, then each section's budget: its lists lose their last
	// items, and a section still over (strings that escape to six bytes
	// each) has its strings shortened further.
	shortened := map[string]int{}
	shortest := map[string]int{}
	if len(rep.URL) > MaxStringBytes {
		rep.URL = shortString(rep.URL, MaxStringBytes)
		shortened["page"], shortest["page"] = 1, MaxStringBytes
	}
	sections := []struct {
		name string
		v    any
	}{{"page", &rep.Page}, {"robots", &rep.Robots}, {"llms_txt", &rep.LLMsTxt}, {"jsonld", &rep.JSONLD},
		{"meta", &rep.Meta}, {"images", &rep.Images}, {"fixes", &rep.Fixes}}
	overBudget := map[string]bool{}
	for _, s := range sections {
		budget := sectionBudget[s.name]
		for _, max := range []int{MaxStringBytes, 128, 0, 16} {
			if max == 0 { // the lists' turn
				for _, l := range lists {
					if l.section == s.name && embeddedSize(s.v) > budget {
						overBudget[s.name] = true
						dropToBudget(s.v, l.ptr, budget)
					}
				}
				continue
			}
			if max < MaxStringBytes && embeddedSize(s.v) <= budget {
				break
			}
			if n := shorten(reflect.ValueOf(s.v), max); n > 0 {
				shortened[s.name] += n
				shortest[s.name] = max
			}
		}
	}
	if budget := sectionBudget["text"]; embeddedSize(rep.Text) > budget {
		n := utf8.RuneCountInString(rep.Text)
		for embeddedSize(rep.Text) > budget {
			n = n * 3 / 4
			rep.Text = cutRunes(rep.Text, n)
		}
		out = append(out, Cut{Section: "text", Shortened: 1, Limit: fmt.Sprintf("%d KiB in the record", budget>>10)})
	}
	for _, l := range lists {
		kept := l.len()
		if kept >= l.total {
			continue
		}
		var limit string
		if l.max > 0 {
			limit = fmt.Sprintf("at most %d %s", l.max, l.items)
		}
		if overBudget[l.section] && (l.max == 0 || kept < l.max) {
			if limit != "" {
				limit += " and "
			}
			limit += fmt.Sprintf("%d KiB for the %s section in the record", sectionBudget[l.section]>>10, l.section)
		}
		out = append(out, Cut{Section: l.name, Kept: kept, Dropped: l.total - kept, Limit: limit})
	}
	for _, s := range sections {
		if n := shortened[s.name]; n > 0 {
			out = append(out, Cut{Section: s.name + ".strings", Shortened: n, Limit: fmt.Sprintf("strings of at most %d bytes", shortest[s.name])})
		}
	}
	return append([]Cut{}, out...)
}

// dropToBudget drops the last items of the slice at ptr (part of the
// section v) until v fits budget or the slice is empty.
func dropToBudget(v, ptr any, budget int) {
	s := reflect.ValueOf(ptr).Elem()
	over := embeddedSize(v) - budget
	// Items are dropped from the end by their own size first, then one at
	// a time until the whole section measures within the budget.
	n := s.Len()
	for n > 0 && over > 0 {
		n--
		over -= embeddedSize(s.Index(n).Interface()) - 1 // the comma and the quotes
	}
	s.Set(s.Slice(0, n))
	for s.Len() > 0 && embeddedSize(v) > budget {
		s.Set(s.Slice(0, s.Len()-1))
	}
}

// embeddedSize is the bytes v takes in a record entry: its JSON written
// as a JSON string.
func embeddedSize(v any) int {
	j, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	e, err := json.Marshal(string(j))
	if err != nil {
		return 0
	}
	return len(e)
}

// shorten cuts every string reachable from v (through pointers, structs,
// slices) longer than max bytes to at most max bytes ending in "…", and
// returns how many it cut. Fields the JSON leaves out (json:"-") and
// unexported ones are not touched.
func shorten(v reflect.Value, max int) int {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return 0
		}
		return shorten(v.Elem(), max)
	case reflect.String:
		if v.Len() > max && v.CanSet() {
			v.SetString(shortString(v.String(), max))
			return 1
		}
	case reflect.Struct:
		n := 0
		t := v.Type()
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && f.Tag.Get("json") != "-" {
				n += shorten(v.Field(i), max)
			}
		}
		return n
	case reflect.Slice, reflect.Array:
		n := 0
		for i := range v.Len() {
			n += shorten(v.Index(i), max)
		}
		return n
	}
	return 0
}

// shortString is s cut at a character boundary to at most max bytes, the
// last three of them "…".
func shortString(s string, max int) string {
	if len(s) <= max {
		return s
	}
	end := max - len("…")
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + "…"
}

// cutRunes is s cut to n code points.
func cutRunes(s string, n int) string {
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
}
