package audit

import (
	"encoding/json"
	"errors"
	"fmt"

	"boxd/engine/attest"
)

// ReportFormat is the signed message prefix of an audit report (contract
// document 2, section 4).
const ReportFormat = "service.audit.report.v1"

// Report is a signed audit report. The signature covers every field but
// signature itself: the prefix, a newline, and the canonical JSON of the
// rest (keys sorted, "," and ":" without spaces, UTF-8 unescaped). Every
// figure is a decimal string or an integer count, so any JSON library
// re-serialises it to the same bytes.
type Report struct {
	ID        string         `json:"id"`
	Format    string         `json:"format"`
	CreatedAt string         `json:"created_at"`
	Auditor   ReportAuditor  `json:"auditor"`
	Target    ReportTarget   `json:"target"`
	Reference *ReportRef     `json:"reference"`
	Verdict   string         `json:"verdict"`
	Reasons   []string       `json:"reasons"`
	Passes    []PassSummary  `json:"passes"`
	Lanes     ReportLanes    `json:"lanes"`
	Quality   *QualityScores `json:"quality"`
	Probes    ReportProbes   `json:"probes"`
	Receipts  []string       `json:"receipts"`
	Signer    Signer         `json:"signer"`
	Signature string         `json:"signature"`
}

// ReportAuditor names what audited.
type ReportAuditor struct {
	Software    string `json:"software"`
	Suite       string `json:"suite"`
	SuiteSHA256 string `json:"suite_sha256"`
}

// ReportTarget is what was audited (never its key).
type ReportTarget struct {
	Kind         string `json:"kind"` // demo or endpoint
	ID           string `json:"id,omitempty"`
	BaseURL      string `json:"base_url,omitempty"`
	Model        string `json:"model"`
	ClaimedModel string `json:"claimed_model"`
	// ServedModel is the model name the endpoint's answers carried.
	ServedModel string `json:"served_model"`
}

// ReportRef is the fixture compared against.
type ReportRef struct {
	ID            string `json:"id"`
	Model         string `json:"model"`
	Engine        string `json:"engine"`
	FixtureSHA256 string `json:"fixture_sha256"`
	Noise         Noise  `json:"noise"`
}

// PassSummary is one identity pass: its seed and figures.
type PassSummary struct {
	Seed          string `json:"seed"`
	Verdict       string `json:"verdict"`
	Probes        int    `json:"probes"`
	Errors        int    `json:"errors"`
	Exact         string `json:"exact"`
	First         string `json:"first"`
	Prefix        string `json:"prefix"`
	LogprobDelta  string `json:"logprob_delta"`
	TopOverlap    string `json:"top_overlap"`
	WithLogprobs  int    `json:"with_logprobs"`
	PassLogprob   string `json:"pass_logprob_max"`
	PassExactMin  string `json:"pass_exact_min"`
	DriftFirstMin string `json:"drift_first_min"`
}

// ReportLanes are each lane's final checks.
type ReportLanes struct {
	Identity    []Check `json:"identity"`
	Quality     []Check `json:"quality"`
	Performance []Check `json:"performance"`
}

// ReportProbes counts the requests sent.
type ReportProbes struct {
	Sent   int            `json:"sent"`
	Errors int            `json:"errors"`
	Each   []ProbeOutcome `json:"each"`
	Notes  []string       `json:"notes"`
}

// ProbeOutcome is one probe of the first pass.
type ProbeOutcome struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Outcome string `json:"outcome"` // identical, first-token, differs, answered, error
	Error   string `json:"error,omitempty"`
}

// Check is one line of a lane (contract: id, title, status, value, band,
// detail).
type Check struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Status string `json:"status"` // pass, warn, fail, skip
	Value  string `json:"value"`
	Band   string `json:"band"`
	Detail string `json:"detail"`
}

// Check statuses.
const (
	StatusPass = "pass"
	StatusWarn = "warn"
	StatusFail = "fail"
	StatusSkip = "skip"
)

// reportDoc is the report as its signature covers it: every field but
// signature.
func reportDoc(raw []byte) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("the report is not a JSON object: %w", err)
	}
	if m == nil {
		return nil, errors.New("the report is not a JSON object")
	}
	delete(m, "signature")
	return m, nil
}

// Sign fills the signer and signature with key.
func (r *Report) Sign(key *attest.Key) error {
	r.Signer = Signer{PubKey: key.PublicKeyHex(), KeyID: key.ID()}
	r.Signature = ""
	raw, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("audit: report %s: %w", r.ID, err)
	}
	doc, err := reportDoc(raw)
	if err != nil {
		return err
	}
	sig, _, err := key.Sign(ReportFormat, doc)
	if err != nil {
		return fmt.Errorf("audit: signing report %s: %w", r.ID, err)
	}
	r.Signature = sig
	return nil
}

// Verification is POST /audit/verify's answer.
type Verification struct {
	ValidSignature      bool   `json:"valid_signature"`
	SignedByThisAuditor bool   `json:"signed_by_this_auditor"`
	AuditorPubKey       string `json:"auditor_pubkey"`
	// Reason says why the signature is not valid ("" when it is).
	Reason string `json:"reason,omitempty"`
}

// VerifyReport checks a report (JSON) as the contract's local
// verification does: the signature over the prefix and the canonical JSON
// of every other field, by the report's signer.pubkey; auditor is this
// box's hex public key.
func VerifyReport(raw []byte, auditor string) Verification {
	v := Verification{AuditorPubKey: auditor}
	doc, err := reportDoc(raw)
	if err != nil {
		v.Reason = err.Error()
		return v
	}
	var head struct {
		Signer    Signer `json:"signer"`
		Signature string `json:"signature"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		v.Reason = "signer or signature has the wrong type: " + err.Error()
		return v
	}
	msg, err := attest.Message(ReportFormat, doc)
	if err != nil {
		v.Reason = err.Error()
		return v
	}
	if err := attest.VerifyHex(head.Signer.PubKey, head.Signature, msg); err != nil {
		v.Reason = err.Error()
		return v
	}
	v.ValidSignature = true
	v.SignedByThisAuditor = head.Signer.PubKey == auditor
	return v
}
