// Package migration is the migration check (contract document 3, vertical
// migration-check): it replays an office's logged prompts on the box's
// open models, scores each candidate's answers against what the current
// (closed) model answered — in code for exact, label and json tasks,
// through a pinned judge asked in both orders for freetext — and states a
// pass rate with its 95% Wilson interval (Clopper–Pearson beside it),
// failure clusters, latency, cost per 1,000 requests and a go, no-go or
// inconclusive verdict, all in a signed service.record.v1 chain whose
// every number a verifier recomputes from the per-example entries
// (verify.go). No closed-model API is ever called: the incumbent is only
// its logged outputs.
package migration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"boxd/engine/attest"
	"boxd/internal/problem"
	"boxd/pipelines/llmcall"
	"boxd/pipelines/migration/scoring"
)

// Kind is the record kind of a migration check.
const Kind = "migration-check"

// Limits (contract section 8).
const (
	MinExamples       = 10
	MaxExamples       = 200
	MaxDemoExamples   = 40
	MaxInputChars     = 16000
	MaxOutputChars    = 16000
	MaxIDChars        = 100
	MaxTemplateChars  = 16000
	MaxTitleChars     = 200
	MaxCandidates     = 8
	MaxOutputTokenCap = 2048
	// DefaultPassRate is thresholds.pass_rate when the body gives none.
	DefaultPassRate = 0.9
)

// Candidate is an open model the check can replay prompts on: the box's
// chat model, or one the operator registers (migration.candidates).
type Candidate struct {
	ID    string
	Model *llmcall.Model
	// File is the model file's name (identity).
	File string
	// Note says where the candidate comes from.
	Note string
}

// Service runs migration checks.
type Service struct {
	Key *attest.Key
	// Candidates are the models a check may run, the chat model first
	// (the default when a body names none).
	Candidates []Candidate
	// Judge is the pinned freetext judge (nil: freetext tasks are refused
	// with 503).
	Judge *llmcall.Model
	// Prices is the dated incumbent price table.
	Prices PriceTable
	// HourDollars is what an hour of this box's model time costs (energy
	// and amortisation; migration.hour_cost): a candidate's cost per 1,000
	// requests is its mean call time at this rate. 0: not set, cost "".
	HourDollars float64
	// Workers is how many examples are in flight at once (0: 4).
	Workers int
	Now     func() time.Time
	Log     *slog.Logger

	mu      sync.Mutex
	running map[string]bool // keys with a check running
}

