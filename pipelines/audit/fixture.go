package audit

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"boxd/engine/attest"
	"boxd/internal/atomicfile"
	"boxd/pipelines/llmcall"
)

// FixtureFormat is the signed message prefix of a reference fixture.
const FixtureFormat = "boxd.audit.fixture.v1"

// Fixture is a reference: every probe's answer by the claimed weights on a
// reference stack, the quality it scored, and the spread measured across
// repeated runs (noise). fixture_sha256 is the sha256 of its signed
// message; fixture_sig signs that message with the box's key.
type Fixture struct {
	ID      string   `json:"id"`
	Aliases []string `json:"aliases"`
	Model   string   `json:"model"`
	Engine  string   `json:"engine"`
	// Weights identifies the weights: the box's weights root (sha256 Merkle
	// root of the file, engine/models) or the file's sha256.
	Weights     string `json:"weights"`
	Suite       string `json:"suite"`
	SuiteSHA256 string `json:"suite_sha256"`
	RecordedAt  string `json:"recorded_at"`
	// RecordSeconds is how long recording took.
	RecordSeconds string         `json:"record_seconds"`
	Noise         Noise          `json:"noise"`
	Quality       QualityScores  `json:"quality"`
	Probes        []FixtureProbe `json:"probes"`
	Signer        Signer         `json:"signer"`
	FixtureSHA256 string         `json:"fixture_sha256"`
	FixtureSig    string         `json:"fixture_sig"`
}

// Signer names the key that signed a fixture or report.
type Signer struct {
	PubKey string `json:"pubkey"`
	KeyID  string `json:"key_id"`
}

