// Package verify is `boxd verify`: it checks offline, against the signer's
// public key, a signed record, a model-call receipt (alone or in its GET
// /receipts/{id} body), a search receipt with its results, a read document
// or a read chart, and exits 0 when it verifies, 1 when it does not.
package verify

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"boxd/cmd/boxd/cli"
	"boxd/configs"
	"boxd/engine/attest"
	"boxd/internal/records"
	"boxd/pipelines/audit"
	"boxd/pipelines/docreader"
	"boxd/pipelines/docreader/chart"
	"boxd/pipelines/migration"
	"boxd/pipelines/retrieval"
)

// New is the `boxd verify` command.
func New() *cobra.Command {
	var pubHex string
	cmd := &cobra.Command{
		Use:   "verify FILE",
		Short: "Verify a signed record (service.record.v1), model-call receipt (service.model-call.v1), search receipt (service.retrieval.search.v1) read document (service.docreader-receipt.v1) or read chart (service.docreader-chart-receipt.v1) offline",
		Long: "verify checks a signed record (every entry's text, content and link, the signature), a\n" +
			"model-call receipt (its commitment, signature and metering) or a search receipt (its signature,\n" +
			"its index hash and every result's text hash, Merkle proof and, with the documents, offsets:\n" +
			"input without every result's text and proof is refused), and that the signer is the given key (--pubkey, as GET\n" +
			"/attest/signing-key shows it; without it, this box's own key from the state directory). FILE\n" +
			"holds the record or {\"record\": ...}, or the receipt: the body of GET /receipts/{id}, or its\n" +
			"\"receipt\" object alone; a search as the answer POST /retrieval/search returned (with\n" +
			"\"documents\" added to check offsets), or {\"receipt\", \"chunks\", \"documents\"?}, the body POST\n" +
			"/retrieval/verify takes; a read document as POST /docreader/read returned it, or\n" +
			"{\"document\": ...} as POST /docreader/verify takes it (its signature, signer, file, pages,\n" +
			"elements and fields); a read chart as POST /docreader/chart returned it, or {\"chart\": ...}\n" +
			"(its signature, signer, table and image); a migration check's answer or its record (every figure\n" +
			"recomputed). Exit 0 when it verifies, 1 when it does not.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			raw, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			var wrapper struct {
				Record    json.RawMessage         `json:"record"`
				Receipt   json.RawMessage         `json:"receipt"`
				Format    string                  `json:"format"`
				V         string                  `json:"v"`
				Chunks    []retrieval.ProvenChunk `json:"chunks"`
				Index     json.RawMessage         `json:"index"`
				Results   json.RawMessage         `json:"results"`
				Documents []retrieval.Document    `json:"documents"`
				Document  json.RawMessage         `json:"document"`
				Chart     json.RawMessage         `json:"chart"`
				Fixture   string                  `json:"fixture_sig"`
				Kind      string                  `json:"kind"`
				Report    json.RawMessage         `json:"report"`
				ReportID  string                  `json:"report_id"`
			}
			_ = json.Unmarshal(raw, &wrapper)
			var outer json.RawMessage // a GET /receipts/{id} body around the receipt
			receipt := wrapper.Format == attest.ModelCallFormat
			var inner struct {
				V string `json:"v"`
			}
			_ = json.Unmarshal(wrapper.Receipt, &inner)
			search := wrapper.V == retrieval.SearchFormat || inner.V == retrieval.SearchFormat
			if inner.V == retrieval.SearchFormat {
				raw = wrapper.Receipt
			}
			var doc struct {
				Receipt struct {
					V string `json:"v"`
				} `json:"receipt"`
			}
			_ = json.Unmarshal(wrapper.Document, &doc)
			document := inner.V == docreader.ReceiptFormat || doc.Receipt.V == docreader.ReceiptFormat
			if doc.Receipt.V == docreader.ReceiptFormat {
				raw = wrapper.Document
			}
			var ch struct {
				Receipt struct {
					V string `json:"v"`
				} `json:"receipt"`
			}
			_ = json.Unmarshal(wrapper.Chart, &ch)
			chartResult := inner.V == chart.ReceiptFormat || ch.Receipt.V == chart.ReceiptFormat
			if ch.Receipt.V == chart.ReceiptFormat {
				raw = wrapper.Chart
			}
			switch {
			case search, document, chartResult:
			case len(bytes.TrimSpace(wrapper.Record)) > 0:
				raw = wrapper.Record
			case !receipt && len(bytes.TrimSpace(wrapper.Receipt)) > 0:
				outer = outerRecord(raw)
				raw, receipt = wrapper.Receipt, true
			}
			var pub ed25519.PublicKey
			if pubHex != "" {
				b, err := hex.DecodeString(pubHex)
				if err != nil || len(b) != ed25519.PublicKeySize {
					return cli.ConfigError{Err: fmt.Errorf("--pubkey must be 64 hex characters (the pubkey of GET /attest/signing-key)")}
				}
				pub = b
			} else {
				cfg, err := configs.Load(cmd.Flags())
				if err != nil {
					return cli.ConfigError{Err: err}
				}
				k, err := loadExistingKey(cfg.StateDir)
				if err != nil {
					return cli.ConfigError{Err: fmt.Errorf("give --pubkey (from GET /attest/signing-key), or run on the box: %w", err)}
				}
				pub = k.PublicKey()
			}
			if wrapper.Format == audit.ReportFormat {
				return verifyAuditReport(cmd.OutOrStdout(), raw, pub)
			}
			if wrapper.ReportID != "" && len(wrapper.Report) > 0 { // a migration check's answer
				raw = wrapper.Report
				_ = json.Unmarshal(raw, &wrapper)
			} else if len(wrapper.Record) > 0 {
				var k struct{ Kind string }
				_ = json.Unmarshal(wrapper.Record, &k)
				wrapper.Kind = k.Kind
			}
			if wrapper.Kind == migration.Kind {
				return verifyMigration(cmd.OutOrStdout(), raw, pub)
			}
			if wrapper.Fixture != "" {
				return verifyFixture(cmd.OutOrStdout(), raw, pub)
			}
			if search {
				in := searchInput{receipt: raw, chunks: wrapper.Chunks, documents: wrapper.Documents}
				if inner.V == retrieval.SearchFormat {
					in.index, in.results = wrapper.Index, wrapper.Results
				}
				return verifySearch(cmd.OutOrStdout(), in, pub)
			}
			if document {
				return verifyDocument(cmd.OutOrStdout(), raw, pub)
			}
			if chartResult {
				return verifyChart(cmd.OutOrStdout(), raw, pub)
			}
			if receipt {
				return verifyReceipt(cmd.OutOrStdout(), raw, outer, pub)
			}
			v := records.Verify(raw, pub)
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			for _, c := range v.Checks {
				mark := "ok"
				if !c.OK {
					mark = "FAIL"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", mark, c.Name, c.Detail)
			}
			_ = tw.Flush()
			if !v.OK {
				fmt.Fprintln(cmd.OutOrStdout(), "NOT VERIFIED:", v.Problem)
				return cli.ErrNotVerified
			}
			fmt.Fprintf(cmd.OutOrStdout(), "verified: %d entries, signed by %s\n", v.Entries, v.Signer.KeyID)
			return nil
		},
	}
	cmd.Flags().StringVar(&pubHex, "pubkey", "", "the signer's public key (64 hex)")
	configs.RegisterFileFlags(cmd.Flags())
	return cmd
}

