// Package cli is what the boxd command and its subcommand packages
// (cmd/boxd/models, cmd/boxd/verify) share: the root command's settings,
// Execute, which turns a command's error into boxd's exit status, the
// errors that choose that status, and JSON output.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/cobra"
)

// ExitConfig is the exit status for a configuration error; the systemd unit
// does not restart on it (RestartPreventExitStatus=2).
const ExitConfig = 2

// ConfigError marks errors an operator fixes in the configuration: boxd
// exits ExitConfig on them.
type ConfigError struct{ Err error }

func (e ConfigError) Error() string { return e.Err.Error() }
func (e ConfigError) Unwrap() error { return e.Err }

// ErrNotVerified ends `boxd verify` when its report already said NOT
// VERIFIED: boxd exits 1 without more words.
var ErrNotVerified = errors.New("record does not verify")

// NewRoot is the boxd root command, without subcommands, writing to stdout
// and stderr. Commands other than serve (which sets up its own logger) show
// only warnings, such as llama.cpp's remarks on a model file.
func NewRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "boxd",
		Short:         "boxd runs open-weight models on this machine and serves the boxd API",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	slog.SetDefault(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	return root
}

// Execute runs root on args and returns the process exit status: 0, 1
// (ErrNotVerified without a word; any other error as "boxd: ERROR" on
// stderr), or ExitConfig for a ConfigError.
func Execute(ctx context.Context, root *cobra.Command, args []string, stderr io.Writer) int {
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	if errors.Is(err, ErrNotVerified) {
		return 1
	}
	fmt.Fprintln(stderr, "boxd:", err)
	var ce ConfigError
	if errors.As(err, &ce) {
		return ExitConfig
	}
	return 1
}

// PrintJSON writes v as indented JSON.
func PrintJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
