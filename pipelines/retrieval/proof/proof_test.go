package proof

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

type settings struct {
	Version   string `json:"version"`
	MaxChars  int    `json:"max_chars"`
	MaxTokens int    `json:"max_tokens,omitempty"`
}

type model struct {
	Repo     string `json:"repo"`
	Revision string `json:"revision"`
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// TestFormatsByteForByte: each format's bytes, spelled out as README and
// an outsider's verifier write them: v2 is canonical JSON (sorted keys,
// no spaces, <, >, & and non-ASCII as themselves), v1 Go's HTML-safe
// encoding in field order (kept for indexes made before v2).
func TestFormatsByteForByte(t *testing.T) {
	d, c := sum("doc"), sum("chunk")
	for _, tc := range []struct {
		name, got, want string
	}{
		{"leaf v2", string(Leaf(IndexV2, d, "R&D <draft> é", "c0", 0, 17, c)),
			`["boxd.retrieval.leaf.v2","` + d + `","R&D <draft> é","c0",0,17,"` + c + `"]`},
		{"leaf v1", string(Leaf(IndexV1, d, "R&D <draft> é", "c0", 0, 17, c)),
			`["boxd.retrieval.leaf.v1","` + d + `","R\u0026D \u003cdraft\u003e é","c0",0,17,"` + c + `"]`},
		{"leaf of an index without a format (v1)", string(Leaf("", d, "a", "c1", 3, 4, c)),
			`["boxd.retrieval.leaf.v1","` + d + `","a","c1",3,4,"` + c + `"]`},
		{"index v2", IndexHash(IndexV2, d, 3, settings{"boxd-chunker-2", 1200, 512}, model{"e<&>", "r"}, ""),
			sum(`{"chunker":{"max_chars":1200,"max_tokens":512,"version":"boxd-chunker-2"},"corpus_root":"` + d + `","embedder":{"repo":"e<&>","revision":"r"},"n_chunks":3,"v":"boxd.retrieval.index.v2"}`)},
		{"index v2 with a layout", IndexHash(IndexV2, d, 3, settings{"boxd-elements-2", 1200, 0}, model{"e", "r"}, c),
			sum(`{"chunker":{"max_chars":1200,"version":"boxd-elements-2"},"corpus_root":"` + d + `","embedder":{"repo":"e","revision":"r"},"layout_sha256":"` + c + `","n_chunks":3,"v":"boxd.retrieval.index.v2"}`)},
		{"index v1", IndexHash(IndexV1, d, 3, settings{"boxd-chunker-1", 1200, 0}, model{"e<&>", "r"}, ""),
			sum(`{"v":"boxd.retrieval.index.v1","corpus_root":"` + d + `","n_chunks":3,"chunker":{"version":"boxd-chunker-1","max_chars":1200},"embedder":{"repo":"e\u003c\u0026\u003e","revision":"r"}}`)},
		{"layout v2", LayoutHash(IndexV2, [][]any{{"c0", "doc-1", "p1-e2", 1, 10, 20, 30, 40}, {"c1", nil, nil, 0, 0, 0, 0, 0}}),
			sum(`["boxd.retrieval.layout.v2",[["c0","doc-1","p1-e2",1,10,20,30,40],["c1",null,null,0,0,0,0,0]]]`)},
		{"layout v1", LayoutHash("", [][]any{{"c0", "a&b", "p1-e2", 1, 10, 20, 30, 40}}),
			sum(`["boxd.retrieval.layout.v1",[["c0","a\u0026b","p1-e2",1,10,20,30,40]]]`)},
	} {
		if tc.got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, tc.got, tc.want)
		}
	}
	if err := Check("boxd.retrieval.index.v9"); err == nil {
		t.Error("an unknown format was accepted")
	}
}
