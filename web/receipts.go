package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"boxd/configs"
	"boxd/engine/attest"
	"boxd/web/store"
)

// ReceiptBook signs model-call receipts with the instance key, stores them
// (bounded by receipts.retention_days and receipts.max) and reads them back
// with their checks recomputed. Pipelines issue receipts through it.
type ReceiptBook struct {
	key   *attest.Key
	store *store.Store
	cfg   *configs.Config
	now   func() time.Time
}

// NewReceiptBook makes a receipt book.
func NewReceiptBook(key *attest.Key, st *store.Store, cfg *configs.Config, now func() time.Time) *ReceiptBook {
	if now == nil {
		now = time.Now
	}
	return &ReceiptBook{key: key, store: st, cfg: cfg, now: now}
}

// storedReceipt is what the store keeps for one receipt.
type storedReceipt struct {
	Receipt       attest.SignedModelCall `json:"receipt"`
	UpstreamModel string                 `json:"upstream_model"`
}

// Issue signs and stores a receipt. upstream names the model file that ran
// (its GGUF general.name), reported as upstream_model.
func (b *ReceiptBook) Issue(ctx context.Context, mc attest.ModelCall, upstream string) (attest.SignedModelCall, error) {
	now := b.now()
	if mc.Created == "" {
		mc.Created = strconv.FormatInt(now.Unix(), 10)
	}
	signed, err := attest.IssueModelCall(b.key, mc)
	if err != nil {
		return attest.SignedModelCall{}, err
	}
	body, err := json.Marshal(storedReceipt{Receipt: signed, UpstreamModel: upstream})
	if err != nil {
		return attest.SignedModelCall{}, err
	}
	keepAfter := now.Add(-time.Duration(b.cfg.Receipts.RetentionDays) * 24 * time.Hour)
	if err := b.store.PutReceipt(ctx, signed.ID, now, body, keepAfter, b.cfg.Receipts.Max); err != nil {
		return attest.SignedModelCall{}, err
	}
	return signed, nil
}

// ReceiptRecord is GET /receipts/{id} (contract section 2). On a box the
// runtime is first-party: provider.pubkey and provider.sig are null, and the
// gateway fields carry the box's own attestation (docs/decisions.md).
type ReceiptRecord struct {
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
	Usage         RecordUsage            `json:"usage"`
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

// RecordUsage is the usage as numbers (the API view; the signed receipt
// carries them as strings).
type RecordUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Status values of a receipt on a box.
const (
	StatusAttested   = "attested"
	StatusUnverified = "unverified"
)

// Record reads a receipt and recomputes its checks.
func (b *ReceiptBook) Record(ctx context.Context, id string) (ReceiptRecord, error) {
	body, err := b.store.Receipt(ctx, id)
	if err != nil {
		return ReceiptRecord{}, err
	}
	var st storedReceipt
	if err := json.Unmarshal(body, &st); err != nil {
		return ReceiptRecord{}, fmt.Errorf("receipt %s: stored body: %w", id, err)
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
	return ReceiptRecord{
		ID: r.ID, Model: r.Model, WeightsRoot: r.WeightsRoot, RequestHash: r.RequestHash, OutputHash: r.OutputHash,
		Gateway: GatewaySig{PubKey: r.Signer.PubKey, Sig: r.Sig, KeyID: r.Signer.KeyID},
		Proof:   Proof{Format: attest.ModelCallFormat, Verified: verified},
		Checks:  checks, Status: status, UpstreamModel: st.UpstreamModel,
		Usage:   RecordUsage{PromptTokens: atoi(r.Usage.PromptTokens), CompletionTokens: atoi(r.Usage.CompletionTokens), TotalTokens: atoi(r.Usage.TotalTokens)},
		Receipt: r, KeyID: r.KeyID,
	}, nil
}

func (s *Server) getReceipt(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if len(id) > 128 {
		writeError(w, http.StatusNotFound, "no receipt with that id")
		return
	}
	rec, err := s.receipts.Record(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no receipt %q on this box (receipts are kept %d days)", id, s.cfg.Receipts.RetentionDays))
		return
	}
	if err != nil {
		s.log.Error("read receipt", "id", id, "err", err)
		writeError(w, http.StatusInternalServerError, "could not read the receipt; see the server log")
		return
	}
	writeJSON(w, http.StatusOK, rec)
}
