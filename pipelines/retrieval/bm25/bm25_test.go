package bm25

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// luceneClasspath is Debian liblucene8-java's jars (make deps installs
// the package), or "" when they are not there.
func luceneClasspath() string {
	var cp []string
	for _, name := range []string{"lucene-core", "lucene-analyzers-common"} {
		m, _ := filepath.Glob("/usr/share/java/" + name + "-8*.jar")
		if len(m) == 0 {
			return ""
		}
		cp = append(cp, m[0])
	}
	return strings.Join(cp, ":")
}

// syntheticCorpus is docs documents of Zipf-distributed words (with
// numbers, accents and a few long and repeated tokens) and queries of 1
// to 6 words, some absent from every document, some repeated.
func syntheticCorpus(docs, queries int) (d [][]string, q [][]string) {
	rng := rand.New(rand.NewPCG(19, 6962))
	vocab := make([]string, 3000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%x", i*2654435761%1000003)
		switch i % 37 {
		case 3:
			vocab[i] = "café" + vocab[i]
		case 5:
			vocab[i] = strconv.Itoa(i * 17)
		}
	}
	zipf := rand.NewZipf(rng, 1.1, 2, uint64(len(vocab)-1))
	for range docs {
		n := 1 + rng.IntN(220)
		if rng.IntN(10) == 0 {
			n = 400 + rng.IntN(2000) // long documents: lengths Lucene stores inexactly
		}
		doc := make([]string, n)
		for j := range doc {
			doc[j] = vocab[zipf.Uint64()]
		}
		d = append(d, doc)
	}
	for i := range queries {
		n := 1 + rng.IntN(6)
		var qq []string
		for range n {
			qq = append(qq, vocab[zipf.Uint64()])
		}
		switch i % 10 {
		case 1:
			qq = append(qq, "absentword")
		case 2:
			qq = append(qq, qq[0]) // a word given twice counts twice
		}
		q = append(q, qq)
	}
	return d, q
}

// TestBM25EqualsLucene: on 4,000 documents and 100 queries, the top 40 of
// every query are Lucene 8's, in the same order, with scores within 1e-5.
func TestBM25EqualsLucene(t *testing.T) {
	cp := luceneClasspath()
	if _, err := exec.LookPath("java"); err != nil || cp == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("java or Debian's liblucene8-java is missing: make deps installs them")
		}
		t.Skip("java or /usr/share/java/lucene-core-8*.jar missing (make deps)")
	}
	docs, queries := syntheticCorpus(4000, 100)
	dir := t.TempDir()
	write := func(name string, rows [][]string) string {
		var b bytes.Buffer
		for _, r := range rows {
			b.WriteString(strings.Join(r, " "))
			b.WriteByte('\n')
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const k = 40
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", "-cp", cp, "testdata/BM25Oracle.java", write("docs.txt", docs), write("queries.txt", queries),
		strconv.Itoa(k), fmt.Sprint(K1), fmt.Sprint(B))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the Lucene oracle: %v\n%s", err, stderr.String())
	}
	want := make([][]Hit, len(queries))
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var qi, doc int
		var score string
		if _, err := fmt.Sscan(sc.Text(), &qi, &doc, &score); err != nil {
			t.Fatalf("oracle line %q: %v", sc.Text(), err)
		}
		f, err := strconv.ParseFloat(score, 32)
		if err != nil {
			t.Fatal(err)
		}
		want[qi] = append(want[qi], Hit{Doc: doc, Score: float32(f)})
	}
	ix := New(docs)
	exact, compared := 0, 0
	for qi, q := range queries {
		got := ix.Search(q, k)
		if len(got) != len(want[qi]) {
			t.Errorf("query %d %v: %d hits, Lucene %d", qi, q, len(got), len(want[qi]))
			continue
		}
		for r := range got {
			g, w := got[r], want[qi][r]
			if g.Doc != w.Doc {
				t.Errorf("query %d %v rank %d: document %d (%g), Lucene %d (%g)", qi, q, r, g.Doc, g.Score, w.Doc, w.Score)
				break
			}
			if rel := math.Abs(float64(g.Score-w.Score)) / math.Max(float64(w.Score), 1e-9); rel > 1e-5 {
				t.Errorf("query %d rank %d: score %g, Lucene %g (%.1g relative)", qi, r, g.Score, w.Score, rel)
			}
			if g.Score == w.Score {
				exact++
			}
			compared++
		}
	}
	if compared < 1000 {
		t.Errorf("only %d ranked results compared: the corpus is too sparse to test anything", compared)
	}
	t.Logf("%d ranked results compared over %d queries, %d bit-identical scores", compared, len(queries), exact)
}

func TestAnalyze(t *testing.T) {
	for in, want := range map[string]string{
		"The Pump's filter (P-12) failed, at 3.5 bar!": "the pump s filter p 12 failed at 3 5 bar",
		"Café CRÈME naïve":                             "café crème naïve",
		"数据 and Ünïcödé\u0301":                         "数据 and ünïcödé\u0301",
		"":                                             "",
	} {
		if got := strings.Join(Analyze(in), " "); got != want {
			t.Errorf("Analyze(%q) = %q, want %q", in, got, want)
		}
	}
	long := strings.Repeat("a", 600)
	got := Analyze(long)
	if len(got) != 3 || len(got[0]) != 255 || len(got[2]) != 90 {
		t.Errorf("a 600-letter run: %d tokens", len(got))
	}
}

// TestLengthEncoding is Lucene's SmallFloat.intToByte4 / byte4ToInt:
// exact below 24, monotonic, and every length decodes to at most itself.
func TestLengthEncoding(t *testing.T) {
	for i := range 24 {
		if byte4ToInt(intToByte4(i)) != i {
			t.Fatalf("length %d is not kept exactly", i)
		}
	}
	prev := byte(0)
	for i := 0; i < 1<<20; i += 1 + i/64 {
		b := intToByte4(i)
		if b < prev || byte4ToInt(b) > i {
			t.Fatalf("length %d: byte %d decodes to %d", i, b, byte4ToInt(b))
		}
		prev = b
	}
	if intToByte4(math.MaxInt32) != 255 {
		t.Errorf("MaxInt32 encodes to %d, want 255", intToByte4(math.MaxInt32))
	}
}

// TestRepeatedQueryWords: a word given twice in the query counts twice,
// as Lucene's QueryParser makes one clause per occurrence (README says
// so).
func TestRepeatedQueryWords(t *testing.T) {
	ix := New([][]string{Analyze("the pump loses pressure"), Analyze("the filter clogs"), Analyze("roof and chimney")})
	once := ix.Search(Analyze("pump"), 3)
	twice := ix.Search(Analyze("pump pump"), 3)
	if len(once) != 1 || len(twice) != 1 || twice[0].Score != 2*once[0].Score {
		t.Errorf("pump: %v; pump pump: %v", once, twice)
	}
}
