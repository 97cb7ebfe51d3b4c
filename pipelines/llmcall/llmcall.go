// Package llmcall is the one way boxd calls its chat model: typed text and
// JSON-schema calls over a Model (the engine plus what a receipt names).
//
// Each call reserves the caller's generated-token budget (run.Budget) and
// commits it exactly once with the tokens actually generated, runs at its
// GPU priority, and signs and stores exactly one receipt, emitting one
// receipt event when given an event sink. That holds for a call that fails
// after it generated (model error, cancellation, a stream callback's
// error): its receipt says finish_reason "error" or "cancelled" and hashes
// what was generated, and it comes back in the Result returned beside the
// error. A call refused before generating (budget, busy, prompt too long)
// issues no receipt.
//
// Errors are *problem.Error (budget refusals pass through as the budget
// returned them), except the caller's own: its context's error and its
// stream callback's error come back as they are.
//
// Wire formats live with their route: pipelines/chat adapts the OpenAI
// format to these calls.
package llmcall

import (
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"boxd/engine/attest"
	"boxd/engine/llm"
	"boxd/engine/models"
	"boxd/gpu"
	"boxd/internal/ids"
	"boxd/internal/problem"
	"boxd/internal/run"
)

// DefaultMaxTokens bounds a call that sets no MaxTokens.
const DefaultMaxTokens = 2048

// busyRetry is the Retry-After of a busy refusal.
const busyRetry = 2 * time.Second

// Engine is what a call needs of the model runtime (*llm.Engine is one).
type Engine interface {
	Template() models.Template
	Tokenize(text string, addSpecial, parseSpecial bool) ([]int32, error)
	Generate(ctx context.Context, r llm.Request) (*llm.Job, error)
	ContextPerRequest() int
}

// Seer is an engine that reads pictures (*llm.Engine opened with a vision
// projector).
type Seer interface {
	Vision() bool
	TokenizeImages(ctx context.Context, text string, pics []llm.Picture, addSpecial, parseSpecial bool) ([]int32, []llm.ImageEmbedding, error)
}

// Sees reports whether the loaded model reads images.
func (m *Model) Sees() bool {
	if !m.Ready() {
		return false
	}
	s, ok := m.Engine.(Seer)
	return ok && s.Vision()
}

// Receipts signs and stores model-call receipts.
type Receipts interface {
	Issue(ctx context.Context, mc attest.ModelCall, upstream string) (attest.SignedModelCall, error)
}

// Events receives a call's receipt event; run.Emitter is one.
type Events interface {
	Emit(typ string, body any)
}

// EmitFunc is a function as Events.
type EmitFunc func(typ string, body any)

// Emit calls f.
func (f EmitFunc) Emit(typ string, body any) { f(typ, body) }

// Meter counts model calls for /metrics (web's Prometheus counters are
// one); nil counts nothing.
type Meter interface {
	// Running moves the number of calls generating by delta.
	Running(delta int)
	// Call counts a finished call: its prompt and generated tokens, the
	// time to its first token (queue wait and prompt processing) and the
	// time from the first token to the last.
	Call(finish string, promptTokens, generatedTokens int, firstToken, generating time.Duration)
}

// Model is the chat model and what its receipts name.
type Model struct {
	Meter   Meter  // nil: calls are not counted
	Engine  Engine // nil when no chat model is loaded
	ModelID string
	// Aliases are other names clients may send as model for the same
	// model (the file's own name, models.llm.aliases): an app made for
	// ollama or llama-server needs only a new base URL.
	Aliases     []string
	WeightsRoot string
	Upstream    string // the model file's name (receipt upstream_model)
	Provider    string // this box's signing key id
	Receipts    Receipts
	Now         func() time.Time
}

// Serves reports whether name is the served model's id or one of its
// aliases.
func (m *Model) Serves(name string) bool {
	return name != "" && (name == m.ModelID || slices.Contains(m.Aliases, name))
}

// Ready reports whether a model is loaded.
func (m *Model) Ready() bool { return m != nil && m.Engine != nil }

