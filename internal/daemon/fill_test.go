package daemon

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"boxd/configs"
	"boxd/pipelines/fill"
	"boxd/pipelines/llmcall"
	"boxd/web"
)

// sampleAnswers point at the clinic-intake sample's lines as a good model
// would (and one secret, which the rules refuse).
type sampleAnswers struct{}

func (sampleAnswers) Propose(context.Context, []fill.Field, []fill.Line) ([]fill.Proposal, string, *llmcall.Result, error) {
	return []fill.Proposal{{FID: "f1", Doc: "referral.txt", Line: 2, Value: "Ana"}, {FID: "f2", Doc: "referral.txt", Line: 2, Value: "Silva"},
		{FID: "f3", Doc: "referral.txt", Line: 3, Value: "04/03/1987"}, {FID: "f4", Doc: "referral.txt", Line: 4, Value: "07700 900123"},
		{FID: "f5", Doc: "referral.txt", Line: 5, Value: "United Kingdom"}, {FID: "f6", Doc: "referral.txt", Line: 6, Value: "penicillin"},
		{FID: "f7", Doc: "insurance-card.txt", Line: 2, Value: "EM-4471-2290"}}, "h", nil, nil
}

func fillServer(t *testing.T, now func() time.Time, extra ...func(*Box)) *testServer {
	t.Helper()
	cfg := configs.Defaults()
	cfg.AdminSecret = configs.Secret(adminSecret)
	ts := launch(t, cfg, web.Probes{}, now, func(s *Box) {
		if s.Fill.Browser == nil {
			if os.Getenv("CI") == "true" {
				t.Fatal(s.FillErr)
			}
			t.Skip(s.FillErr)
		}
		s.Fill.Ask = sampleAnswers{}
		if now != nil {
			s.Fill.Now = now // the platform has the clock; the server's own is real time
		}
		for _, f := range extra {
			f(s)
		}
	})
	return ts
}

