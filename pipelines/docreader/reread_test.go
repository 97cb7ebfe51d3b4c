package docreader

import (
	"context"
	"errors"
	"strings"
	"testing"

	"boxd/engine/raster"
	"boxd/internal/problem"
	"boxd/internal/run"
	"boxd/pipelines/docreader/reread"
	"boxd/pipelines/llmcall"
	"boxd/pipelines/llmcall/llmcalltest"
)

// seeingChat is the tiny chat model with its tiny vision projector.
func seeingChat(t *testing.T, projector bool) (*llmcall.Model, *llmcalltest.Issuer) {
	t.Helper()
	return llmcalltest.Tiny(t, projector)
}

// TestRereadRule: on the scanned chart, the one line Tesseract read under
// 0.90 ("metformin 50@ mg", 8,969 bp) is read again by the vision model
// (the tiny random one: its words are noise, the path is real): both
// readings are kept on the element, the call is receipted, charged and
// bound by the document receipt, which verifies; the elements read with
// confidence are not re-read.
func TestRereadRule(t *testing.T) {
	chat, iss := seeingChat(t, true)
	s := &Service{Key: testKey(4), Chat: chat}
	b := &llmcalltest.Budget{}
	d, err := s.Read(context.Background(), run.Env{Budget: b}, ReadRequest{Sample: "scanned-chart"})
	if err != nil {
		t.Fatal(err)
	}
	var reads []Element
	for _, p := range d.Pages {
		for _, e := range p.Elements {
			if e.Reread != nil {
				reads = append(reads, e)
			}
			if e.Reread == nil && e.Source == SourceOCR && e.ConfBP < 9000 && e.Kind != KindTable {
				t.Errorf("%s (%d bp) was not re-read", e.ID, e.ConfBP)
			}
			if e.Reread != nil && e.ConfBP >= 9000 {
				t.Errorf("%s (%d bp) was re-read", e.ID, e.ConfBP)
			}
		}
	}
	if len(reads) != 1 || !strings.Contains(reads[0].Text, "metformin") {
		t.Fatalf("re-read %+v", reads)
	}
	r := reads[0].Reread
	calls := iss.Calls()
	if r.Source != "model" || len(calls) != 1 || r.Receipt != calls[0].ID || len(b.Committed()) != 1 {
		t.Fatalf("reading %+v; %d receipts, commits %v", r, len(calls), b.Committed())
	}
	if calls[0].Params["task"] != "docreader-reread" || len(calls[0].Params["image_sha256"]) != 64 || calls[0].Params["temperature"] != "0" {
		t.Errorf("receipt params %v", calls[0].Params)
	}
	if r.Agrees != reread.Same(r.Text, reads[0].Text) {
		t.Errorf("agrees %v for %q and %q", r.Agrees, r.Text, reads[0].Text)
	}
	if len(d.Receipt.ModelCalls) != 1 || d.Receipt.ModelCalls[0] != (ModelCallRef{ID: r.Receipt, Kind: "reread"}) ||
		len(d.Models) != 1 || d.Models[0].Role != "reread" {
		t.Errorf("receipt calls %+v, models %+v", d.Receipt.ModelCalls, d.Models)
	}
	if d.Reread == nil || *d.Reread != (reread.Summary{BelowBP: 9000, Candidates: 1, Reread: 1}) {
		t.Errorf("summary %+v", d.Reread)
	}
	allOK := func() bool {
		cs, err := Verify(d, s.Key.PublicKey())
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if !c.OK {
				return false
			}
		}
		return true
	}
	if !allOK() {
		t.Fatal("the document with its re-reading does not verify")
	}
	// The reading is bound: changed, the document no longer verifies.
	for pi := range d.Pages {
		for ei := range d.Pages[pi].Elements {
			if e := &d.Pages[pi].Elements[ei]; e.Reread != nil {
				e.Reread.Text += "x"
			}
		}
	}
	if allOK() {
		t.Error("a changed re-reading still verifies")
	}
	d.Models[0].Revision = strings.Repeat("0", 64)
	cs, err := Verify(d, s.Key.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.Name == "models" && c.OK {
			t.Error("a changed model passes the models check")
		}
	}
}