// ChatError says why the loaded model cannot serve chat: its template
// family cannot be rendered (a base model without a chat template, and
// models.llm.template left at auto). nil when it can, or when no model is
// loaded.
func (m *Model) ChatError() error {
	if !m.Ready() {
		return nil
	}
	if _, err := models.RenderParts(m.Engine.Template(), []models.Message{{Role: "user", Content: "x"}}); err != nil {
		return fmt.Errorf("the chat model cannot serve chat: %w", err)
	}
	return nil
}

// Message is one message of a conversation: a role (system, user,
// assistant or tool) and its text.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// Images are pictures the message shows, each where an llm.ImageMarker
	// stands in Content, in order (the model must see images: Sees). A
	// call's receipt names them by hash (params image_sha256).
	Images []llm.Picture `json:"-"`
}

// Request is one model call.
type Request struct {
	// ID is the completion id and receipt id ("": NewID()).
	ID string
	// Messages are rendered with the model's chat template; or Prompt is
	// the prompt already rendered and tokenized (see Render).
	Messages []Message
	Prompt   []int32
	// Images are a Prompt's pictures, placed among its tokens (from
	// RenderImages); Messages carry theirs in Message.Images.
	Images []llm.ImageEmbedding
	// RequestHash is the receipt's request hash ("": for a Prompt call
	// the hash of the tokens and params, for a Messages call that of the
	// messages and params, the pictures' hashes among the params).
	RequestHash string
	// Sampling is the sampler (the zero value is greedy; see Temperature).
	Sampling llm.Sampling
	Stop     []string
	// MaxTokens bounds the answer and is what the call reserves of the
	// budget (0: DefaultMaxTokens).
	MaxTokens int
	// Grammar constrains the answer (GBNF); JSON sets it from the schema.
	Grammar string
	// TopLogprobs, 1 to llm.MaxTopLogprobs, asks for each generated
	// token's log probability and that many likeliest tokens
	// (Result.Logprobs; receipt param top_logprobs); 0: none.
	TopLogprobs int
	// Priority on the GPU arbiter; the zero value (gpu.Background) runs at
	// gpu.Interactive: model calls are never background work.
	Priority gpu.Priority
	// Params are receipt params beside the sampling ones, max_tokens and
	// finish_reason (which they override, but for the last two).
	Params map[string]string
	// Events, when set, receives the call's one receipt event; when it
	// keeps a run's progress (run.ProgressOf: run.Emitter), the tokens
	// generated are counted there as they come.
	Events Events
	// Stream, when set, receives the answer's text as it is generated; an
	// error from it stops the generation and is returned.
	Stream func(piece string) error
	// Answer, when set, turns a finished generation's text and finish
	// reason into the output the receipt hashes and the finish reason it
	// and the Result report (chat's tool calls).
	Answer func(text, finish string) (output, finishReason string)
}

// Usage counts a call's tokens.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Receipt is a call's signed receipt as answers show it: the completion id,
// the model, the hex Ed25519 signature (the box's key takes the gateway's
// place), the provider (this box's key id) and the status.
type Receipt struct {
	ID         string `json:"id"`
	Model      string `json:"model"`
	GatewaySig string `json:"gateway_sig"`
	Provider   string `json:"provider"`
	Status     string `json:"status"`
	// Signed is the signed receipt itself (a record that carries it can
	// be checked offline with attest.CheckModelCall).
	Signed attest.SignedModelCall `json:"-"`
}

// Result is what a call generated. It comes with an error too when the
// call failed after generating: then FinishReason is "error" or
// "cancelled" and Receipt is that of the failed call (nil if signing it
// failed).
type Result struct {
	ID           string
	Created      int64 // Unix seconds
	Text         string
	FinishReason string
	Usage        Usage
	Receipt      *Receipt
	// Logprobs are the engine's (llm.Result.Logprobs) when the call asked
	// for them: the tokens of Text, before Answer.
	Logprobs []llm.TokenLogprob
}