// TestFillRoutes: the clinic-intake sample filled (values with their
// lines, the member ID left sensitive, the hidden instruction flagged);
// approve without acknowledging the flag is 409, with it a signed
// approval naming the person, and a second approval 409; the record
// verifies at /flight/verify and a changed field is named; another token
// cannot see the run (404); DELETE removes it; the refusals.
func TestFillRoutes(t *testing.T) {
	ts := fillServer(t, nil)
	tok := session(t, ts, fill.Vertical)
	r := ts.do(t, call{method: "POST", path: "/fill/run", token: tok, body: map[string]any{"sample_id": "clinic-intake"}})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var out struct {
		RunID  string `json:"run_id"`
		Review struct {
			Fields []struct {
				FID, Status, Value string
			} `json:"fields"`
			Summary fill.Summary `json:"summary"`
			Flags   []fill.Flag  `json:"flags"`
		} `json:"review"`
		Record json.RawMessage `json:"record"`
		Check  struct {
			OK bool `json:"ok"`
		} `json:"check"`
	}
	if err := json.Unmarshal(r.body, &out); err != nil {
		t.Fatal(err)
	}
	st := map[string]string{}
	for _, f := range out.Review.Fields {
		st[f.FID] = f.Status + " " + f.Value
	}
	for fid, want := range map[string]string{"f1": "sourced Ana", "f3": "sourced 04/03/1987", "f4": "sourced 07700 900123", "f5": "chosen GB", "f7": "sensitive ", "f8": "left "} {
		if st[fid] != want {
			t.Errorf("%s: %q, want %q", fid, st[fid], want)
		}
	}
	if len(out.Review.Flags) != 1 || !out.Check.OK || out.Review.Summary.Flags != 1 {
		t.Fatalf("flags %+v check %v", out.Review.Flags, out.Check)
	}
	approve := func(token string, ack []int) reply {
		return ts.do(t, call{method: "POST", path: "/fill/runs/" + out.RunID + "/approve", token: token, body: map[string]any{"person": map[string]string{"name": "Ana Silva"}, "confirm": true, "acknowledge_flags": ack}})
	}
	if a := approve(tok, []int{}); a.status != 409 || !strings.Contains(string(a.body), "flags 1 are not acknowledged") {
		t.Errorf("approve without acknowledging: %d %s", a.status, a.body)
	}
	if a := ts.do(t, call{method: "POST", path: "/fill/runs/" + out.RunID + "/approve", token: tok, body: map[string]any{"person": map[string]string{"name": "Ana"}, "confirm": false}}); a.status != 400 {
		t.Errorf("confirm false: %d %s", a.status, a.body)
	}
	other := session(t, ts, fill.Vertical)
	if a := approve(other, []int{1}); a.status != 404 {
		t.Errorf("another token's approval: %d %s", a.status, a.body)
	}
	a := approve(tok, []int{1})
	if a.status != 200 || !strings.Contains(string(a.body), `"person":"Ana Silva"`) {
		t.Fatalf("approve: %d %s", a.status, a.body)
	}
	if again := approve(tok, []int{1}); again.status != 409 {
		t.Errorf("approved twice: %d", again.status)
	}
	var ap struct {
		Approval struct {
			Record json.RawMessage `json:"record"`
		} `json:"approval"`
	}
	_ = json.Unmarshal(a.body, &ap)
	for _, rec := range []json.RawMessage{out.Record, ap.Approval.Record} {
		v := ts.do(t, call{method: "POST", path: "/flight/verify", body: map[string]any{"record": rec}})
		if v.status != 200 || !strings.Contains(string(v.body), `"ok":true`) {
			t.Errorf("flight verify: %d %s", v.status, v.body)
		}
	}
	changed := strings.Replace(string(out.Record), `04/03/1987`, `05/03/1987`, 1)
	v := ts.do(t, call{method: "POST", path: "/flight/verify", body: map[string]any{"record": json.RawMessage(changed)}})
	if v.status != 200 || !strings.Contains(string(v.body), `"ok":false`) || !strings.Contains(string(v.body), `"changed_step":{"n":5,"type":"field"}`) {
		t.Errorf("a changed date of birth: %d %s", v.status, v.body)
	}
	if v := ts.do(t, call{method: "POST", path: "/flight/verify", body: map[string]any{}}); v.status != 400 || !strings.Contains(string(v.body), "record is required") {
		t.Errorf("flight verify with no record: %d %s", v.status, v.body)
	}
	if v := ts.do(t, call{method: "POST", path: "/flight/verify", body: map[string]any{"record": string(out.Record)}}); v.status != 200 || !strings.Contains(string(v.body), `"ok":true`) {
		t.Errorf("flight verify with the record as a string: %d %s", v.status, v.body)
	}
	if rv := ts.do(t, call{method: "POST", path: "/record/verify", body: map[string]any{"record": out.Record}}); !strings.Contains(string(rv.body), `"ok":true`) {
		t.Errorf("record verify: %s", rv.body)
	}
	if d := ts.do(t, call{method: "DELETE", path: "/fill/runs/" + out.RunID, token: other}); d.status != 404 {
		t.Errorf("another token's delete: %d", d.status)
	}
	if d := ts.do(t, call{method: "DELETE", path: "/fill/runs/" + out.RunID, token: tok}); d.status != 200 {
		t.Errorf("delete: %d %s", d.status, d.body)
	}
	if a := approve(tok, []int{1}); a.status != 404 {
		t.Errorf("approve after delete: %d", a.status)
	}

	form := `<form><label>Name <input name="n"></label></form>`
	text := "Ana Silva"
	for _, c := range []struct {
		name   string
		body   any
		status int
		want   string
	}{
		{"nothing", map[string]any{}, 400, "target is required"},
		{"unknown sample", map[string]any{"sample_id": "nope"}, 404, "no sample"},
		{"no field", map[string]any{"target": map[string]string{"html": "<p>hi</p>"}, "sources": []any{map[string]any{"name": "a", "text": text}}}, 400, "must contain an input"},
		{"too large", map[string]any{"target": map[string]string{"html": "<input>" + strings.Repeat("a", fill.MaxHTML)}, "sources": []any{map[string]any{"name": "a", "text": text}}}, 413, "at most"},
		{"a source over 8 MB", map[string]any{"target": map[string]string{"html": form}, "sources": []any{map[string]any{"name": "big.txt", "text": strings.Repeat("a", fill.MaxSourceSize+1)}}}, 413, "sources[0] is"},
		{"a GIF", map[string]any{"target": map[string]string{"html": form}, "sources": []any{map[string]any{"name": "a.gif", "data_b64": "R0lGODlh", "media_type": "image/gif"}}}, 415, "PDF (application/pdf), PNG, JPEG or WebP"},
		{"a court filing", map[string]any{"target": map[string]string{"html": `<h1>Small claims court</h1><form><label>Plaintiff <input></label></form>`}, "sources": []any{map[string]any{"name": "a", "text": text}}}, 422, "court filing"},
		{"bad review_lang", map[string]any{"sample_id": "clinic-intake", "review_lang": "xx"}, 400, "24 EU language codes"},
		{"review_lang without a model", map[string]any{"sample_id": "clinic-intake", "review_lang": "pt"}, 200, `"translation":{"available":false,"lang":"pt","why":"no chat model is loaded`},
		{"nine sources", map[string]any{"target": map[string]string{"html": form}, "sources": make([]any, 9)}, 400, "1 to 8"},
	} {
		r := ts.do(t, call{method: "POST", path: "/fill/run", token: session(t, ts, fill.Vertical), body: c.body})
		if r.status != c.status || !strings.Contains(string(r.body), c.want) {
			t.Errorf("%s: %d %s; want %d with %q", c.name, r.status, r.body, c.status, c.want)
		}
	}
	if i := ts.do(t, call{method: "GET", path: "/fill/info"}); i.status != 200 || !strings.Contains(string(i.body), "never typed") {
		t.Errorf("info %d", i.status)
	}

	// A demo form: nothing is sent before approval; exactly one Submit
	// after, to the box's own demo endpoint; a second approval sends none.
	d := ts.do(t, call{method: "POST", path: "/fill/run", token: tok, body: map[string]any{"target": map[string]string{"demo": "clinic-intake"}, "sources": fill.Samples[0].Sources}})
	if d.status != 200 || len(ts.Fill.Inbox.Sent()) != 0 {
		t.Fatalf("demo run: %d, %d sent %s", d.status, len(ts.Fill.Inbox.Sent()), d.body)
	}
	did := d.json(t)["run_id"].(string)
	ok := ts.do(t, call{method: "POST", path: "/fill/runs/" + did + "/approve", token: tok, body: map[string]any{"person": map[string]string{"name": "Ana Silva"}, "confirm": true, "acknowledge_flags": []int{1}}})
	if ok.status != 200 || !strings.Contains(string(ok.body), `"released":true`) || len(ts.Fill.Inbox.Sent()) != 1 {
		t.Errorf("demo approval: %d, %d sent %s", ok.status, len(ts.Fill.Inbox.Sent()), ok.body)
	}
	if again := ts.do(t, call{method: "POST", path: "/fill/runs/" + did + "/approve", token: tok, body: map[string]any{"person": map[string]string{"name": "Ana Silva"}, "confirm": true, "acknowledge_flags": []int{1}}}); again.status != 409 || len(ts.Fill.Inbox.Sent()) != 1 {
		t.Errorf("a second approval: %d, %d sent", again.status, len(ts.Fill.Inbox.Sent()))
	}
	if fields := ts.Fill.Inbox.Sent()[0].Fields; fields["first_name"] != "Ana" || fields["member"] != "" {
		t.Errorf("the released fields %v", fields)
	}
	if s := ts.do(t, call{method: "GET", path: "/fill/samples"}); s.status != 200 || !strings.Contains(string(s.body), "clinic-intake") {
		t.Errorf("samples %d", s.status)
	}
}

// TestFillRunsRemovedAfter24Hours: a run is kept 24 hours and then
// removed (the clock is the test's; a developer key, whose runs outlive
// a demo session).
func TestFillRunsRemovedAfter24Hours(t *testing.T) {
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	ts := fillServer(t, clock)
	key, _ := createKey(t, ts, map[string]any{})
	runID := func() string {
		r := ts.do(t, call{method: "POST", path: "/fill/run", token: key, body: map[string]any{"sample_id": "clinic-intake"}})
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		return r.json(t)["run_id"].(string)
	}
	a, b := runID(), runID()
	approve := func(id string) int {
		return ts.do(t, call{method: "POST", path: "/fill/runs/" + id + "/approve", token: key,
			body: map[string]any{"person": map[string]string{"name": "Ana"}, "confirm": true, "acknowledge_flags": []int{1}}}).status
	}
	mu.Lock()
	now = now.Add(23*time.Hour + 59*time.Minute)
	mu.Unlock()
	if st := approve(a); st != 200 {
		t.Errorf("after 23:59: %d", st)
	}
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	if st := approve(b); st != 404 {
		t.Errorf("after 24 hours: %d", st)
	}
}
