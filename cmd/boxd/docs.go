package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"boxd/internal/version"
)

// newDocs writes the manual pages and shell completions the package
// installs (make deb runs it): DIR/man/boxd*.1.gz, one page per command,
// and DIR/completions/{bash/boxd,zsh/_boxd,fish/boxd.fish}. Hidden: it
// is a build step, not an operator's command.
func newDocs() *cobra.Command {
	cmd := &cobra.Command{
		Use:    "docs DIR",
		Short:  "Write the manual pages and shell completions the package ships into DIR",
		Args:   cobra.ExactArgs(1),
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return writeDocs(cmd.Root(), args[0])
		},
	}
	return cmd
}

// docsDate is the manual pages' date: fixed, so that a package built twice
// from one version is the same bytes.
var docsDate = time.Date(2026, 9, 23, 0, 0, 0, 0, time.UTC)

func writeDocs(root *cobra.Command, dir string) error {
	man := filepath.Join(dir, "man")
	if err := os.MkdirAll(man, 0o755); err != nil {
		return fmt.Errorf("docs: %w", err)
	}
	root.DisableAutoGenTag = true
	hdr := &doc.GenManHeader{Title: "BOXD", Section: "1", Date: &docsDate, Source: "boxd " + version.Version, Manual: "boxd manual"}
	if err := doc.GenManTree(root, hdr, man); err != nil {
		return fmt.Errorf("docs: manual pages: %w", err)
	}
	pages, err := filepath.Glob(filepath.Join(man, "*.1"))
	if err != nil {
		return fmt.Errorf("docs: %w", err)
	}
	for _, p := range pages {
		if err := gzipFile(p); err != nil {
			return err
		}
	}
	for _, c := range []struct {
		shell, name string
		gen         func(*bytes.Buffer) error
	}{
		{"bash", "boxd", func(b *bytes.Buffer) error { return root.GenBashCompletionV2(b, true) }},
		{"zsh", "_boxd", func(b *bytes.Buffer) error { return root.GenZshCompletion(b) }},
		{"fish", "boxd.fish", func(b *bytes.Buffer) error { return root.GenFishCompletion(b, true) }},
	} {
		var b bytes.Buffer
		if err := c.gen(&b); err != nil {
			return fmt.Errorf("docs: %s completion: %w", c.shell, err)
		}
		d := filepath.Join(dir, "completions", c.shell)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("docs: %w", err)
		}
		if err := os.WriteFile(filepath.Join(d, c.name), b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("docs: %w", err)
		}
	}
	return nil
}

// gzipFile replaces p with p.gz, compressed as Debian's policy asks of
// manual pages (best compression, no name or time in the header).
func gzipFile(p string) error {
	raw, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("docs: %w", err)
	}
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if _, err := zw.Write(raw); err != nil {
		return fmt.Errorf("docs: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("docs: %w", err)
	}
	if err := os.WriteFile(p+".gz", b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("docs: %w", err)
	}
	if err := os.Remove(p); err != nil {
		return fmt.Errorf("docs: %w", err)
	}
	return nil
}