// ErrCut is (wrapped in a problem.Upstream error) a JSON answer cut off at
// MaxTokens: finish_reason "length".
var ErrCut = errors.New("llmcall: the answer was cut at max tokens")

// NewID makes a completion id.
func NewID() string { return ids.New("chatcmpl-", 12) }

// Temperature is llama.cpp's default sampling (top_k 40, top_p 0.95,
// min_p 0.05) at temperature t; 0.8 is its default temperature.
func Temperature(t float32) llm.Sampling {
	return llm.Sampling{Temperature: t, TopK: 40, TopP: 0.95, MinP: 0.05}
}

// SamplingParams writes a call's sampling and stop strings as receipt
// params (numbers as strings, penalties only when set).
func SamplingParams(s llm.Sampling, stop []string) map[string]string {
	p := map[string]string{
		"temperature": ftoa(s.Temperature), "top_p": ftoa(s.TopP),
		"top_k": strconv.Itoa(s.TopK), "min_p": ftoa(s.MinP),
	}
	if s.RepeatPenalty != 0 {
		p["repeat_penalty"] = ftoa(s.RepeatPenalty)
	}
	if s.FrequencyPenalty != 0 || s.PresencePenalty != 0 {
		p["frequency_penalty"] = ftoa(s.FrequencyPenalty)
		p["presence_penalty"] = ftoa(s.PresencePenalty)
	}
	if s.Seed != nil {
		p["seed"] = strconv.FormatUint(uint64(*s.Seed), 10)
	}
	if len(stop) > 0 {
		p["stop"] = strconv.Itoa(len(stop))
	}
	return p
}

func ftoa(f float32) string { return strconv.FormatFloat(float64(f), 'g', -1, 32) }

// noModel is the refusal of a call when no chat model is loaded.
func noModel() error {
	return problem.New(problem.Upstream, "no chat model is loaded on this box; the operator sets models.llm.path")
}

// Render renders msgs with the model's chat template and tokenizes them,
// refusing a prompt that leaves no room for an answer in the context.
//
// Only the template's own markers become control tokens: the messages'
// text is tokenized with special-token parsing off, so a "<|im_start|>"
// written in a message (a chat turn, a review being answered, a
// transcript) is plain text and cannot open a turn (see tokenizeParts).
func (m *Model) Render(msgs []Message) ([]int32, error) {
	for _, msg := range msgs {
		if len(msg.Images) > 0 {
			return nil, problem.New(problem.Internal, "llmcall: messages with images render through RenderImages")
		}
	}
	toks, _, err := m.RenderImages(context.Background(), msgs)
	return toks, err
}

