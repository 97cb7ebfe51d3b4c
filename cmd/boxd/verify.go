package main

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"boxd/configs"
	"boxd/engine/attest"
	"boxd/records"
)

// errNotVerified makes `boxd verify` exit 1 without more words.
var errNotVerified = errors.New("record does not verify")

func newVerify() *cobra.Command {
	var pubHex string
	cmd := &cobra.Command{
		Use:   "verify FILE",
		Short: "Verify a signed record offline (service.record.v1) against a public key",
		Long: "verify checks a signed record: every entry's text, content and link, the signature, and that\n" +
			"the signer is the given key (--pubkey, as GET /attest/signing-key shows it; without it, this\n" +
			"box's own key from the state directory). FILE holds the record, or {\"record\": ...}. Exit 0 when\n" +
			"it verifies, 1 when it does not.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			raw, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			var wrapper struct {
				Record json.RawMessage `json:"record"`
			}
			if json.Unmarshal(raw, &wrapper) == nil && len(bytes.TrimSpace(wrapper.Record)) > 0 {
				raw = wrapper.Record
			}
			var pub ed25519.PublicKey
			if pubHex != "" {
				b, err := hex.DecodeString(pubHex)
				if err != nil || len(b) != ed25519.PublicKeySize {
					return configError{fmt.Errorf("--pubkey must be 64 hex characters (the pubkey of GET /attest/signing-key)")}
				}
				pub = b
			} else {
				cfg, err := configs.Load(cmd.Flags())
				if err != nil {
					return configError{err}
				}
				k, err := loadExistingKey(cfg.StateDir)
				if err != nil {
					return configError{fmt.Errorf("give --pubkey (from GET /attest/signing-key), or run on the box: %w", err)}
				}
				pub = k.PublicKey()
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
				return errNotVerified
			}
			fmt.Fprintf(cmd.OutOrStdout(), "verified: %d entries, signed by %s\n", v.Entries, v.Signer.KeyID)
			return nil
		},
	}
	cmd.Flags().StringVar(&pubHex, "pubkey", "", "the signer's public key (64 hex)")
	configs.RegisterFileFlags(cmd.Flags())
	return cmd
}

// loadExistingKey reads the instance key without ever creating one.
func loadExistingKey(dir string) (*attest.Key, error) {
	if _, err := os.Stat(filepath.Join(dir, attest.KeyFile)); err != nil {
		return nil, err
	}
	k, _, err := attest.LoadOrCreateKey(dir)
	return k, err
}
