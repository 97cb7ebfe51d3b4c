package main

import (
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"boxd/configs"
	"boxd/gpu"
)

// newGPU lists the devices ggml sees with gpu.library_path loaded: what
// serve can offload to.
func newGPU() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "gpu",
		Short: "List the devices boxd can run models on (the CPU, and GPUs whose backend is in gpu.library_path), with their memory",
		Long: "gpu loads the ggml GPU backend libraries from gpu.library_path exactly as serve does and lists every\n" +
			"device, free and total memory included. Without a GPU line, serve runs on the CPU.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := configs.Load(cmd.Flags())
			if err != nil {
				return configError{err}
			}
			gpu.Init(cfg.GPU.LibraryPath)
			devs := gpu.Devices()
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(struct {
					LibraryPath string       `json:"library_path"`
					Devices     []gpu.Device `json:"devices"`
				}{cfg.GPU.LibraryPath, devs})
			}
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "INDEX\tKIND\tNAME\tDESCRIPTION\tFREE MiB\tTOTAL MiB")
			for _, d := range devs {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\n", d.Index, d.Kind, d.Name, d.Description, d.FreeBytes>>20, d.TotalBytes>>20)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if len(gpu.GPUs()) == 0 {
				why := "has no ggml GPU backend (libggml-cuda.so)"
				if _, err := os.Stat(cfg.GPU.LibraryPath); err != nil {
					why = "does not exist"
				}
				fmt.Fprintf(out, "no GPU: gpu.library_path %s %s; models run on the CPU. Build the backend with make cuda (README, GPU).\n", cfg.GPU.LibraryPath, why)
			}
			return nil
		},
	}
	configs.RegisterFlags(cmd.Flags())
	// Every setting is read as serve reads it, but help shows only the
	// two that change what gpu lists.
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		f.Hidden = f.Name != configs.ConfigFlag && f.Name != configs.FlagName("gpu.library_path")
	})
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