// RenderImages is Render for messages that show pictures: each picture is
// encoded by the model's vision projector where its llm.ImageMarker
// stands, wrapped in the projector's own begin and end tokens; the text
// around it is tokenized as Render tokenizes text. The markers must be
// exactly the pictures, message by message.
func (m *Model) RenderImages(ctx context.Context, msgs []Message) ([]int32, []llm.ImageEmbedding, error) {
	if !m.Ready() {
		return nil, nil, noModel()
	}
	mm := make([]models.Message, len(msgs))
	var pics []llm.Picture
	for i, msg := range msgs {
		mm[i] = models.Message{Role: msg.Role, Content: msg.Content}
		if len(msg.Images) > 0 {
			if n := strings.Count(msg.Content, llm.ImageMarker); n != len(msg.Images) || llm.HasMarker(strings.ReplaceAll(msg.Content, llm.ImageMarker, "")) {
				return nil, nil, problem.New(problem.Invalid, "message %d holds %d image markers for %d images", i, n, len(msg.Images))
			}
		}
		pics = append(pics, msg.Images...)
	}
	var image func(k int) ([]int32, llm.ImageEmbedding, error)
	if len(pics) > 0 {
		seer, ok := m.Engine.(Seer)
		if !ok || !seer.Vision() {
			return nil, nil, problem.New(problem.Invalid, "this box's chat model does not read images (the operator sets models.llm.projector to its mmproj file); send text only")
		}
		image = func(k int) ([]int32, llm.ImageEmbedding, error) {
			if k >= len(pics) {
				return nil, llm.ImageEmbedding{}, fmt.Errorf("more image markers than the %d images", len(pics))
			}
			toks, ims, err := seer.TokenizeImages(ctx, llm.ImageMarker, pics[k:k+1], false, true)
			if err != nil {
				return nil, llm.ImageEmbedding{}, err
			}
			return toks, ims[0], nil
		}
	}
	tmpl := m.Engine.Template()
	parts, err := models.RenderParts(tmpl, mm)
	if err != nil {
		return nil, nil, problem.Wrap(problem.Upstream, err, "the chat model cannot serve chat: %v", err)
	}
	toks, ims, err := tokenizeParts(m.Engine, tmpl, parts, image)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, problem.Wrap(problem.Upstream, err, "tokenizing the prompt failed: %v", err)
	}
	if len(ims) != len(pics) {
		return nil, nil, problem.New(problem.Invalid, "the rendered prompt placed %d of %d images", len(ims), len(pics))
	}
	n := len(toks)
	for _, im := range ims {
		n += im.Tokens
	}
	if ctxLen := m.Engine.ContextPerRequest(); n >= ctxLen {
		return nil, nil, problem.New(problem.TooLarge, "the prompt is %d tokens (%d of them images); this model's context holds %d tokens for prompt and answer together", n, n-len(toks), ctxLen)
	}
	return toks, ims, nil
}

// PictureHash is a picture's receipt name: llm.Picture.Sum in hex.
func PictureHash(p llm.Picture) string {
	sum := p.Sum()
	return hex.EncodeToString(sum[:])
}

// tokenizeParts tokenizes a rendered prompt: each of the template's control
// parts that is one token of the vocabulary as that token, the text between
// them with special-token parsing off. For text without markers this is
// the tokenization of the whole prompt with special-token parsing on
// (llama.cpp splits there at control tokens too); a control part the
// vocabulary lacks is text like the rest. The model's BOS (and EOS) are
// added as tokenizing the whole prompt would.
//
// llama.cpp still matches user-defined tokens with parsing off, and some
// vocabularies mark turn markers so (Gemma's <start_of_turn>): text whose
// tokens hold one of the family's control tokens is tokenized again in
// pieces cut inside each such marker, so it becomes plain text there too.
//
// With image set, each llm.ImageMarker in the text is a picture: image(k)
// gives the k-th picture's tokens (the projector's begin and end tokens)
// and its embeddings, placed among them.
func tokenizeParts(e Engine, t models.Template, parts []models.Part, image func(k int) ([]int32, llm.ImageEmbedding, error)) ([]int32, []llm.ImageEmbedding, error) {
	ids := map[string]int32{} // control text -> its one token (-1: not one token)
	control := func(s string) (int32, error) {
		if id, ok := ids[s]; ok {
			return id, nil
		}
		toks, err := e.Tokenize(s, false, true)
		if err != nil {
			return 0, err
		}
		id := int32(-1)
		if len(toks) == 1 {
			id = toks[0]
		}
		ids[s] = id
		return id, nil
	}
	// The parts as segments: one control token, or text (id -1).
	type segment struct {
		text string
		id   int32
	}
	var segs []segment
	for _, p := range parts {
		id := int32(-1)
		if p.Control {
			var err error
			if id, err = control(p.Text); err != nil {
				return nil, nil, err
			}
		}
		if n := len(segs); id < 0 && n > 0 && segs[n-1].id < 0 {
			segs[n-1].text += p.Text
			continue
		}
		segs = append(segs, segment{text: p.Text, id: id})
	}
	// The family's control tokens, as text that must not become them.
	markers := map[int32]string{}
	for _, s := range append(models.ControlTokens(t), slices.Collect(maps.Keys(ids))...) {
		id, err := control(s)
		if err != nil {
			return nil, nil, err
		}
		if id >= 0 {
			markers[id] = s
		}
	}
	pre, post, err := specialEnds(e)
	if err != nil {
		return nil, nil, err
	}
	out := slices.Clone(pre)
	var ims []llm.ImageEmbedding
	for _, sg := range segs {
		if sg.id >= 0 {
			out = append(out, sg.id)
			continue
		}
		texts := []string{sg.text}
		if image != nil {
			texts = strings.Split(sg.text, llm.ImageMarker)
		}
		for i, text := range texts {
			if i > 0 {
				toks, im, err := image(len(ims))
				if err != nil {
					return nil, nil, err
				}
				im.At += len(out)
				out = append(out, toks...)
				ims = append(ims, im)
			}
			toks, err := plainText(e, text, markers)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, toks...)
		}
	}
	return append(out, post...), ims, nil
}