// TestRereadOff: reread false, a model that does not see, and a caller
// with no budget each read the document without model calls and say so;
// reread true without a seeing model is 503.
func TestRereadOff(t *testing.T) {
	no := false
	yes := true
	seeing, iss := seeingChat(t, true)
	blind, _ := seeingChat(t, false)
	for _, c := range []struct {
		name string
		chat *llmcall.Model
		env  run.Env
		req  ReadRequest
		note string
	}{
		{"reread false", seeing, run.Env{Budget: &llmcalltest.Budget{}}, ReadRequest{Sample: "scanned-chart", Reread: &no}, "reread: false"},
		{"blind model", blind, run.Env{Budget: &llmcalltest.Budget{}}, ReadRequest{Sample: "scanned-chart"}, "does not see images"},
		{"no chat model", nil, run.Env{Budget: &llmcalltest.Budget{}}, ReadRequest{Sample: "scanned-chart"}, "does not see images"},
		{"no budget", seeing, run.Env{}, ReadRequest{Sample: "scanned-chart"}, "may not make model calls"},
	} {
		s := &Service{Key: testKey(5), Chat: c.chat}
		d, err := s.Read(context.Background(), c.env, c.req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if d.Reread == nil || d.Reread.Candidates != 1 || d.Reread.Skipped != 1 || d.Reread.Reread != 0 || !strings.Contains(d.Reread.Note, c.note) {
			t.Errorf("%s: summary %+v", c.name, d.Reread)
		}
	}
	if n := len(iss.Calls()); n != 0 {
		t.Errorf("%d model calls", n)
	}
	s := &Service{Key: testKey(5), Chat: blind}
	_, err := s.Read(context.Background(), run.Env{Budget: &llmcalltest.Budget{}}, ReadRequest{Sample: "scanned-chart", Reread: &yes})
	if !problem.Is(err, problem.Unavailable) || !strings.Contains(err.Error(), "models.llm.projector") {
		t.Errorf("reread true, blind model: %v", err)
	}
}

// spent is a budget with nothing left.
type spent struct{ llmcalltest.Budget }

func (*spent) Reserve(context.Context, int64) (int64, func(int64), error) {
	return 0, nil, problem.New(problem.Budget, "token budget used up")
}

// TestRereadStops: the cap and a spent budget stop the re-reads, which
// are counted as skipped with the reason; the page still reads.
func TestRereadStops(t *testing.T) {
	chat, iss := seeingChat(t, true)
	img := &raster.Image{W: 300, H: 100, Pix: make([]byte, 300*100*3)}
	targets := []reread.Target{{ID: "a", BBox: [4]int{10, 10, 200, 30}, Text: "one", ConfBP: 5000}, {ID: "b", BBox: [4]int{10, 50, 200, 30}, Text: "two", ConfBP: 6000}}
	r := &reread.Reader{Chat: chat, Budget: &llmcalltest.Budget{}, Max: 1}
	got, err := r.Page(context.Background(), img, targets)
	if err != nil || len(got) != 1 || got["a"].Receipt == "" {
		t.Fatalf("capped: %v %v", got, err)
	}
	if s := r.Summary(); s.Reread != 1 || s.Skipped != 1 || !strings.Contains(s.Note, "at most 1 regions") || len(r.Receipts()) != 1 {
		t.Errorf("capped: %+v", s)
	}
	r = &reread.Reader{Chat: chat, Budget: &spent{}}
	got, err = r.Page(context.Background(), img, targets)
	if err != nil || len(got) != 0 {
		t.Fatalf("spent: %v %v", got, err)
	}
	if s := r.Summary(); s.Skipped != 2 || !strings.Contains(s.Note, "budget ran out") {
		t.Errorf("spent: %+v", s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r = &reread.Reader{Chat: chat, Budget: &llmcalltest.Budget{}}
	if _, err := r.Page(ctx, img, targets); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if len(iss.Calls()) != 1 {
		t.Errorf("%d receipts; want the one capped call's", len(iss.Calls()))
	}
}
