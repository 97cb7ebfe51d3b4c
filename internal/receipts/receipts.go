// Package receipts signs model-call receipts with the instance key, stores
// them bounded by receipts.retention_days and receipts.max, and reads them
// back with their checks recomputed. Pipelines issue receipts through a
// Book; web serves the read-back view (Record) as GET /receipts/{id}.
package receipts

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"boxd/configs"
	"boxd/engine/attest"
	"boxd/internal/store"
)

// ErrNotFound is returned by Book.Read for an unknown (or pruned) receipt.
var ErrNotFound = store.ErrNotFound

// Book signs model-call receipts with the instance key, stores them (bounded
// by receipts.retention_days and receipts.max) and reads them back with
// their checks recomputed. It is safe for concurrent use.
type Book struct {
	key   *attest.Key
	store *store.Store
	cfg   *configs.Config
	now   func() time.Time
}

// New makes a receipt book over st, signing with key. now may be nil
// (time.Now).
func New(key *attest.Key, st *store.Store, cfg *configs.Config, now func() time.Time) *Book {
	if now == nil {
		now = time.Now
	}
	return &Book{key: key, store: st, cfg: cfg, now: now}
}

// stored is what the store keeps for one receipt.
type stored struct {
	Receipt       attest.SignedModelCall `json:"receipt"`
	UpstreamModel string                 `json:"upstream_model"`
}

// Issue signs and stores a receipt. upstream names the model file that ran
// (its GGUF general.name), reported as upstream_model.
func (b *Book) Issue(ctx context.Context, mc attest.ModelCall, upstream string) (attest.SignedModelCall, error) {
	now := b.now()
	if mc.Created == "" {
		mc.Created = strconv.FormatInt(now.Unix(), 10)
	}
	signed, err := attest.IssueModelCall(b.key, mc)
	if err != nil {
		return attest.SignedModelCall{}, err
	}
	body, err := json.Marshal(stored{Receipt: signed, UpstreamModel: upstream})
	if err != nil {
		return attest.SignedModelCall{}, err
	}
	keepAfter := now.Add(-time.Duration(b.cfg.Receipts.RetentionDays) * 24 * time.Hour)
	if err := b.store.PutReceipt(ctx, signed.ID, now, body, keepAfter, b.cfg.Receipts.Max); err != nil {
		return attest.SignedModelCall{}, err
	}
	return signed, nil
}

// Record is GET /receipts/{id} (contract section 2). On a box the runtime is
// first-party: provider.pubkey and provider.sig are null, and the gateway
// fields carry the box's own attestation (docs/decisions.md).
type Record struct {
	ID            string                 `json:"id"`
	Model         string                 `json:"model"`
	WeightsRoot   string                 `json:"weights_root"`
	RequestHash   string                 `json:"request_hash"`
	OutputHash    string                 `json:"output_hash"`
	Provider      ProviderSig            `json:"provider"`
	Gateway       GatewaySig             `json:"gateway"`
	Proof         Proof                  `json:"proof"`
	Checks        []attest.Check         `json:"checks"`
	Status        string                 `json:"status"`
	UpstreamModel string                 `json:"upstream_model"`
	Usage         Usage                  `json:"usage"`
	Cost          *string                `json:"cost"`
	Receipt       attest.SignedModelCall `json:"receipt"`
	KeyID         *string                `json:"key_id"`
}

// ProviderSig is the third-party provider's signature: absent on a box.
type ProviderSig struct {
	MinerID *string `json:"miner_id"`
	PubKey  *string `json:"pubkey"`
	Sig     *string `json:"sig"`
}

// GatewaySig is the signature over the receipt: the box's instance key.
type GatewaySig struct {
	PubKey string `json:"pubkey"`
	Sig    string `json:"sig"`
	KeyID  string `json:"key_id"`
}

// Proof says what the receipt is and whether its checks pass.
type Proof struct {
	Format   string `json:"format"`
	Verified bool   `json:"verified"`
}

// Usage is the usage as numbers (the API view; the signed receipt carries
// them as strings).
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Status values of a receipt on a box.
const (
	StatusAttested   = "attested"
	StatusUnverified = "unverified"
)

// Read reads a receipt and recomputes its checks. An unknown id is
// ErrNotFound.
func (b *Book) Read(ctx context.Context, id string) (Record, error) {
	body, err := b.store.Receipt(ctx, id)
	if err != nil {
		return Record{}, err
	}
	var st stored
	if err := json.Unmarshal(body, &st); err != nil {
		return Record{}, fmt.Errorf("receipt %s: stored body: %w", id, err)
	}
	r := st.Receipt
	checks := attest.CheckModelCall(r, b.key.PublicKey())
	verified := true
	for _, c := range checks {
		verified = verified && c.OK
	}
	status := StatusAttested
	if !verified {
		status = StatusUnverified
	}
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	return Record{
		ID: r.ID, Model: r.Model, WeightsRoot: r.WeightsRoot, RequestHash: r.RequestHash, OutputHash: r.OutputHash,
		Gateway: GatewaySig{PubKey: r.Signer.PubKey, Sig: r.Sig, KeyID: r.Signer.KeyID},
		Proof:   Proof{Format: attest.ModelCallFormat, Verified: verified},
		Checks:  checks, Status: status, UpstreamModel: st.UpstreamModel,
		Usage:   Usage{PromptTokens: atoi(r.Usage.PromptTokens), CompletionTokens: atoi(r.Usage.CompletionTokens), TotalTokens: atoi(r.Usage.TotalTokens)},
		Receipt: r, KeyID: r.KeyID,
	}, nil
}