// plainText tokenizes text with special-token parsing off. When the tokens
// still hold one of markers (a user-defined token, which llama.cpp matches
// even so), the text is tokenized in pieces cut after the first byte of
// each marker's text in it, so no piece holds a whole marker.
func plainText(e Engine, text string, markers map[int32]string) ([]int32, error) {
	toks, err := e.Tokenize(text, false, false)
	if err != nil || !slices.ContainsFunc(toks, func(id int32) bool { _, ok := markers[id]; return ok }) {
		return toks, err
	}
	var cuts []int
	for _, mk := range markers {
		for i := 0; ; {
			j := strings.Index(text[i:], mk)
			if j < 0 {
				break
			}
			cuts = append(cuts, i+j+1)
			i += j + 1
		}
	}
	slices.Sort(cuts)
	cuts = append(slices.Compact(cuts), len(text))
	toks = toks[:0]
	from := 0
	for _, c := range cuts {
		piece, err := e.Tokenize(text[from:c], false, false)
		if err != nil {
			return nil, err
		}
		toks = append(toks, piece...)
		from = c
	}
	for _, id := range toks {
		if mk, ok := markers[id]; ok {
			return nil, fmt.Errorf("the model's vocabulary reads %q in a message as its control token", mk)
		}
	}
	return toks, nil
}

// specialEnds are the tokens the model adds around a prompt when
// tokenizing with special tokens: BOS before (where the model wants one),
// EOS after (where it adds one).
func specialEnds(e Engine) (pre, post []int32, err error) {
	with, err := e.Tokenize("a", true, false)
	if err != nil {
		return nil, nil, err
	}
	bare, err := e.Tokenize("a", false, false)
	if err != nil {
		return nil, nil, err
	}
	for k := 0; k+len(bare) <= len(with); k++ {
		if slices.Equal(with[k:k+len(bare)], bare) {
			return with[:k], with[k+len(bare):], nil
		}
	}
	return nil, nil, errors.New("the tokenizer's special tokens could not be told from the text")
}

// JSON runs a call whose answer follows schema (through a grammar) and
// returns the answer. An answer cut at MaxTokens is an error holding
// ErrCut; the Result (and its receipt) comes with it.
func (m *Model) JSON(ctx context.Context, b run.Budget, schema json.RawMessage, r Request) (json.RawMessage, *Result, error) {
	g, err := llm.SchemaGrammar(schema)
	if err != nil {
		return nil, nil, problem.Wrap(problem.Invalid, err, "the answer's JSON schema: %v", err)
	}
	r.Grammar = g
	params := map[string]string{"response_format": "json_schema", "schema_sha256": attest.HashText(string(schema))}
	maps.Copy(params, r.Params)
	r.Params = params
	res, err := m.Text(ctx, b, r)
	if err != nil {
		return nil, res, err
	}
	if res.FinishReason == string(llm.FinishLength) {
		return nil, res, problem.Wrap(problem.Upstream, ErrCut, "the answer was cut at %d tokens", res.Usage.CompletionTokens)
	}
	if !json.Valid([]byte(res.Text)) {
		return nil, res, problem.New(problem.Upstream, "the model's answer is not JSON")
	}
	return json.RawMessage(res.Text), res, nil
}

