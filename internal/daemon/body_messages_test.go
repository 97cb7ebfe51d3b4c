package daemon

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	retrievalroutes "boxd/web/routes/retrieval"

	"boxd/pipelines/retrieval"
	"boxd/web/api"
)

// goWords are what a message must not hold: encoding/json's own text and
// Go's names for types and fields.
var goWords = []string{"json:", "Go value", "Go struct", "of type", "cannot unmarshal", ".flat", "searchBody", "Element.", "invalid character 'ï'"}

func hasGoWords(msg string) string {
	for _, w := range goWords {
		if strings.Contains(msg, w) {
			return w
		}
	}
	return ""
}

// TestBodyMessagesNameTheJSONPath: a value of the wrong type, at any
// depth of a body or of the document, chart or receipt a verify route
// takes, is named by its JSON path (list indices included) and the JSON
// type the place takes; a byte-order mark is named as one. Before, these
// came back as encoding/json's text ("cannot unmarshal string into Go
// value of type retrieval.flat", "Go struct field
// Element.pages.elements.bbox of type int", "invalid character 'ï'").
func TestBodyMessagesNameTheJSONPath(t *testing.T) {
	ts := platformServer(t, nil, nil)
	document := `{"id":"d","file":{"sha256":"a","type":"application/pdf","bytes":1,"pages":1},"pages":[{"page":1,"width":10,"height":10,"rotation":0,"deskew":0,"source":"text_layer","pixel_sha256":"b","elements":[` +
		`{"id":"p1-e1","page":1,"kind":"text","bbox":[1,1,5,5],"order":1,"text":"a","source":"parser","conf_bp":10000,"lines":[]},` +
		`{"id":"p1-e2","page":1,"kind":"text","bbox":[108.0,1,5,5],"order":2,"text":"b","source":"parser","conf_bp":10000,"lines":[]}]}],` +
		`"fields":[],"models":[],"receipt":{"v":"service.docreader-receipt.v1"}}`
	for _, c := range []struct {
		name, path, body, want string
	}{
		{"108.0 in a bbox", "/docreader/verify", `{"document":` + document + `}`,
			"document.pages[0].elements[1].bbox[0] must be a whole number (digits only: no decimal point or exponent), not the number 108.0"},
		{"a string for a page's width", "/docreader/verify", `{"document":` + strings.Replace(document, `"width":10`, `"width":"10"`, 1) + `}`,
			"document.pages[0].width must be a whole number, not a string"},
		{"a string for conf_bp", "/docreader/chart/verify", `{"chart":{"id":"c","conf_bp":"9000","receipt":{"v":"service.docreader-chart-receipt.v1"}}}`,
			"chart.conf_bp must be a whole number, not a string"},
		{"a chart's bbox as an object", "/docreader/chart/verify", `{"chart":{"id":"c","image":[],"receipt":{"v":"service.docreader-chart-receipt.v1"}}}`,
			"chart.image must be an object, not an array"},
		{"a string receipt", "/retrieval/verify", `{"receipt":"x","chunks":[],"documents":[]}`, "receipt is not a JSON object"},
		{"n_chunks as a string", "/retrieval/verify", `{"receipt":{"v":"service.retrieval.search.v1","index":{"n_chunks":"7"}},"chunks":[],"documents":[]}`,
			"receipt.index.n_chunks must be a whole number, not a string"},
		{"a chunk's text as a number", "/retrieval/verify", `{"receipt":{},"chunks":[{"chunk":"c1","text":"a"},{"chunk":"c2","text":5}],"documents":[]}`,
			"field chunks[1].text must be a string, not a number"},
		{"documents as an object", "/retrieval/verify", `{"receipt":{},"chunks":[],"documents":{}}`,
			"field documents must be an array, not an object"},
		{"a record as an array", "/record/verify", `{"record":[1]}`, ""},
		{"a record's count as a number", "/record/verify", `{"record":{"format":"service.record.v1","count":2,"entries":[{"n":1}]}}`, ""},
		{"a record's entries as an object", "/record/verify", `{"record":{"format":"service.record.v1","entries":{}}}`, ""},
		{"the body an array", "/docreader/verify", `[{"document":{}}]`, "body must be a JSON object, not an array"},
	} {
		r := ts.do(t, call{method: "POST", path: c.path, body: c.body})
		msg := string(r.body)
		if r.status == 400 {
			msg = r.errMsg(t)
		}
		t.Logf("%s: %d %s", c.name, r.status, msg)
		if w := hasGoWords(msg); w != "" {
			t.Errorf("%s: %d %q holds %q", c.name, r.status, msg, w)
		}
		if c.want != "" && (r.status != 400 || !strings.Contains(msg, c.want)) {
			t.Errorf("%s: %d %s\nwant 400 with %s", c.name, r.status, msg, c.want)
		}
	}
}

// TestBodyMessagesInsideSelfDecoding: /retrieval/index's documents decode
// themselves (retrieval.Document); a wrong type inside one is named by its
// path in the body, not by encoding/json's offset into the document.
func TestBodyMessagesInsideSelfDecoding(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"documents":[{"id":"a","text":"x"},{"id":7,"text":"y"}],"synthetic":true}`, "field documents[1].id must be a string, not a number"},
		{`{"documents":[{"id":"a","text":["y"]}],"synthetic":true}`, "field documents[0].text must be a string, not an array"},
		{`{"documents":"a","synthetic":true}`, "field documents must be an array, not a string"},
		{`{"documents":[],"synthetic":"yes"}`, "field synthetic must be true or false, not a string"},
	} {
		r := httptest.NewRequest(http.MethodPost, "/retrieval/index", strings.NewReader(c.body))
		var req retrieval.IndexRequest
		e := api.DecodeJSON(httptest.NewRecorder(), r, retrievalroutes.IndexBodyLimit, &req)
		if e == nil || e.Error() != c.want {
			t.Errorf("%s: %v\nwant %s", c.body, e, c.want)
		}
	}
}

// TestBodyBOMNamed: a UTF-8 byte-order mark before a JSON body is named,
// with what to do, on every route that reads a JSON body (the verify
// routes here; decodeBody serves them all).
func TestBodyBOMNamed(t *testing.T) {
	ts := platformServer(t, nil, nil)
	for _, path := range []string{"/record/verify", "/docreader/verify", "/docreader/chart/verify", "/retrieval/verify", "/demo/session"} {
		r := ts.do(t, call{method: "POST", path: path, body: "\xEF\xBB\xBF{}"})
		if r.status != 400 || r.errMsg(t) != "the body starts with a UTF-8 byte-order mark (EF BB BF): send JSON without it" {
			t.Errorf("%s: %d %s", path, r.status, r.body)
		}
	}
	r := ts.do(t, call{method: "POST", path: "/demo/session", body: "\xFF\xFE{\x00}\x00"})
	if r.status != 400 || !strings.Contains(r.errMsg(t), "UTF-16 byte-order mark") {
		t.Errorf("UTF-16: %d %s", r.status, r.body)
	}
	// A document sent to boxd verify's decoder with one is named too.
	var v json.RawMessage
	if json.Unmarshal([]byte("\xEF\xBB\xBF{}"), &v) == nil {
		t.Fatal("encoding/json reads a BOM")
	}
}
