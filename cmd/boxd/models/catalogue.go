package models

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"boxd/cmd/boxd/cli"
	"boxd/configs"
	"boxd/engine/models"
	"boxd/engine/models/catalogue"
	"boxd/engine/models/catalogue/install"
)

// catalogueFlag adds the hidden --catalogue FILE flag (a JSON catalogue
// that replaces the built-in one: tests, and sites with their own list).
func catalogueFlag(cmd *cobra.Command) {
	cmd.Flags().String("catalogue", "", "JSON catalogue to use instead of the built-in one")
	_ = cmd.Flags().MarkHidden("catalogue")
}

// catalogueOf is the catalogue the command's --catalogue names (default
// the built-in one).
func catalogueOf(cmd *cobra.Command) (catalogue.Catalogue, error) {
	file, _ := cmd.Flags().GetString("catalogue")
	if file == "" {
		return catalogue.Builtin(), nil
	}
	return catalogue.Load(file)
}

// modelsDir is where pulls put files and where use looks for them.
func modelsDir(cfg *configs.Config) string { return filepath.Join(cfg.StateDir, "models") }

// unknownModel is the error for a name the catalogue lacks.
func unknownModel(c catalogue.Catalogue, name string) error {
	hint := ""
	if s := c.Suggest(name); s != "" {
		hint = fmt.Sprintf("; did you mean %s?", s)
	}
	return fmt.Errorf("%q is not a model in boxd's catalogue%s (boxd models catalogue lists them). A file the catalogue lacks is pulled by its URL: boxd models pull https://HOST/PATH/FILE.gguf --sha256 HEX", name, hint)
}

func sizeOrUnpinned(n int64, known bool) string {
	switch {
	case n == 0:
		return "not pinned"
	case !known:
		return humanBytes(n) + "+"
	}
	return humanBytes(n)
}