// FixtureProbe is one probe's reference answer.
type FixtureProbe struct {
	ID        string     `json:"id"`
	Kind      string     `json:"kind"`
	Text      string     `json:"text"`
	Tokens    []Token    `json:"tokens,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// CompletionTokens and Finish are what the reference reported (0 and
	// "" when it did not): an answer cut short is not identical.
	CompletionTokens int    `json:"completion_tokens,omitempty"`
	Finish           string `json:"finish,omitempty"`
	Error            string `json:"error,omitempty"`
}

// Noise is the spread of the reference stack: the repeat runs (other
// seeds, another batch composition) compared with the first as a target
// would be. Figures are decimal strings (signed documents carry numbers as
// strings).
type Noise struct {
	Runs int `json:"runs"`
	// Configs names each repeat's difference from the first run.
	Configs []string `json:"configs"`
	// LogprobDelta is the largest mean |Δ logprob| of a repeat ("" when
	// the stack gave no logprobs).
	LogprobDelta string `json:"logprob_delta"`
	// Exact is the smallest share of identical greedy answers.
	Exact string `json:"exact"`
	// First is the smallest share of answers with the same first token.
	First string `json:"first"`
}

// ReferenceListing is a fixture as GET /audit/references lists it.
type ReferenceListing struct {
	ID            string   `json:"id"`
	Aliases       []string `json:"aliases"`
	Model         string   `json:"model"`
	Engine        string   `json:"engine"`
	RecordedAt    string   `json:"recorded_at"`
	FixtureSHA256 string   `json:"fixture_sha256"`
	FixtureSig    string   `json:"fixture_sig"`
	Noise         Noise    `json:"noise"`
	Suite         string   `json:"suite"`
	Probes        int      `json:"probes"`
}

// signedBody is the fixture without its hash and signature.
func (f *Fixture) signedBody() Fixture {
	c := *f
	c.FixtureSHA256, c.FixtureSig = "", ""
	return c
}

// fixtureDoc is what the fixture signature covers: every field but
// fixture_sha256 and fixture_sig.
func fixtureDoc(f *Fixture) (map[string]any, error) {
	b, err := json.Marshal(f.signedBody())
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	delete(m, "fixture_sha256")
	delete(m, "fixture_sig")
	return m, nil
}

// Sign fills the signer, fixture_sha256 and fixture_sig with key.
func (f *Fixture) Sign(key *attest.Key) error {
	f.Signer = Signer{PubKey: key.PublicKeyHex(), KeyID: key.ID()}
	doc, err := fixtureDoc(f)
	if err != nil {
		return fmt.Errorf("audit: fixture %s: %w", f.ID, err)
	}
	sig, msg, err := key.Sign(FixtureFormat, doc)
	if err != nil {
		return fmt.Errorf("audit: signing fixture %s: %w", f.ID, err)
	}
	f.FixtureSHA256, f.FixtureSig = attest.HashText(string(msg)), sig
	return nil
}

// Verify checks the fixture's hash and signature against its signer, and
// that the signer is trusted (one of keys).
func (f *Fixture) Verify(trusted ...ed25519.PublicKey) error {
	doc, err := fixtureDoc(f)
	if err != nil {
		return err
	}
	msg, err := attest.Message(FixtureFormat, doc)
	if err != nil {
		return err
	}
	if attest.HashText(string(msg)) != f.FixtureSHA256 {
		return errors.New("fixture_sha256 does not match the fixture")
	}
	if err := attest.VerifyHex(f.Signer.PubKey, f.FixtureSig, msg); err != nil {
		return fmt.Errorf("fixture_sig: %w", err)
	}
	for _, k := range trusted {
		if attest.KeyID(k) == f.Signer.KeyID && strings.EqualFold(fmt.Sprintf("%x", []byte(k)), f.Signer.PubKey) {
			return nil
		}
	}
	return fmt.Errorf("the fixture is signed by %s, a key this box does not trust", f.Signer.KeyID)
}

// probe is the reference answer of probe id (nil when absent).
func (f *Fixture) probe(id string) *FixtureProbe {
	for i := range f.Probes {
		if f.Probes[i].ID == id {
			return &f.Probes[i]
		}
	}
	return nil
}

// Names reports whether name is the fixture's model, id or one of its
// aliases (case-insensitive).
func (f *Fixture) Names(name string) bool {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		return false
	}
	if strings.ToLower(f.ID) == name || strings.ToLower(f.Model) == name {
		return true
	}
	for _, a := range f.Aliases {
		if strings.ToLower(a) == name {
			return true
		}
	}
	return false
}

var fixtureIDRe = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// References are the fixtures this box holds: a directory of signed
// fixture files (<id>.json), each checked when read.
type References struct {
	Dir     string
	Trusted []ed25519.PublicKey

	mu   sync.Mutex
	byID map[string]*Fixture
	errs map[string]string
}

// Load reads every fixture file of the directory; a file that does not
// verify is skipped and said in Errors.
func (r *References) Load() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byID, r.errs = map[string]*Fixture{}, map[string]string{}
	ents, err := os.ReadDir(r.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("audit: reading the references in %s: %w", r.Dir, err)
	}
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		f, err := ReadFixture(filepath.Join(r.Dir, e.Name()))
		if err == nil {
			err = f.Verify(r.Trusted...)
		}
		if err != nil {
			r.errs[e.Name()] = err.Error()
			continue
		}
		r.byID[f.ID] = f
	}
	return nil
}

// Errors are the fixture files Load skipped, with why.
func (r *References) Errors() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]string{}
	for k, v := range r.errs {
		out[k] = v
	}
	return out
}

// Find is the fixture that names model (id, model or alias); the
// directory is read again when none does (boxd audit record may have
// added one).
func (r *References) Find(model string) *Fixture {
	if f := r.find(model); f != nil {
		return f
	}
	if r.Dir != "" && r.Load() == nil {
		return r.find(model)
	}
	return nil
}

func (r *References) find(model string) *Fixture {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]string, 0, len(r.byID))
	for id := range r.byID {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if r.byID[id].Names(model) {
			return r.byID[id]
		}
	}
	return nil
}

// List is every fixture, by id (the directory read again).
func (r *References) List() []ReferenceListing {
	if r.Dir != "" {
		_ = r.Load()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]ReferenceListing, 0, len(r.byID))
	for _, f := range r.byID {
		out = append(out, ReferenceListing{ID: f.ID, Aliases: f.Aliases, Model: f.Model, Engine: f.Engine, RecordedAt: f.RecordedAt,
			FixtureSHA256: f.FixtureSHA256, FixtureSig: f.FixtureSig, Noise: f.Noise, Suite: f.Suite, Probes: len(f.Probes)})
	}
	slices.SortFunc(out, func(a, b ReferenceListing) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Add verifies f and writes it to the directory (mode 0600), replacing a
// fixture of the same id.
func (r *References) Add(f *Fixture) error {
	if !fixtureIDRe.MatchString(f.ID) {
		return fmt.Errorf("audit: fixture id %q: use 1 to 64 lower-case letters, digits, '.', '_' or '-'", f.ID)
	}
	if err := f.Verify(r.Trusted...); err != nil {
		return fmt.Errorf("audit: fixture %s: %w", f.ID, err)
	}
	if err := WriteFixture(filepath.Join(r.Dir, f.ID+".json"), f); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byID == nil {
		r.byID = map[string]*Fixture{}
	}
	r.byID[f.ID] = f
	return nil
}

// ReadFixture reads a fixture file.
func ReadFixture(path string) (*Fixture, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	var f Fixture
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("audit: %s is not a fixture: %w", filepath.Base(path), err)
	}
	return &f, nil
}

// WriteFixture writes f to path atomically (mode 0600, the directory made
// 0700 when missing).
func WriteFixture(path string, f *Fixture) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	b, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		return fmt.Errorf("audit: encoding fixture %s: %w", f.ID, err)
	}
	if err := atomicfile.Write(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("audit: writing fixture %s: %w", f.ID, err)
	}
	return nil
}

// Recording says how to record a fixture.
type Recording struct {
	ID      string
	Aliases []string
	Model   string
	Engine  string
	// Weights identifies the weights ("" when unknown).
	Weights string
	Suite   *Suite
	// Runs is the number of runs of the goldens and canaries (the first is
	// the reference, the rest measure the noise); at least 2.
	Runs int
	// Batched, when set, runs a repeat's probes two at a time (another
	// batch composition on an engine with parallel sequences).
	Batched bool
	Now     func() time.Time
}

// Record runs the suite on ep (the claimed weights on the reference
// stack) and returns the signed fixture.
func Record(ctx context.Context, ep Endpoint, rec Recording, key *attest.Key) (*Fixture, error) {
	if rec.Suite == nil {
		rec.Suite = DefaultSuite()
	}
	if rec.Runs < 2 {
		rec.Runs = 3
	}
	now := time.Now
	if rec.Now != nil {
		now = rec.Now
	}
	start := time.Now()
	f := &Fixture{ID: rec.ID, Aliases: rec.Aliases, Model: rec.Model, Engine: rec.Engine, Weights: rec.Weights,
		Suite: rec.Suite.ID, SuiteSHA256: rec.Suite.SHA256(), RecordedAt: now().UTC().Format(time.RFC3339)}
	if f.Aliases == nil {
		f.Aliases = []string{}
	}
	first := runProbes(ctx, ep, rec.Suite.Probes, 1, false)
	errs := 0
	for i, p := range rec.Suite.Probes {
		a := first[i]
		fp := FixtureProbe{ID: p.ID, Kind: p.Kind}
		if a.err != nil {
			fp.Error = a.err.Error()
			errs++
		} else {
			fp.Text, fp.Tokens, fp.ToolCalls = a.rep.Text, a.rep.Tokens, a.rep.ToolCalls
			fp.CompletionTokens, fp.Finish = a.rep.CompletionTokens, a.rep.Finish
		}
		f.Probes = append(f.Probes, fp)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if errs > 0 {
		return nil, fmt.Errorf("audit: recording %s: %d of %d probes failed (first: %s)", rec.ID, errs, len(rec.Suite.Probes), firstError(first))
	}
	f.Quality = scoreQuality(rec.Suite, f.answers())
	ident := rec.Suite.Of(KindGolden, KindCanary)
	n := Noise{Runs: rec.Runs}
	var lpMax float64
	exactMin, firstMin, withLP := 1.0, 1.0, false
	for r := 1; r < rec.Runs; r++ {
		batched := rec.Batched && r == 1
		cfg := fmt.Sprintf("seed %d", r+1)
		if batched {
			cfg += ", two probes batched at once"
		}
		n.Configs = append(n.Configs, cfg)
		again := runProbes(ctx, ep, ident, int64(r+1), batched)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := compareIdentity(f, ident, again)
		if c.errors > 0 {
			return nil, fmt.Errorf("audit: recording %s: a repeat run failed (%s)", rec.ID, firstError(again))
		}
		exactMin, firstMin = min(exactMin, c.exact), min(firstMin, c.first)
		if c.lpN > 0 {
			withLP = true
			lpMax = max(lpMax, c.lp)
		}
	}
	n.Exact, n.First = fig(exactMin), fig(firstMin)
	if withLP {
		n.LogprobDelta = fig(lpMax)
	}
	f.Noise = n
	f.RecordSeconds = fmt.Sprintf("%.1f", time.Since(start).Seconds())
	if err := f.Sign(key); err != nil {
		return nil, err
	}
	return f, nil
}

// answers are the fixture's answers as replies, by probe id.
func (f *Fixture) answers() map[string]answer {
	out := map[string]answer{}
	for _, p := range f.Probes {
		out[p.ID] = answer{rep: Reply{Text: p.Text, Tokens: p.Tokens, ToolCalls: p.ToolCalls}}
	}
	return out
}

// answer is one probe's reply or error.
type answer struct {
	rep Reply
	err error
}

// runProbes sends each probe (seed, logprobs for goldens and canaries,
// streamed) and returns the answers in order; batched sends two at once.
func runProbes(ctx context.Context, ep Endpoint, probes []Probe, seed int64, batched bool) []answer {
	out := make([]answer, len(probes))
	one := func(i int) {
		p := probes[i]
		c := Call{Probe: p, Seed: seed, Stream: p.Kind != KindTool}
		if p.Kind == KindGolden || p.Kind == KindCanary {
			c.TopLogprobs = topN
		}
		rep, err := ep.Chat(ctx, c)
		out[i] = answer{rep: rep, err: err}
	}
	if !batched {
		for i := range probes {
			if ctx.Err() != nil {
				out[i] = answer{err: ctx.Err()}
				continue
			}
			one(i)
		}
		return out
	}
	for i := 0; i < len(probes); i += 2 {
		var wg sync.WaitGroup
		for j := i; j < min(i+2, len(probes)); j++ {
			wg.Go(func() { one(j) })
		}
		wg.Wait()
	}
	return out
}

// topN is the alternatives asked per position.
const topN = 5

func firstError(as []answer) string {
	for _, a := range as {
		if a.err != nil {
			return a.err.Error()
		}
	}
	return ""
}

// Unlimited is the budget of a recording the box makes for itself (no
// caller pays): every reservation granted.
type Unlimited struct{}

// Reserve grants want.
func (Unlimited) Reserve(_ context.Context, want int64) (int64, func(int64), error) {
	return want, func(int64) {}, nil
}

// TokensLeft is unbounded.
func (Unlimited) TokensLeft(context.Context) (int64, error) { return 1 << 40, nil }

// KeyID is nil.
func (Unlimited) KeyID() *string { return nil }

// Daily is false.
func (Unlimited) Daily() bool { return false }

// RecordModel records a fixture of the model m. Its calls are the box's
// own, made for no caller: their receipts are signed (llmcall signs every
// call) but not kept in the receipt book, and no caller's budget is spent.
func RecordModel(ctx context.Context, m *llmcall.Model, rec Recording, key *attest.Key) (*Fixture, error) {
	own := *m
	own.Receipts = SignOnly{Key: key}
	own.Meter = nil
	return Record(ctx, &Local{Model: &own, Budget: Unlimited{}}, rec, key)
}

// SignOnly signs model-call receipts without keeping them
// (llmcall.Receipts).
type SignOnly struct{ Key *attest.Key }

// Issue signs mc.
func (s SignOnly) Issue(_ context.Context, mc attest.ModelCall, _ string) (attest.SignedModelCall, error) {
	return attest.IssueModelCall(s.Key, mc)
}