// verifyAuditReport checks an endpoint audit report
// (service.audit.report.v1) and that pub signed it.
func verifyAuditReport(out io.Writer, raw []byte, pub ed25519.PublicKey) error {
	v := audit.VerifyReport(raw, hex.EncodeToString(pub))
	var head struct {
		ID      string `json:"id"`
		Verdict string `json:"verdict"`
	}
	_ = json.Unmarshal(raw, &head)
	switch {
	case !v.ValidSignature:
		fmt.Fprintln(out, "NOT VERIFIED: the report's signature:", v.Reason)
		return cli.ErrNotVerified
	case !v.SignedByThisAuditor:
		fmt.Fprintln(out, "NOT VERIFIED: the report is signed by another key, not", hex.EncodeToString(pub))
		return cli.ErrNotVerified
	}
	fmt.Fprintf(out, "verified: audit report %s, verdict %s, signed by %s\n", head.ID, head.Verdict, attest.KeyID(pub))
	return nil
}

// verifyFixture checks an audit reference fixture: its fixture_sha256 and
// fixture_sig, and that pub signed it.
func verifyFixture(out io.Writer, raw []byte, pub ed25519.PublicKey) error {
	var f audit.Fixture
	if err := json.Unmarshal(raw, &f); err != nil {
		fmt.Fprintln(out, "NOT VERIFIED: not a fixture:", err)
		return cli.ErrNotVerified
	}
	if err := f.Verify(pub); err != nil {
		fmt.Fprintln(out, "NOT VERIFIED:", err)
		return cli.ErrNotVerified
	}
	fmt.Fprintf(out, "verified: audit fixture %s (%s, %d probes), signed by %s\n", f.ID, f.Model, len(f.Probes), f.Signer.KeyID)
	return nil
}

