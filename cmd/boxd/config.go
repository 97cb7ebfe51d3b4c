package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"boxd/configs"
)

func newConfig() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Check the configuration and print every setting, its value and where it came from",
		Long: "config loads the configuration exactly as serve does (file < BOXD_* environment < flags),\n" +
			"prints the effective settings with secrets redacted, and exits 2 on the first bad value.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := configs.Load(cmd.Flags())
			if err != nil {
				return configError{err}
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "SETTING\tVALUE\tFROM")
			for _, e := range cfg.Effective() {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", e.Key, e.Value, e.Source)
			}
			return tw.Flush()
		},
	}
	configs.RegisterFlags(cmd.Flags())
	return cmd
}
