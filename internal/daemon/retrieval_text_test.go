package daemon

import (
	"strings"
	"testing"
)

// TestRetrievalRefusesUnreadableText: the retrieval routes refuse, with
// 400 naming the field, text encoding/json would have read silently as
// something else (bytes that are not UTF-8, a \u escape of a lone
// surrogate: both became U+FFFD and were indexed and hashed), an empty
// or blank document, a NUL in an id, a title, a text, a query, a quote or
// a chunk id, and a control character in an id. Keys twice or unknown
// inside a document are still refused; a surrogate pair is text.
func TestRetrievalRefusesUnreadableText(t *testing.T) {
	ts, _ := retrievalServer(t, nil)
	tok := session(t, ts, "clinical")
	index := func(docs string) string { return `{"synthetic": true, "documents": [` + docs + `]}` }
	ok := `{"id": "a", "text": "The pump loses pressure at night."}`
	hash := strings.Repeat("a", 64)
	for _, c := range []struct {
		name, path, body string
		status           int
		says             string
	}{
		{"bytes that are not UTF-8", "/retrieval/index", index(ok + `, {"id": "b", "text": "Valve ` + "\xff\xfe" + ` closed."}`), 400, "documents[1].text is not valid UTF-8"},
		{"a lone high surrogate", "/retrieval/index", index(`{"id": "a", "text": "Valve \ud800 closed."}`), 400, "documents[0].text is not valid UTF-8"},
		{"a lone low surrogate", "/retrieval/index", index(`{"id": "a", "text": "Valve \udc00 closed."}`), 400, "documents[0].text is not valid UTF-8"},
		{"an id that is not UTF-8", "/retrieval/index", index(`{"id": "a` + "\xc3" + `", "text": "Text."}`), 400, "documents[0].id is not valid UTF-8"},
		{"a title that is not UTF-8", "/retrieval/index", index(`{"id": "a", "title": "T` + "\x80" + `", "text": "Text."}`), 400, "documents[0].title is not valid UTF-8"},
		{"an empty document", "/retrieval/index", index(ok + `, {"id": "b", "text": ""}`), 400, "documents[1].text is empty"},
		{"a blank document", "/retrieval/index", index(`{"id": "a", "text": " \n\t "}`), 400, "documents[0].text is empty"},
		{"NUL in an id", "/retrieval/index", index(`{"id": "a\u0000b", "text": "Text."}`), 400, "documents[0].id holds a NUL"},
		{"a control character in an id", "/retrieval/index", index(`{"id": "a\u001b[31m", "text": "Text."}`), 400, "documents[0].id holds the control character U+001B"},
		{"NUL in a title", "/retrieval/index", index(`{"id": "a", "title": "x\u0000", "text": "Text."}`), 400, "documents[0].title holds a NUL"},
		{"NUL in a text", "/retrieval/index", index(`{"id": "a", "text": "Text.\u0000 More."}`), 400, "documents[0].text holds a NUL"},
		{"a key twice in a document", "/retrieval/index", index(`{"id": "a", "id": "b", "text": "Text."}`), 400, "appears twice"},
		{"an unknown key in a document", "/retrieval/index", index(`{"id": "a", "text": "Text.", "colour": 1}`), 400, "colour"},
		{"a query that is not UTF-8", "/retrieval/search", `{"index": "` + hash + `", "query": "pres` + "\xff" + `sure"}`, 400, "query is not valid UTF-8"},
		{"a query with a lone surrogate", "/retrieval/search", `{"index": "` + hash + `", "query": "\udfff"}`, 400, "query is not valid UTF-8"},
		{"NUL in a query", "/retrieval/search", `{"index": "` + hash + `", "query": "pressure\u0000"}`, 400, "query holds a NUL"},
		{"a query's documents", "/retrieval/search", `{"synthetic": true, "query": "q", "documents": [{"id": "a", "text": ""}]}`, 400, "documents[0].text is empty"},
		{"a quote with a lone surrogate", "/retrieval/quotes", `{"index": "` + hash + `", "chunks": ["c0"], "quotes": ["fine", "bad \ud83d"]}`, 400, "quotes[1] is not valid UTF-8"},
		{"NUL in a chunk id", "/retrieval/quotes", `{"index": "` + hash + `", "chunks": ["c0\u0000"], "quotes": ["the pump"]}`, 400, "chunks[0] holds a NUL"},
		{"NUL in an answer", "/retrieval/quotes", `{"index": "` + hash + `", "query": "q", "answer": "It\u0000 is."}`, 400, "answer holds a NUL"},
		{"NUL in a scan's name", "/retrieval/index-scans", `{"synthetic": true, "documents": [{"name": "a\u0000", "document": {"id": "x"}}]}`, 400, "documents[0].name holds a NUL"},
		{"a scan's name not UTF-8", "/retrieval/index-scans", `{"synthetic": true, "documents": [{"name": "a` + "\xff" + `", "document": {"id": "x"}}]}`, 400, "documents[0].name is not valid UTF-8"},
	} {
		r := ts.do(t, call{method: "POST", path: c.path, token: tok, body: c.body})
		if r.status != c.status || !strings.Contains(r.errMsg(t), c.says) {
			t.Errorf("%s: %d %s, want %d naming %q", c.name, r.status, r.body, c.status, c.says)
		}
	}
	// A surrogate pair is one character, and U+FFFD sent as such is text.
	pair := index(`{"id": "a", "text": "The pump \ud83d\ude00 loses pressure \ufffd at night."}`)
	if r := ts.do(t, call{method: "POST", path: "/retrieval/index", token: tok, body: pair}); r.status != 200 {
		t.Errorf("a surrogate pair: %d %s", r.status, r.body)
	}
}