// lockKey holds a developer key to one check at a time (contract section
// 8; a demo token's lock is admission's).
func (s *Service) lockKey(key string) (func(), error) {
	if key == "" {
		return func() {}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running[key] {
		return nil, problem.New(problem.Conflict, "this key already has a migration check running; wait for it to finish (one check at a time per token)")
	}
	if s.running == nil {
		s.running = map[string]bool{}
	}
	s.running[key] = true
	return func() {
		s.mu.Lock()
		delete(s.running, key)
		s.mu.Unlock()
	}, nil
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Request is POST /migration/runs' body.
type Request struct {
	Title           string       `json:"title"`
	Task            scoring.Task `json:"task"`
	Prompt          Prompt       `json:"prompt"`
	Examples        []Example    `json:"examples"`
	Incumbent       Incumbent    `json:"incumbent"`
	Thresholds      *Thresholds  `json:"thresholds"`
	MaxOutputTokens int          `json:"max_output_tokens"`
	Candidates      []string     `json:"candidates"`
	Stream          bool         `json:"stream"`
	// Seed of the bootstrap (0: DefaultSeed).
	Seed uint64 `json:"seed"`

	demo bool   // a demo session's check (ValidateFor)
	key  string // the paying developer key's id ("": a demo session)
}

// Streaming reports the body's stream flag.
func (r Request) Streaming() bool { return r.Stream }

// Prompt is how an example's input becomes the model's messages.
type Prompt struct {
	System   string `json:"system"`
	Template string `json:"template"`
}

// Example is one logged request and what the current model answered.
type Example struct {
	ID               string          `json:"id"`
	Input            json.RawMessage `json:"input"`
	Output           string          `json:"output"`
	Label            *string         `json:"label"`
	LatencyMS        *float64        `json:"latency_ms"`
	PromptTokens     *int            `json:"prompt_tokens"`
	CompletionTokens *int            `json:"completion_tokens"`

	fields   map[string]string // Input read: "input" for a string, else the named fields
	noOutput bool              // the body had no output (an empty string is an answer; no field is a mistake)
}

// UnmarshalJSON reads an example strictly (an unknown field is an
// error), noting whether output was given.
func (e *Example) UnmarshalJSON(b []byte) error {
	type plain Example
	var x struct {
		plain
		Output *string `json:"output"`
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&x); err != nil {
		return err
	}
	*e = Example(x.plain)
	e.noOutput = x.Output == nil
	if x.Output != nil {
		e.Output = *x.Output
	}
	return nil
}

// DemoWorkers is how many examples a demo session's check has in flight
// at once (a key's: Service.Workers), leaving the chat model's other
// sequences to other callers.
const DemoWorkers = 2

// Incumbent is the current model: a name in the price table, or a price.
type Incumbent struct {
	Model string `json:"model"`
	Price *Price `json:"price"`
}

// Price is dollars per million tokens.
type Price struct {
	InputPerM  float64 `json:"input_per_m"`
	OutputPerM float64 `json:"output_per_m"`
}

// Thresholds are what a candidate must reach.
type Thresholds struct {
	PassRate    *float64 `json:"pass_rate"`
	SchemaValid *float64 `json:"schema_valid"`
}

var placeholder = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)

// Validate checks the body against the contract's rules, saying what to
// fix; it does not depend on the caller (ValidateFor adds the demo limit).
func (s *Service) Validate(r *Request) error {
	bad := func(format string, a ...any) error { return problem.New(problem.Invalid, format, a...) }
	if utf8.RuneCountInString(r.Title) > MaxTitleChars {
		return bad("title: at most %d characters", MaxTitleChars)
	}
	if err := r.Task.Validate(); err != nil {
		return err
	}
	n := len(r.Examples)
	switch {
	case n > MaxExamples:
		return problem.New(problem.TooLarge, "examples: %d given, at most %d per run", n, MaxExamples)
	case n < MinExamples:
		return bad("examples: %d given, a run needs at least %d (and at most %d)", n, MinExamples, MaxExamples)
	}
	if len(r.Prompt.Template) > MaxTemplateChars || len(r.Prompt.System) > MaxTemplateChars {
		return problem.New(problem.TooLarge, "prompt.system and prompt.template: at most %d characters each", MaxTemplateChars)
	}
	names := placeholderNames(r.Prompt.Template)
	if len(names) == 0 {
		return bad("prompt.template needs a placeholder: {{input}} for string inputs, or {{name}} for each named field of object inputs")
	}
	seen := map[string]bool{}
	for i := range r.Examples {
		e := &r.Examples[i]
		if e.ID == "" || len(e.ID) > MaxIDChars {
			return bad("examples[%d].id: 1 to %d characters", i, MaxIDChars)
		}
		if seen[e.ID] {
			return bad("examples[%d].id %q appears twice; ids must be unique", i, e.ID)
		}
		seen[e.ID] = true
		if e.noOutput {
			return bad("examples[%d].output is required: what the current model answered (an empty string if it answered nothing)", i)
		}
		f, err := readInput(e.Input)
		if err != nil {
			return bad("examples[%d].input: %v", i, err)
		}
		total := 0
		for _, v := range f {
			total += len(v)
		}
		if total > MaxInputChars || len(e.Output) > MaxOutputChars {
			return problem.New(problem.TooLarge, "examples[%d]: input and output at most %d characters each", i, MaxInputChars)
		}
		for _, name := range names {
			if _, ok := f[name]; !ok {
				if _, str := f["input"]; str && len(f) == 1 {
					return bad("examples[%d].input is a string, which fills {{input}}; the template uses {{%s}}: give inputs as objects of named fields", i, name)
				}
				return bad("examples[%d].input has no field %q, which the template uses", i, name)
			}
		}
		e.fields = f
		if e.LatencyMS != nil && (*e.LatencyMS < 0 || *e.LatencyMS > 3.6e6) {
			return bad("examples[%d].latency_ms: 0 to 3,600,000", i)
		}
		if (e.PromptTokens != nil && (*e.PromptTokens < 0 || *e.PromptTokens > 10_000_000)) || (e.CompletionTokens != nil && (*e.CompletionTokens < 0 || *e.CompletionTokens > 10_000_000)) {
			return bad("examples[%d]: prompt_tokens and completion_tokens are 0 to 10,000,000", i)
		}
		if e.Label != nil && r.Task.Type != scoring.TaskLabel {
			return bad("examples[%d].label belongs to a label task", i)
		}
		if e.Label != nil && scoring.Extract(*e.Label, r.Task.Labels, scoring.ExtractWhole) < 0 {
			return bad("examples[%d].label %q is not one of task.labels", i, *e.Label)
		}
	}
	if err := s.checkIncumbent(&r.Incumbent); err != nil {
		return err
	}
	if t := r.Thresholds; t != nil {
		if t.PassRate != nil && (*t.PassRate <= 0 || *t.PassRate > 1) {
			return bad("thresholds.pass_rate: a share above 0 and at most 1, like 0.9")
		}
		if t.SchemaValid != nil {
			if r.Task.Type != scoring.TaskJSON {
				return bad("thresholds.schema_valid belongs to a json task")
			}
			if *t.SchemaValid <= 0 || *t.SchemaValid > 1 {
				return bad("thresholds.schema_valid: a share above 0 and at most 1")
			}
		}
	}
	if r.MaxOutputTokens < 0 || r.MaxOutputTokens > MaxOutputTokenCap {
		return bad("max_output_tokens: 1 to %d (0 or absent: sized from the logged outputs)", MaxOutputTokenCap)
	}
	if len(r.Candidates) > MaxCandidates {
		return bad("candidates: at most %d", MaxCandidates)
	}
	for i, id := range r.Candidates {
		c := s.candidate(id)
		switch {
		case c == nil:
			return problem.New(problem.NotFound, "candidates[%d]: no candidate %q on this box (GET /migration/info lists them: %s)", i, id, strings.Join(s.candidateIDs(), ", "))
		case slices.Index(r.Candidates, id) != i:
			return bad("candidates[%d]: %q is named twice", i, id)
		}
	}
	if len(r.Candidates) == 0 && len(s.Candidates) > 0 {
		r.Candidates = []string{s.Candidates[0].ID}
	}
	return nil
}

// ready checks, when the run starts, that every model it needs is loaded
// (503 otherwise; admission's earlier answers — 409, 402 — come first).
func (s *Service) ready(r *Request) error {
	if len(r.Candidates) == 0 {
		return problem.New(problem.Unavailable, "no candidate model is loaded: set models.llm.path, or register migration.candidates")
	}
	for _, id := range r.Candidates {
		if c := s.candidate(id); c == nil || !c.Model.Ready() {
			return problem.New(problem.Unavailable, "candidate %q has no model loaded: set models.llm.path (the chat model), or register it in migration.candidates", id)
		}
	}
	if r.Task.Type == scoring.TaskFreetext && !s.Judge.Ready() {
		return problem.New(problem.Unavailable, "freetext tasks need the pinned judge, and this box has no chat model loaded (models.llm.path)")
	}
	return nil
}

// ValidateFor holds a demo session to MaxDemoExamples; keyID is the
// developer key's id, "" for a demo session.
func ValidateFor(keyID string, r *Request) error {
	isKey := keyID != ""
	r.demo, r.key = !isKey, keyID
	if !isKey && len(r.Examples) > MaxDemoExamples {
		return problem.New(problem.TooLarge, "examples: %d given; a demo session runs at most %d (a developer key up to %d)", len(r.Examples), MaxDemoExamples, MaxExamples)
	}
	return nil
}

func (s *Service) checkIncumbent(in *Incumbent) error {
	switch {
	case in.Price != nil: // a price wins; model, if given, only names it
		p := in.Price
		if p.InputPerM < 0 || p.OutputPerM < 0 || p.InputPerM > 10000 || p.OutputPerM > 10000 {
			return problem.New(problem.Invalid, "incumbent.price: input_per_m and output_per_m are dollars per million tokens, 0 to 10,000")
		}
	case in.Model != "":
		if s.Prices.Find(in.Model) == nil {
			return problem.New(problem.Invalid, "incumbent.model %q is not in the price table of %s (GET /migration/info lists its models); give incumbent.price {input_per_m, output_per_m} instead", in.Model, s.Prices.Date)
		}
	default:
		return problem.New(problem.Invalid, "incumbent is required: {\"model\": a name from GET /migration/info's price table} or {\"price\": {\"input_per_m\": dollars, \"output_per_m\": dollars}}")
	}
	return nil
}

func (s *Service) candidate(id string) *Candidate {
	for i := range s.Candidates {
		if s.Candidates[i].ID == id {
			return &s.Candidates[i]
		}
	}
	return nil
}

func (s *Service) candidateIDs() []string {
	out := make([]string, len(s.Candidates))
	for i, c := range s.Candidates {
		out[i] = c.ID
	}
	return out
}

func placeholderNames(tmpl string) []string {
	var out []string
	for _, m := range placeholder.FindAllStringSubmatch(tmpl, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// readInput reads an example's input: a string fills {{input}}; an
// object's fields (strings, numbers or booleans) fill {{name}}.
func readInput(raw json.RawMessage) (map[string]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, fmt.Errorf("required: a string, or an object of named fields")
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return map[string]string{"input": s}, nil
	}
	if raw[0] != '{' {
		return nil, fmt.Errorf("a string, or an object of named fields")
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		switch x := v.(type) {
		case string:
			out[k] = x
		case json.Number:
			out[k] = x.String()
		case bool:
			out[k] = fmt.Sprint(x)
		default:
			return nil, fmt.Errorf("field %q: a string, number or boolean", k)
		}
	}
	return out, nil
}

// Render fills the template with an example's input.
func Render(tmpl string, fields map[string]string) string {
	return placeholder.ReplaceAllStringFunc(tmpl, func(m string) string {
		return fields[placeholder.FindStringSubmatch(m)[1]]
	})
}