// verifyReceipt checks a service.model-call.v1 receipt against pub: the
// fields it signs (every field but commitment and sig, exactly; an unknown
// field or a number where the receipt has strings fails), their commitment,
// the Ed25519 signature, the signer, and the metering; with outer (the GET
// /receipts/{id} body around it), that the body's fields are the
// receipt's (recordChecks).
func verifyReceipt(out io.Writer, raw, outer []byte, pub ed25519.PublicKey) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var s attest.SignedModelCall
	if err := dec.Decode(&s); err != nil || s.Format != attest.ModelCallFormat {
		if err == nil {
			err = fmt.Errorf("format is %q", s.Format)
		}
		fmt.Fprintf(out, "FAIL\tformat\tnot a %s receipt: %v\n", attest.ModelCallFormat, err)
		fmt.Fprintln(out, "NOT VERIFIED: the receipt cannot be read")
		return cli.ErrNotVerified
	}
	checks := attest.CheckModelCall(s, pub)
	all := checks
	if outer != nil {
		all = append(append([]attest.Check{}, checks...), recordChecks(outer, s, checks)...)
	}
	if err := printChecks(out, all); err != nil {
		return err
	}
	fmt.Fprintf(out, "verified: receipt %s (%s, weights_root %s), signed by %s\n", s.ID, s.Model, s.WeightsRoot, s.Signer.KeyID)
	return nil
}

// verifyDocument checks a document POST /docreader/read returned.
func verifyDocument(out io.Writer, raw []byte, pub ed25519.PublicKey) error {
	// Decoded as the route decodes it: a field added, removed or sent
	// twice is refused, not dropped.
	d, err := docreader.DecodeDocument(raw)
	var checks []attest.Check
	if err == nil {
		checks, err = docreader.Verify(d, pub)
	}
	if err != nil {
		fmt.Fprintf(out, "FAIL\tformat\tnot a document with a %s receipt: %v\n", docreader.ReceiptFormat, err)
		fmt.Fprintln(out, "NOT VERIFIED: the document cannot be read")
		return cli.ErrNotVerified
	}
	if err := printChecks(out, checks); err != nil {
		return err
	}
	n := 0
	for _, p := range d.Pages {
		n += len(p.Elements)
	}
	fmt.Fprintf(out, "verified: document %s, %d pages, %d elements, signed by %s\n", d.ID, len(d.Pages), n, d.Receipt.Signer.KeyID)
	return nil
}

// verifyChart checks a chart result POST /docreader/chart returned.
func verifyChart(out io.Writer, raw []byte, pub ed25519.PublicKey) error {
	r, err := chart.DecodeResult(raw)
	var checks []attest.Check
	if err == nil {
		checks, err = chart.Verify(r, pub)
	}
	if err != nil {
		fmt.Fprintf(out, "FAIL\tformat\tnot a chart with a %s receipt: %v\n", chart.ReceiptFormat, err)
		fmt.Fprintln(out, "NOT VERIFIED: the chart cannot be read")
		return cli.ErrNotVerified
	}
	if err := printChecks(out, checks); err != nil {
		return err
	}
	fmt.Fprintf(out, "verified: chart %s (%d series), signed by %s\n", r.ID, len(r.Chart.Series), r.Receipt.Signer.KeyID)
	return nil
}

// printChecks writes one line per check and, when one failed, NOT
// VERIFIED with the first failure (cli.ErrNotVerified).
// verifyMigration checks a migration record: its chain, signature and
// receipts, and every figure recomputed from its per-example entries.
func verifyMigration(out io.Writer, raw []byte, pub ed25519.PublicKey) error {
	v := migration.Verify(raw, pub)
	checks := append([]attest.Check{}, v.Record.Checks...)
	detail := fmt.Sprintf("every figure recomputes from the score entries (%d scores rescored from the texts)", v.Recompute.Rescored)
	if !v.Recompute.OK {
		detail = fmt.Sprintf("%d figures do not recompute", len(v.Recompute.Diffs))
		for i, d := range v.Recompute.Diffs {
			if i == 5 {
				detail += "; …"
				break
			}
			detail += fmt.Sprintf("; entry %d (%s %s %s) %s: stated %q, recomputed %q", d.Entry, d.Type, d.Candidate, d.Example, d.Field, d.Stated, d.Recomputed)
		}
	}
	checks = append(checks, attest.Check{Name: migration.CheckRecompute, OK: v.Recompute.OK, Detail: detail})
	if err := printChecks(out, checks); err != nil {
		return err
	}
	fmt.Fprintf(out, "verified: migration check, %d entries, signed by %s\n", v.Record.Entries, v.Record.Signer.KeyID)
	return nil
}

func printChecks(out io.Writer, checks []attest.Check) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	problem := ""
	for _, c := range checks {
		mark := "ok"
		if !c.OK {
			mark = "FAIL"
			if problem == "" {
				problem = c.Name + ": " + c.Detail
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", mark, c.Name, c.Detail)
	}
	_ = tw.Flush()
	if problem != "" {
		fmt.Fprintln(out, "NOT VERIFIED:", problem)
		return cli.ErrNotVerified
	}
	return nil
}

// loadExistingKey reads the instance key without ever creating one.
func loadExistingKey(dir string) (*attest.Key, error) {
	if _, err := os.Stat(filepath.Join(dir, attest.KeyFile)); err != nil {
		return nil, err
	}
	k, _, err := attest.LoadOrCreateKey(dir)
	return k, err
}
