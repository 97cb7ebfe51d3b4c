// Command boxd is the self-hosted GPU appliance daemon: `boxd serve` runs the
// API; the other subcommands inspect models and configuration.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"boxd/cmd/boxd/cli"
	"boxd/cmd/boxd/models"
	"boxd/cmd/boxd/verify"
	"boxd/gpu"
	"boxd/internal/version"
)

// exitConfig is the exit status for a configuration error; the systemd unit
// does not restart on it (RestartPreventExitStatus=2).
const exitConfig = cli.ExitConfig

// configError marks errors an operator fixes in the configuration: it is
// a cli.ConfigError (boxd exits exitConfig), written configError{err} in
// this package's commands.
type configError struct{ err error }

func (e configError) Error() string { return e.err.Error() }
func (e configError) Unwrap() error { return cli.ConfigError{Err: e.err} }

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line and returns the process exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if err := gpu.CheckCPU(); err != nil {
		fmt.Fprintln(stderr, "boxd:", err)
		return 1
	}
	return cli.Execute(ctx, newRoot(stdout, stderr), args, stderr)
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := cli.NewRoot(stdout, stderr)
	root.Version = versionLine() // boxd --version, as boxd version
	root.SetVersionTemplate("{{.Version}}\n")
	root.AddCommand(newServe(), newVersion(), models.New(), newConfig(), newKeys(), verify.New(), newAudit(), newTranscribe(), newDiarize(), newDemo(), newGPU(), newA11y(), newDocs())
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