func newModelsCatalogue() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "catalogue [NAME]",
		Short: "List the models boxd knows by name (boxd models pull NAME), or one model's files, URLs and SHA-256s",
		Long: `List the open models boxd knows by name, for each role: chat (with its vision
projector where it has one), speech (Whisper, converted to GGUF after the pull),
voice activity detection, embedder and reranker, with their licences and sizes.
"not pinned" means no public pin gave the size: the pull checks the SHA-256 alone.
With NAME, print that model's files: publisher URL, SHA-256 and size (what a
mirror must serve, under the file's name).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := catalogueOf(cmd)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if len(args) == 1 {
				e, ok := c.Lookup(args[0])
				if !ok {
					return unknownModel(c, args[0])
				}
				if asJSON {
					return cli.PrintJSON(out, e)
				}
				return printEntry(out, e)
			}
			if asJSON {
				return cli.PrintJSON(out, c.Sorted())
			}
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tROLE\tSIZE\tLICENCE\tWHAT")
			for _, e := range c.Sorted() {
				n, known := e.Size()
				what := e.Summary
				if e.Test {
					what = "[test] " + what
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.Name, e.Role, sizeOrUnpinned(n, known), e.Licence, what)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	catalogueFlag(cmd)
	return cmd
}

func printEntry(out io.Writer, e catalogue.Entry) error {
	fmt.Fprintf(out, "%s (%s): %s\nlicence  %s\n", e.Name, e.Role, e.Summary, e.Licence)
	for _, f := range e.Files {
		fmt.Fprintf(out, "%s  %s\n  url     %s\n  sha256  %s\n  size    %s\n", f.Kind, f.Name, f.URL, f.SHA256, sizeOrUnpinned(f.Size, f.Size > 0))
		if f.Convert != "" {
			fmt.Fprintf(out, "  then    converted to %s (boxd models convert), the file boxd loads\n", f.Installed())
		}
	}
	for k, v := range e.Settings {
		fmt.Fprintf(out, "setting  %s: %s (boxd models use writes it)\n", k, v)
	}
	return nil
}

// pullEntry is `boxd models pull NAME`.
func pullEntry(cmd *cobra.Command, cfg *configs.Config, e catalogue.Entry, mirror string, h http.Header, force bool) error {
	if mirror == "" {
		mirror = cfg.Models.Mirror
	}
	dir := modelsDir(cfg)
	hashes := models.OpenHashCache(cfg.StateDir)
	errOut, out := cmd.ErrOrStderr(), cmd.OutOrStdout()
	var bar *progress
	res, err := install.Pull(cmd.Context(), e, install.Options{
		Dir: dir, Mirror: mirror, Header: h, Force: force, Hashes: hashes,
		Note: func(msg string) { fmt.Fprintf(errOut, "pull: %s\n", msg) },
		Progress: func(catalogue.File) func(int64, int64) {
			if bar != nil {
				bar.finish()
			}
			bar = newProgress(errOut)
			return bar.update
		},
	})
	if bar != nil {
		bar.finish()
	}
	if serr := hashes.Save(); serr != nil {
		fmt.Fprintf(errOut, "boxd: could not remember the hashes (serve will read the files once): %v\n", serr)
	}
	if err != nil {
		if mirror != "" {
			return fmt.Errorf("%s: %w (from the mirror %s: it must serve each file under its name, boxd models catalogue %s lists them)", e.Name, err, redactMirror(mirror), e.Name)
		}
		return fmt.Errorf("%s: %w", e.Name, err)
	}
	fmt.Fprintf(out, "%s (%s, licence %s)\n", e.Name, e.Role, e.Licence)
	for _, r := range res {
		how := "already there, sha256 checked"
		switch {
		case r.Fetched && r.Resumed > 0:
			how = fmt.Sprintf("downloaded, %d bytes resumed, sha256 checked", r.Resumed)
		case r.Fetched:
			how = "downloaded, sha256 checked"
		case r.Source == "":
			how = "already there"
		}
		size := humanBytes(r.Size)
		if r.File.Size == 0 && r.Source != "" {
			size += " (size not pinned; the sha256 is)"
		}
		fmt.Fprintf(out, "  %-9s %s  %s  %s\n", r.File.Kind, r.Path, size, how)
		if r.Converted {
			fmt.Fprintf(out, "            converted from %s (sha256 %s)\n", r.Source, r.SHA256)
		} else if r.Source != "" {
			fmt.Fprintf(out, "            sha256 %s\n", r.SHA256)
		}
	}
	cfgArg := ""
	if cfg.File != "" && cfg.File != configs.DefaultFile {
		cfgArg = " --config " + cfg.File
	}
	fmt.Fprintf(out, "next: boxd models use %s %s%s, then restart boxd (sudo systemctl restart boxd)\n", e.Role, e.Name, cfgArg)
	return nil
}

func redactMirror(m string) string {
	if i := strings.IndexAny(m, "?#"); i >= 0 {
		m = m[:i]
	}
	if i := strings.Index(m, "@"); i >= 0 {
		if j := strings.Index(m, "://"); j >= 0 && j < i {
			m = m[:j+3] + m[i+1:]
		}
	}
	return m
}

// catalogueRow is one catalogue entry in `boxd models list`.
type catalogueRow struct {
	Name       string   `json:"name"`
	Role       string   `json:"role"`
	Licence    string   `json:"licence"`
	Bytes      int64    `json:"bytes,omitempty"` // pinned size (0: not pinned)
	State      string   `json:"state"`           // present, partial, damaged, missing
	Configured bool     `json:"configured"`
	Paths      []string `json:"paths"`
	Test       bool     `json:"test,omitempty"`
}

// catalogueRows lists every entry with whether it is in the models folder
// and whether the configuration names it; configured rows get the name of
// the entry they are.
func catalogueRows(c catalogue.Catalogue, cfg *configs.Config, hashes *models.HashCache, configured []modelListing) []catalogueRow {
	dir := modelsDir(cfg)
	byKey := map[string]*modelListing{}
	for i := range configured {
		byKey[configured[i].Key] = &configured[i]
	}
	var rows []catalogueRow
	for _, e := range c.Sorted() {
		st := install.StatusOf(dir, e)
		n, _ := e.Size()
		row := catalogueRow{Name: e.Name, Role: string(e.Role), Licence: e.Licence, Bytes: n, State: string(st.State), Paths: st.Paths, Test: e.Test}
		if m := byKey[e.Role.Key()]; m != nil && install.Matches(m.Path, dir, e.Model(), hashes) {
			row.Configured = true
			m.Catalogue = e.Name
			if p, ok := e.Projector(); ok {
				if pm := byKey[catalogue.ProjectorKey]; pm != nil && install.Matches(pm.Path, dir, p, hashes) {
					pm.Catalogue = e.Name
				}
			}
		}
		rows = append(rows, row)
	}
	return rows
}

func printCatalogueRows(w io.Writer, dir string, rows []catalogueRow) error {
	fmt.Fprintf(w, "\nCATALOGUE (boxd models pull NAME puts a model in %s; boxd models use ROLE NAME configures it)\n", dir)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tROLE\tSIZE\tSTATE\tCONFIGURED")
	for _, r := range rows {
		conf := "-"
		if r.Configured {
			conf = "yes"
		}
		state := r.State
		switch r.State {
		case string(install.Partial):
			state = "partial (pull again to resume)"
		case string(install.Damaged):
			state = "damaged (pull --force)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Name, r.Role, sizeOrUnpinned(r.Bytes, r.Bytes > 0), state, conf)
	}
	return tw.Flush()
}
