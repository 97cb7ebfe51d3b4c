package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"boxd/cmd/boxd/cli"
	"boxd/configs"
	"boxd/engine/browser"
	"boxd/internal/version"
	"boxd/pipelines/a11y/act"
	"boxd/pipelines/a11y/axe"
)

func newA11y() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "a11y",
		Short: "Accessibility audit tools",
	}
	cmd.AddCommand(newActReport())
	return cmd
}

func newActReport() *cobra.Command {
	var (
		rules  []string
		asJSON bool
		out    string
		tabs   int
		axeDir string
	)
	cmd := &cobra.Command{
		Use:   "act-report DIR",
		Short: "Run the audit's checks over the W3C ACT Rules test cases in DIR and report each approved rule's consistency",
		Long: `Run the accessibility audit's checks over the W3C ACT Rules test cases and
grade each approved rule as the ACT implementation reports do.

DIR holds testcases.json and the testcases/ and test-assets/ folders (the
project's test data has them at act-rules/). The files are served on a
loopback port and opened in chromium; nothing leaves the machine. Each
rule is answered by the axe-core rules mapped to it or by a check of
boxd's own, and graded complete, partial (both consistent), minimal,
inconsistent (a failed outcome on a passed or inapplicable case) or
untested. The keyboard-trap rule a1b64e (proposed, not yet approved) runs
too and is listed apart. --rules limits the run to some rule ids; --json
prints the whole report with every test case; --out FILE writes the
outcome of every test case in the ACT implementation-report JSON shape
(the W3C's reports in act-rules/implementations/ use it).

The rule engine is --axe-dir, else a11y.axe_dir.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := configs.Load(cmd.Flags())
			if err != nil {
				return configError{err}
			}
			if axeDir == "" {
				axeDir = cfg.A11y.AxeDir
			}
			engine, err := axe.Load(axeDir)
			if err != nil {
				return configError{fmt.Errorf("%w (--axe-dir or a11y.axe_dir)", err)}
			}
			cases, err := act.Load(args[0])
			if err != nil {
				return err
			}
			if len(rules) > 0 {
				cases = slices.DeleteFunc(cases, func(c act.Case) bool { return !slices.Contains(rules, c.RuleID) })
				if len(cases) == 0 {
					return fmt.Errorf("no approved test case of rules %s", strings.Join(rules, ", "))
				}
			}
			if tabs < 1 || tabs > 16 {
				return configError{fmt.Errorf("--tabs is %d: give 1 to 16", tabs)}
			}
			pool, err := browser.NewPool(browser.Options{Slots: tabs, TabTimeout: 2 * time.Hour})
			if err != nil {
				return err
			}
			r := &act.Runner{Pool: pool, Axe: engine, Dir: args[0], Tabs: tabs}
			rep, err := r.Run(cmd.Context(), cases, nil)
			if err != nil {
				return err
			}
			if out != "" {
				raw, err := json.MarshalIndent(act.AsImplementation(rep, version.Version, time.Now()), "", "  ")
				if err != nil {
					return err
				}
				if err := os.WriteFile(out, append(raw, '\n'), 0o644); err != nil {
					return fmt.Errorf("--out: %w", err)
				}
			}
			stdout := cmd.OutOrStdout()
			if asJSON {
				return cli.PrintJSON(stdout, rep)
			}
			w := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
			fmt.Fprintln(w, "rule\tconsistency\tcases\tcorrect\tfalse+\tfalse-\tcantTell\tuntested\tprocedure\tname")
			for _, l := range rep.Rules {
				if !l.Approved {
					l.ID += "*"
				}
				fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n", l.ID, l.Consistency, l.Cases, l.Correct, l.FalsePos, l.FalseNeg, l.CantTell, l.Untested, l.Procedure, l.Name)
			}
			if err := w.Flush(); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "\n(complete: consistent; partial: partially consistent; a proposed rule is marked *)\n%s: %d approved rules consistent (complete or partial), %d inconsistent, %d minimal or untested, of %d; %.0f s\n",
				rep.RuleEngine, rep.Consistent, rep.Inconsistent, rep.Untested, rep.Consistent+rep.Inconsistent+rep.Untested, rep.ElapsedS)
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&rules, "rules", nil, "only these ACT rule ids (comma-separated)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the whole report as JSON")
	cmd.Flags().StringVar(&out, "out", "", "write every test case's outcome to this file, in the ACT implementation-report JSON shape")
	cmd.Flags().IntVar(&tabs, "tabs", 4, "test cases run at once, each in its own chromium")
	cmd.Flags().StringVar(&axeDir, "axe-dir", "", "the axe-core package folder (default a11y.axe_dir)")
	return cmd
}
