// Command boxd is the self-hosted GPU appliance daemon: `boxd serve` runs the
// API; the other subcommands inspect models and configuration.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"boxd/gpu"
	"boxd/internal/version"
)

// exitConfig is the exit status for a configuration error; the systemd unit
// does not restart on it (RestartPreventExitStatus=2).
const exitConfig = 2

// configError marks errors an operator fixes in the configuration.
type configError struct{ err error }

func (e configError) Error() string { return e.err.Error() }
func (e configError) Unwrap() error { return e.err }

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line and returns the process exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if err := gpu.CheckCPU(); err != nil {
		fmt.Fprintln(stderr, "boxd:", err)
		return 1
	}
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	if errors.Is(err, errNotVerified) {
		return 1
	}
	fmt.Fprintln(stderr, "boxd:", err)
	var ce configError
	if errors.As(err, &ce) {
		return exitConfig
	}
	return 1
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "boxd",
		Short:         "boxd runs open-weight models on this machine and serves the boxd API",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionLine(), // boxd --version, as boxd version
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetOut(stdout)
	root.SetErr(stderr)
	// Commands other than serve (which sets up its own logger) show only
	// warnings, such as llama.cpp's remarks on a model file.
	slog.SetDefault(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	root.AddCommand(newServe(), newVersion(), newModels(), newConfig(), newKeys(), newVerify(), newTranscribe(), newDemo(), newGPU(), newA11y(), newDocs())
	return root
}

func newVersion() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of boxd and what it was built with",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), versionLine())
			return nil
		},
	}
}

func versionLine() string {
	line := fmt.Sprintf("boxd %s (API contract %s, %s, llama.cpp via ollama %s)", version.Version, version.Contract, runtime.Version(), ollamaVersion())
	if version.Commit != "" {
		line += " commit " + version.Commit
	}
	return line
}

// ollamaVersion is the pinned github.com/ollama/ollama module in this build.
func ollamaVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/ollama/ollama" {
				return d.Version
			}
		}
	}
	return "unknown"
}
