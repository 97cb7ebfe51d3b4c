package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"boxd/engine/llm"
	"boxd/engine/models/testmodels"
)

func newModels() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "models",
		Short: "Inspect model files",
	}
	cmd.AddCommand(newModelsInspect(), newModelsMakeTest())
	return cmd
}

func newModelsMakeTest() *cobra.Command {
	var bench bool
	cmd := &cobra.Command{
		Use:   "make-test-models DIR",
		Short: "Write tiny random-weight GGUF models (chat, embedder, reranker) for tests, deterministic from fixed seeds",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			paths, err := testmodels.MakeAll(args[0], bench)
			if err != nil {
				return err
			}
			for _, p := range paths {
				fmt.Fprintln(cmd.OutOrStdout(), p)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&bench, "bench", false, "also write the 110M-parameter Q8_0 benchmark model")
	return cmd
}

func newModelsInspect() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "inspect FILE.gguf",
		Short: "Print what a GGUF model holds, read with llama.cpp's loader, and its weights root",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			info, err := llm.Inspect(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			}
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			name := info.Name
			if name == "" {
				name = "-"
			}
			fmt.Fprintf(tw, "file\t%s\n", info.Path)
			fmt.Fprintf(tw, "name\t%s\n", name)
			fmt.Fprintf(tw, "architecture\t%s\n", info.Architecture)
			fmt.Fprintf(tw, "parameters\t%s (%d)\n", humanCount(info.Parameters), info.Parameters)
			fmt.Fprintf(tw, "context length\t%d\n", info.ContextLength)
			fmt.Fprintf(tw, "layers\t%d\n", info.Layers)
			fmt.Fprintf(tw, "embedding size\t%d\n", info.EmbeddingSize)
			fmt.Fprintf(tw, "quantisation\t%s\n", info.Quantisation)
			fmt.Fprintf(tw, "chat template\t%s\n", info.ChatTemplate)
			fmt.Fprintf(tw, "size\t%d bytes\n", info.SizeBytes)
			fmt.Fprintf(tw, "weights root\t%s\n", info.WeightsRoot)
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// humanCount writes n as 260K, 1.2M, 27.0B.
func humanCount(n uint64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.0fK", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}