// Text runs a call and returns what it generated.
func (m *Model) Text(ctx context.Context, b run.Budget, r Request) (*Result, error) {
	if !m.Ready() {
		return nil, noModel()
	}
	if b == nil {
		return nil, problem.New(problem.Internal, "llmcall: a call needs a budget")
	}
	if r.ID == "" {
		r.ID = NewID()
	}
	if r.MaxTokens <= 0 {
		r.MaxTokens = DefaultMaxTokens
	}
	if r.Priority == gpu.Background {
		r.Priority = gpu.Interactive
	}
	params := SamplingParams(r.Sampling, r.Stop)
	if r.TopLogprobs > 0 {
		params["top_logprobs"] = strconv.Itoa(r.TopLogprobs)
	}
	maps.Copy(params, r.Params)
	prompt, images, reqHash := r.Prompt, r.Images, r.RequestHash
	var err error
	if prompt == nil {
		var hashes []string
		for _, msg := range r.Messages {
			for _, p := range msg.Images {
				hashes = append(hashes, PictureHash(p))
			}
		}
		if _, named := params["image_sha256"]; !named && len(hashes) > 0 {
			params["image_sha256"] = strings.Join(hashes, ",") // the caller may name them otherwise (chat: the files)
		}
		if prompt, images, err = m.RenderImages(ctx, r.Messages); err != nil {
			return nil, err
		}
		if reqHash == "" {
			reqHash, err = attest.HashJSON(map[string]any{"model": m.ModelID, "messages": r.Messages, "params": params})
		}
	} else if reqHash == "" {
		reqHash, err = attest.HashJSON(map[string]any{"model": m.ModelID, "prompt": prompt, "params": params})
	}
	if err != nil {
		return nil, problem.Wrap(problem.Internal, err, "hashing the request failed: %v", err)
	}

	granted, commit, err := b.Reserve(ctx, int64(r.MaxTokens))
	if err != nil {
		return nil, err
	}
	used, charged := int64(0), false
	charge := func() {
		if !charged {
			charged = true
			commit(used)
		}
	}
	defer charge()
	gctx, cancel := context.WithCancel(ctx)
	defer cancel() // a failed stream stops the generation
	began := time.Now()
	j, err := m.start(gctx, llm.Request{
		Prompt: prompt, Images: images, MaxTokens: int(granted), Sampling: r.Sampling, Stop: r.Stop,
		Grammar: r.Grammar, Priority: r.Priority, TopLogprobs: r.TopLogprobs,
	})
	if err != nil {
		return nil, refusal(ctx, err)
	}
	if m.Meter != nil {
		m.Meter.Running(1)
		defer m.Meter.Running(-1)
	}

	var stopErr error // the context's or the stream's error that ended it
	var first time.Time
	// The run's progress counts the tokens as they come: each piece of
	// text is at least one token, and the count is made exact when the
	// call ends.
	prog := run.ProgressOf(r.Events)
	counted := int64(0)
	for {
		piece, err := j.Next(gctx)
		if first.IsZero() && err == nil {
			first = time.Now()
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil { // only the caller's context ends Next early
			stopErr = cmp.Or(ctx.Err(), err)
			break
		}
		prog.AddTokens(1)
		counted++
		if r.Stream != nil {
			if err := r.Stream(piece); err != nil {
				stopErr = err
				cancel()
				break
			}
		}
	}
	res := j.Result()
	if stopErr != nil {
		res, _ = j.Wait(context.Background())
	}
	used = int64(res.CompletionTokens)
	if used != counted {
		prog.AddTokens(used - counted)
	}

	finish, output := string(res.Finish), res.Text
	switch {
	case stopErr != nil:
		finish = string(llm.FinishCancelled)
	case res.Err != nil && ctx.Err() != nil:
		finish, stopErr = string(llm.FinishCancelled), ctx.Err()
	case res.Err != nil:
		finish, stopErr = string(llm.FinishError), problem.Wrap(problem.Upstream, res.Err, "the model failed: %v", res.Err)
	case r.Answer != nil:
		output, finish = r.Answer(res.Text, finish)
	}
	if m.Meter != nil {
		var firstToken, generating time.Duration
		if !first.IsZero() {
			firstToken, generating = first.Sub(began), time.Since(first)
		}
		m.Meter.Call(finish, res.PromptTokens, res.CompletionTokens, firstToken, generating)
	}
	out := &Result{
		ID: r.ID, Created: m.now().Unix(), Text: res.Text, FinishReason: finish, Logprobs: res.Logprobs,
		Usage: Usage{PromptTokens: res.PromptTokens, CompletionTokens: res.CompletionTokens, TotalTokens: res.PromptTokens + res.CompletionTokens},
	}
	if stopErr != nil && res.CompletionTokens == 0 {
		return nil, stopErr // nothing generated, nothing charged: no receipt
	}
	// Charged before the receipt is stored and announced: a crash between
	// the two leaves a charge without a receipt, never a receipt without
	// its charge.
	charge()
	rc, serr := m.sign(ctx, b, &r, reqHash, params, output, out)
	out.Receipt = rc
	if stopErr != nil {
		return out, stopErr
	}
	if serr != nil {
		return out, problem.Wrap(problem.Upstream, serr, "signing the receipt failed: %v", serr)
	}
	return out, nil
}

// refusal is the error of a generation that never started.
func refusal(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, llm.ErrBusy):
		return problem.Wrap(problem.Busy, err, "the box is busy: every sequence is in use and the queue is full; retry shortly").Retry(busyRetry)
	case errors.Is(err, llm.ErrPromptTooLong):
		return problem.Wrap(problem.TooLarge, err, "%v", err)
	case errors.Is(err, llm.ErrGrammar):
		return problem.Wrap(problem.Invalid, err, "%v", err)
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return problem.Wrap(problem.Upstream, err, "the model failed: %v", err)
}

