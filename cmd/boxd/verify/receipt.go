package verify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"boxd/engine/attest"
	"boxd/internal/receipts"
)

// outerRecord is the body of GET /receipts/{id} around a model-call
// receipt: nil when the input is the receipt alone ({"receipt": ...} or
// bare).
func outerRecord(raw []byte) json.RawMessage {
	var keys map[string]json.RawMessage
	if json.Unmarshal(raw, &keys) != nil {
		return nil
	}
	if _, ok := keys["receipt"]; !ok || len(keys) == 1 {
		return nil
	}
	return raw
}

// recordFields are the fields of a GET /receipts/{id} body
// (receipts.Record), with those of its objects.
var recordFields = map[string][]string{
	"id": nil, "model": nil, "weights_root": nil, "request_hash": nil, "output_hash": nil,
	"provider": {"miner_id", "pubkey", "sig"}, "gateway": {"pubkey", "sig", "key_id"}, "proof": {"format", "verified"},
	"checks": nil, "status": nil, "upstream_model": nil, "usage": {"prompt_tokens", "completion_tokens", "total_tokens"},
	"cost": nil, "receipt": nil, "key_id": nil,
}

// recordChecks check that a GET /receipts/{id} body says what its signed
// receipt says: it has no field the box does not write (one is named),
// and those of its fields it has that restate the receipt (id, model,
// weights_root, the hashes, the gateway signature, usage, key_id) are the
// receipt's, and its proof, status and checks agree with the checks
// recomputed here. The body's top-level fields are not signed: a reader
// who took weights_root from them would trust what nobody signed.
// upstream_model, provider and cost are not in the receipt: unchecked.
func recordChecks(raw []byte, s attest.SignedModelCall, checks []attest.Check) []attest.Check {
	fail := func(format string, a ...any) []attest.Check {
		return []attest.Check{{Name: "record", OK: false, Detail: fmt.Sprintf(format, a...)}}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return fail("the GET /receipts/{id} body cannot be read: %v", err)
	}
	has := map[string]bool{}
	for _, k := range sortedKeys(top) {
		sub, ok := recordFields[k]
		if !ok {
			return fail("the body's %s is not a field of GET /receipts/{id} (remove it)", k)
		}
		has[k] = true
		if sub == nil {
			continue
		}
		var inner map[string]json.RawMessage
		if err := json.Unmarshal(top[k], &inner); err != nil {
			return fail("the body's %s is not an object: %v", k, err)
		}
		for _, ik := range sortedKeys(inner) {
			if !slices.Contains(sub, ik) {
				return fail("the body's %s.%s is not a field of GET /receipts/{id} (remove it)", k, ik)
			}
			has[k+"."+ik] = true
		}
	}
	var rec receipts.Record
	if err := json.Unmarshal(raw, &rec); err != nil {
		return fail("the GET /receipts/{id} body cannot be read: %v", err)
	}
	verified := true
	for _, c := range checks {
		verified = verified && c.OK
	}
	status := receipts.StatusAttested
	if !verified {
		status = receipts.StatusUnverified
	}
	atoi := func(v string) int { n, _ := strconv.Atoi(v); return n }
	keyID := func(p *string) string {
		if p == nil {
			return "null"
		}
		return strconv.Quote(*p)
	}
	fields := []struct {
		name      string
		got, want any
	}{
		{"id", rec.ID, s.ID},
		{"model", rec.Model, s.Model},
		{"weights_root", rec.WeightsRoot, s.WeightsRoot},
		{"request_hash", rec.RequestHash, s.RequestHash},
		{"output_hash", rec.OutputHash, s.OutputHash},
		{"gateway.pubkey", rec.Gateway.PubKey, s.Signer.PubKey},
		{"gateway.sig", rec.Gateway.Sig, s.Sig},
		{"gateway.key_id", rec.Gateway.KeyID, s.Signer.KeyID},
		{"usage.prompt_tokens", rec.Usage.PromptTokens, atoi(s.Usage.PromptTokens)},
		{"usage.completion_tokens", rec.Usage.CompletionTokens, atoi(s.Usage.CompletionTokens)},
		{"usage.total_tokens", rec.Usage.TotalTokens, atoi(s.Usage.TotalTokens)},
		{"key_id", keyID(rec.KeyID), keyID(s.KeyID)},
		{"proof.format", rec.Proof.Format, attest.ModelCallFormat},
		{"proof.verified", rec.Proof.Verified, verified},
		{"status", rec.Status, status},
		{"checks", checkSummary(rec.Checks), checkSummary(checks)},
	}
	for _, f := range fields {
		if has[f.name] && f.got != f.want {
			return fail("the body's %s is %v where the signed receipt gives %v: the body's top-level fields are not signed, and this one disagrees", f.name, f.got, f.want)
		}
	}
	return []attest.Check{{Name: "record", OK: true, Detail: "the body's fields that restate the receipt are the signed receipt's, and its proof, status and checks the ones recomputed here"}}
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// checkSummary is each check's name and outcome.
func checkSummary(cs []attest.Check) string {
	var b bytes.Buffer
	for _, c := range cs {
		fmt.Fprintf(&b, "%s=%t;", c.Name, c.OK)
	}
	return b.String()
}
