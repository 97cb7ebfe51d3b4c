package pagecheck

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"boxd/pipelines/sitecheck/pagecheck/internal/fixtures"
	"boxd/pipelines/sitecheck/pagecheck/text"
)

// seedHTML adds the pages of the JSON-LD and meta fixtures.
func seedHTML(f *testing.F) {
	for _, file := range []string{"check_page_jsonld.json", "check_live_meta.json"} {
		for _, in := range fixtures.Inputs(f, file) {
			f.Add(fixtures.String(f, in, "html"), fixtures.String(f, in, "url"))
		}
	}
	for _, s := range []string{
		"<script type=application/ld+json>{}</script>",
		"<!--<script type=application/ld+json>{\"@type\":1}</script>-->",
		"<script type=\"application/ld+json\"><!-- {} --></script>",
		"<script type=\"application/ld+json\">{&quot;a&quot;:1}</script>",
		"<script type=\"application/ld+json\">",
		"<script type=\"application/ld+json\"></script",
		"<!--", "<!-->", "<!--->", "</", "</x", "<a b='", "<a b=", "<title>", "<svg><title>x",
		"&#x110000;&#0;&#xD800;&#65;&amp;lt;&nbsp",
		"<script a b c d e f g h i j k l m n o p q r s t TYPE=x type=application/ld+json a>{}</script>\n<script type=application/ld+json>[]</script>",
	} {
		f.Add(s, "https://a.example/x/y?q#f")
	}
}

// FuzzExtractJSONLD checks that ExtractJSONLD and CheckPageJSONLD (and the
// other page checks built on Scan) never panic, that block offsets and
// JSON error offsets are in bounds, that the results are deterministic and
// that the reports marshal to JSON.
func FuzzExtractJSONLD(f *testing.F) {
	seedHTML(f)
	f.Fuzz(func(t *testing.T, html, url string) {
		blocks := ExtractJSONLD(html)
		if !reflect.DeepEqual(blocks, ExtractJSONLD(html)) {
			t.Fatal("ExtractJSONLD is not deterministic")
		}
		for i, b := range blocks {
			if b.Index != i {
				t.Fatalf("block %d has index %d", i, b.Index)
			}
			if !(0 <= b.TagStart && b.TagStart < b.ContentStart && b.ContentStart <= b.ContentEnd && b.ContentEnd <= len(html)) {
				t.Fatalf("block %d: offsets %d %d %d out of bounds (len %d)", i, b.TagStart, b.ContentStart, b.ContentEnd, len(html))
			}
			if !strings.HasPrefix(text.ASCIILower(html[b.TagStart:]), "<script") {
				t.Fatalf("block %d: TagStart %d is not at <script", i, b.TagStart)
			}
			if want := 1 + strings.Count(html[:b.TagStart], "\n"); b.Line != want {
				t.Fatalf("block %d: line %d, want %d", i, b.Line, want)
			}
			if i > 0 && b.TagStart <= blocks[i-1].TagStart {
				t.Fatalf("block %d is not in document order", i)
			}
			if b.OK != (b.Error == nil) || (!b.OK && b.Value != nil) {
				t.Fatalf("block %d: OK %v with error %v", i, b.OK, b.Error)
			}
			if b.Error != nil {
				checkJSONError(t, b.Text, b.Error)
			}
			switch b.Source {
			case SourceScript, SourceComment, SourceEntity:
			default:
				t.Fatalf("block %d: source %q", i, b.Source)
			}
		}

		r := CheckPageJSONLD(html, url)
		if !reflect.DeepEqual(r, CheckPageJSONLD(html, url)) {
			t.Fatal("CheckPageJSONLD is not deterministic")
		}
		errs, warns := 0, 0
		for _, b := range r.Blocks {
			if !b.OK {
				errs++
			}
		}
		for _, o := range r.Objects {
			errs += len(o.Errors)
			warns += len(o.Warnings)
			checkFindings(t, o.Errors, o.Warnings)
		}
		if r.ErrorCount != errs || r.WarningCount != warns {
			t.Fatalf("counts %d/%d, findings %d/%d", r.ErrorCount, r.WarningCount, errs, warns)
		}
		if utf8.RuneCountInString(r.Text) > MaxTextChars {
			t.Fatalf("text has %d code points", utf8.RuneCountInString(r.Text))
		}
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		data2, _ := json.Marshal(CheckPageJSONLD(html, url))
		if !bytes.Equal(data, data2) {
			t.Fatal("CheckPageJSONLD JSON is not deterministic")
		}

		m := CheckMeta(html, url)
		if !reflect.DeepEqual(m, CheckMeta(html, url)) {
			t.Fatal("CheckMeta is not deterministic")
		}
		if _, err := json.Marshal(m); err != nil {
			t.Fatal(err)
		}
		for _, p := range m.Problems {
			if p.Code == "" || p.Message == "" || p.Fix == "" {
				t.Fatalf("incomplete problem %+v", p)
			}
		}
	})
}

// checkJSONError checks a ParseJSON error against its input.
func checkJSONError(t *testing.T, s string, e *JSONError) {
	t.Helper()
	if e.Message == "" {
		t.Fatal("empty error message")
	}
	if e.Offset < 0 || e.Offset > len(s) {
		t.Fatalf("error offset %d outside the input (len %d)", e.Offset, len(s))
	}
	line, col := lineCol(s, e.Offset)
	if e.Line != line || e.Column != col || e.Line < 1 || e.Column < 1 {
		t.Fatalf("error at line %d column %d, offset %d is line %d column %d", e.Line, e.Column, e.Offset, line, col)
	}
}

// lineCol is the 1-based line (LF-separated) and code-point column of the
// byte offset off in s, as ParseJSON reports them.
func lineCol(s string, off int) (int, int) {
	line := 1 + strings.Count(s[:off], "\n")
	ls := strings.LastIndexByte(s[:off], '\n') + 1
	return line, 1 + utf8.RuneCountInString(s[ls:off])
}

// checkFindings checks the invariants of a validation's findings.
func checkFindings(t *testing.T, errs, warns []Finding) {
	t.Helper()
	for _, list := range []struct {
		sev string
		fs  []Finding
	}{{SeverityError, errs}, {SeverityWarning, warns}} {
		if list.fs == nil {
			t.Fatalf("nil %s list", list.sev)
		}
		for _, x := range list.fs {
			if x.Severity != list.sev || x.Code == "" || x.Message == "" || x.Fix == "" || x.Snippet == "" || !strings.HasPrefix(x.Path, "$") {
				t.Fatalf("bad %s finding %+v", list.sev, x)
			}
		}
	}
}
