package sitecheck

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"boxd/internal/records"
)

// hostilePages are 2 MiB home pages made to grow the report: each is
// served with a robots.txt and an llms.txt of its own.
func hostilePages() []struct {
	name, page, robots, llms string
	wantCut                  []string // sections the cut list must name
} {
	fill := func(prefix, unit, suffix string) string {
		var b strings.Builder
		b.WriteString(prefix)
		for b.Len()+len(unit)+len(suffix) < MaxPageBytes-64 {
			b.WriteString(unit)
		}
		b.WriteString(suffix)
		return b.String()
	}
	long := func(s string, n int) string { return strings.Repeat(s, n/len(s)) }
	manyProps := func() string {
		var b strings.Builder
		b.WriteString(`<html><head><title>Harbor Street Bakery, Portland</title></head><body><script type="application/ld+json">{"@context":"https://schema.org","@type":"Bakery","name":"Harbor"`)
		for i := 0; b.Len() < MaxPageBytes-200; i++ {
			fmt.Fprintf(&b, `,"p%d":"TODO <lorem ipsum>"`, i)
		}
		b.WriteString(`}</script></body></html>`)
		return b.String()
	}
	longKeys := func() string {
		var b strings.Builder
		b.WriteString(`<html><body><script type="application/ld+json">[`)
		for i := range 100 {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"@context":"https://schema.org","@type":"Thing"`)
			for j := range 21 {
				fmt.Fprintf(&b, `,"%s%d":"TODO"`, long("<", 900), j)
			}
			b.WriteString("}")
		}
		b.WriteString(`]</script></body></html>`)
		return b.String()
	}
	return []struct {
		name, page, robots, llms string
		wantCut                  []string
	}{
		{name: "48,000 empty JSON-LD blocks", page: fill("<html><body>", `<script type="application/ld+json"></script>`, "</body></html>"),
			wantCut: []string{"jsonld.blocks", "fixes"}},
		{name: "a million tiny JSON-LD objects", page: fill(`<html><body><script type="application/ld+json">[{}`, ",{}", "]</script></body></html>"),
			wantCut: []string{"jsonld.objects", "fixes"}},
		{name: "one object of 60,000 placeholder properties", page: manyProps(),
			wantCut: []string{"jsonld.objects.errors", "fixes"}},
		{name: "megabyte strings that escape", page: `<html lang="` + long("<", 100000) + `"><head><title>` + long("\x01<&>", 600000) + `</title>` +
			`<meta name="description" content="` + long("&lt;", 400000) + `"><link rel="canonical" href="/` + long("a<", 100000) + `"></head><body>` +
			`<a href="/` + long("p", 50000) + `/x">x</a><a href="/` + long("q", 50000) + `">y</a>` +
			`<img src="/` + long("<", 100000) + `.jpg"><img src="x.jpg" alt="` + long("DSC_", 100000) + `">` +
			`<p>` + long("<&\x02", 200000) + `</p></body></html>`,
			robots:  "User-agent: *\nDisallow: /" + long("p", 400000) + "\n",
			llms:    "# " + long("<", 300000) + "\n\n> " + long("\x03", 300000) + "\n",
			wantCut: []string{"meta.strings", "images.strings", "robots.strings", "llms_txt.strings", "fixes.strings"}},
		{name: "objects whose findings escape past the budget", page: longKeys(),
			wantCut: []string{"jsonld.objects.errors", "jsonld.strings", "fixes"}},
		{name: "the synthetic large page", page: bigPage(MaxPageBytes - 1024)},
	}
}

// TestRecordBounded: site checks of hostile 2 MiB home pages sign records
// of at most MaxRecordBytes (the 48,769 empty blocks signed 26 MB, the
// tiny objects hundreds), every cut is named in the report and in the
// record's "cut" entry with how many items were dropped, the summary still
// counts the whole page, and the record verifies. A large ordinary page
// loses nothing.
func TestRecordBounded(t *testing.T) {
	var mu sync.Mutex
	var page, robotsTxt, llmsTxt string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		body := map[string]string{"/": page, "/robots.txt": robotsTxt, "/llms.txt": llmsTxt}[r.URL.Path]
		if body == "" {
			http.NotFound(w, r)
			return
		}
		if r.URL.Path == "/" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
		} else {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		}
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	c := testChecker()
	for _, p := range hostilePages() {
		mu.Lock()
		page, robotsTxt, llmsTxt = p.page, p.robots, p.llms
		mu.Unlock()
		if len(p.page) > MaxPageBytes {
			t.Fatalf("%s: the page is %d bytes, over the fetch limit", p.name, len(p.page))
		}
		rep, err := c.Run(context.Background(), Request{Domain: srv.URL})
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		raw, err := json.Marshal(rep.Record)
		if err != nil {
			t.Fatal(err)
		}
		answer, _ := json.Marshal(rep)
		t.Logf("%s: record %d bytes, answer %d bytes, cuts %+v", p.name, len(raw), len(answer), rep.Cut)
		if len(raw) > MaxRecordBytes {
			t.Errorf("%s: the record is %d bytes; the bound is %d", p.name, len(raw), MaxRecordBytes)
		}
		if len(answer) > 2*MaxRecordBytes+64<<10 {
			t.Errorf("%s: the answer is %d bytes; the bound is %d", p.name, len(answer), 2*MaxRecordBytes+64<<10)
		}
		if v := records.Verify(raw, c.Key.PublicKey()); !v.OK {
			t.Errorf("%s: the record does not verify: %+v", p.name, v)
		}
		named := map[string]Cut{}
		for _, k := range rep.Cut {
			if k.Section == "" || k.Limit == "" || (k.Dropped <= 0 && k.Shortened <= 0) {
				t.Errorf("%s: cut %+v names no section, limit or loss", p.name, k)
			}
			named[k.Section] = k
		}
		for _, s := range p.wantCut {
			if _, ok := named[s]; !ok {
				t.Errorf("%s: no cut names %s; cuts %+v", p.name, s, rep.Cut)
			}
		}
		if len(p.wantCut) == 0 && len(rep.Cut) > 0 {
			t.Errorf("%s: an ordinary page was cut: %+v", p.name, rep.Cut)
		}
		// The record says what was cut, exactly as the report.
		last := rep.Record.Entries[len(rep.Record.Entries)-1]
		if len(rep.Cut) == 0 {
			if last.Type == "cut" || len(rep.Record.Entries) != 9 {
				t.Errorf("%s: nothing was cut, yet the record has %d entries ending in %s", p.name, len(rep.Record.Entries), last.Type)
			}
			continue
		}
		want, _ := json.Marshal(rep.Cut)
		if last.Type != "cut" || last.Text == nil || *last.Text != string(want) {
			t.Errorf("%s: the record's last entry is %s, not the cut list %s", p.name, last.Type, want)
		}
		// Kept and dropped add up to what the page had.
		if k, ok := named["jsonld.blocks"]; ok && (k.Kept != len(rep.JSONLD.Blocks) || k.Kept+k.Dropped != strings.Count(p.page, "<script")) {
			t.Errorf("%s: blocks cut %+v, %d listed", p.name, k, len(rep.JSONLD.Blocks))
		}
		if k, ok := named["jsonld.objects"]; ok && (k.Kept != len(rep.JSONLD.Objects) || k.Kept+k.Dropped != rep.Summary.JSONLDObjects) {
			t.Errorf("%s: objects cut %+v, %d listed, summary counts %d", p.name, k, len(rep.JSONLD.Objects), rep.Summary.JSONLDObjects)
		}
		if k, ok := named["fixes"]; ok && (k.Kept != len(rep.Fixes) || k.Kept+k.Dropped != rep.Summary.Errors+rep.Summary.Warnings+rep.Summary.Infos) {
			t.Errorf("%s: fixes cut %+v, %d listed, summary counts %d", p.name, k, len(rep.Fixes), rep.Summary.Errors+rep.Summary.Warnings+rep.Summary.Infos)
		}
		if len(rep.Fixes) > 0 && rep.Summary.Errors > 0 && rep.Fixes[0].Severity != SevError {
			t.Errorf("%s: the fixes kept do not start with the errors", p.name)
		}
	}
}

// TestShortString: strings are cut at a character boundary, within the
// bound, ending in "…".
func TestShortString(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcdef", 5, "ab…"},
		{"ééé", 5, "é…"},
		{"ééé", 4, "…"},
		{"aééé", 6, "aé…"},
	} {
		if got := shortString(c.in, c.max); got != c.want || len(got) > c.max {
			t.Errorf("shortString(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}