// sign issues the call's one receipt and emits its event. It signs even
// when the caller's context has ended: the call was charged.
func (m *Model) sign(ctx context.Context, b run.Budget, r *Request, reqHash string, params map[string]string, output string, out *Result) (*Receipt, error) {
	if m.Receipts == nil {
		return nil, errors.New("no receipt issuer")
	}
	p := make(map[string]string, len(params)+2)
	maps.Copy(p, params)
	p["max_tokens"] = strconv.Itoa(r.MaxTokens)
	p["finish_reason"] = out.FinishReason
	keyID := b.KeyID()
	signed, err := m.Receipts.Issue(context.WithoutCancel(ctx), attest.ModelCall{
		ID: out.ID, Model: m.ModelID, WeightsRoot: m.WeightsRoot,
		RequestHash: reqHash, OutputHash: attest.HashText(output), Params: p,
		Usage: attest.NewUsage(out.Usage.PromptTokens, out.Usage.CompletionTokens), KeyID: keyID,
	}, m.Upstream)
	if err != nil {
		return nil, err
	}
	rc := &Receipt{ID: out.ID, Model: m.ModelID, GatewaySig: signed.Sig, Provider: m.Provider, Status: "attested", Signed: signed}
	if r.Events != nil {
		r.Events.Emit(run.TypeReceipt, run.ReceiptBody{ID: rc.ID, Model: rc.Model, GatewaySig: rc.GatewaySig, Provider: rc.Provider, Status: rc.Status, KeyID: keyID})
	}
	return rc, nil
}

func (m *Model) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// job is a running generation as a call reads it (*llm.Job).
type job interface {
	Next(ctx context.Context) (string, error)
	Wait(ctx context.Context) (llm.Result, error)
	Result() llm.Result
}

// starter is an engine that hands out jobs other than *llm.Job (tests).
type starter interface {
	start(ctx context.Context, r llm.Request) (job, error)
}

func (m *Model) start(ctx context.Context, r llm.Request) (job, error) {
	if s, ok := m.Engine.(starter); ok {
		return s.start(ctx, r)
	}
	j, err := m.Engine.Generate(ctx, r)
	if err != nil {
		return nil, err
	}
	return j, nil
}
