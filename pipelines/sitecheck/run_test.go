package sitecheck

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"boxd/pipelines/sitecheck/pagecheck"
)

// TestRunSectionsEqualKitFunctions guards Run's single scan of the home
// page: its jsonld, text and meta sections equal what the kit functions
// (checkPageJsonLd, checkLiveMeta), which scan the page themselves, give
// for the same page and URL, on every page of the shared fixtures and on
// a large synthetic page.
func TestRunSectionsEqualKitFunctions(t *testing.T) {
	var pages []struct{ name, html string }
	for _, file := range []string{"check_page_jsonld.json", "check_live_meta.json"} {
		data, err := os.ReadFile(filepath.Join(fixtureDir, file))
		if err != nil {
			t.Fatal(err)
		}
		var cases []kitCase
		if err := json.Unmarshal(data, &cases); err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			var in struct {
				HTML *string `json:"html"`
			}
			if err := json.Unmarshal(c.Input, &in); err != nil || in.HTML == nil {
				continue // a case without a page
			}
			pages = append(pages, struct{ name, html string }{file + ": " + c.Name, *in.HTML})
		}
	}
	if len(pages) < 80 {
		t.Fatalf("only %d fixture pages", len(pages))
	}
	pages = append(pages, struct{ name, html string }{"synthetic 1 MiB page", bigPage(1 << 20)})

	var mu sync.Mutex
	current := ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		body := current
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	c := testChecker()
	for _, p := range pages {
		mu.Lock()
		current = p.html
		mu.Unlock()
		rep, err := c.Run(context.Background(), Request{Domain: srv.URL})
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		page := pagecheck.CheckPageJSONLD(p.html, rep.URL)
		want := JSONLDSection{Blocks: page.Blocks, Objects: page.Objects, ErrorCount: page.ErrorCount, WarningCount: page.WarningCount}
		if !sameJSON(t, rep.JSONLD, want) {
			t.Errorf("%s: jsonld section differs from checkPageJsonLd", p.name)
		}
		if rep.Text != page.Text {
			t.Errorf("%s: text %q, checkPageJsonLd gives %q", p.name, rep.Text, page.Text)
		}
		if meta := pagecheck.CheckMeta(p.html, rep.URL); !reflect.DeepEqual(rep.Meta, meta) {
			t.Errorf("%s: meta section %+v, checkLiveMeta gives %+v", p.name, rep.Meta, meta)
		}
	}
}

func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	return string(mustJSON(t, a)) == string(mustJSON(t, b))
}
