package models

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"boxd/cmd/boxd/cli"
	"boxd/configs"
	"boxd/engine/models"
	"boxd/engine/models/pull"
)

// configuredModel is one model file the configuration names.
type configuredModel struct {
	Role string `json:"role"`
	Key  string `json:"key"`
	Path string `json:"path"`
}

// configuredModels lists every model role with the file cfg names for it
// ("" when unset; the VAD falls back to the packaged file when it is there).
func configuredModels(cfg *configs.Config) []configuredModel {
	return []configuredModel{
		{"llm", "models.llm.path", cfg.Models.LLM.Path},
		{"projector", "models.llm.projector", cfg.Models.LLM.Projector},
		{"asr", "models.asr.path", cfg.Models.ASR.Path},
		{"vad", "models.vad.path", cfg.VADPath()},
		{"embedder", "models.embedder.path", cfg.Models.Embedder.Path},
		{"reranker", "models.reranker.path", cfg.Models.Reranker.Path},
		{"diarizer", "models.diarizer.path", cfg.Models.Diarizer.Path},
		{"diarizer-embedding", "models.diarizer.embedding_path", cfg.Models.DiarizerEmbedding.Path},
	}
}

// modelListing is one row of `boxd models list`.
type modelListing struct {
	configuredModel
	Status      string `json:"status"` // not set, missing, present
	Bytes       int64  `json:"bytes,omitempty"`
	Files       int    `json:"files,omitempty"`
	WeightsRoot string `json:"weights_root,omitempty"` // from the hash cache only
	Catalogue   string `json:"catalogue,omitempty"`    // the catalogue entry this file is
}

// modelsListing is `boxd models list --json`.
type modelsListing struct {
	Config     string         `json:"config,omitempty"` // the file read ("" built-in defaults)
	ModelsDir  string         `json:"models_dir"`
	Configured []modelListing `json:"configured"`
	Catalogue  []catalogueRow `json:"catalogue"`
}

func newModelsList() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the model files the configuration names and the catalogue's models: which are pulled, which configured",
		Long: `List the model files the configuration names (models.*.path), whether each is
there, its size, its weights root when boxd has hashed it before (boxd serve
and boxd models verify remember hashes in the state directory), and the catalogue
model it is, if any. Then list the catalogue (boxd models catalogue): whether each
model is in the models folder (state_dir/models: present, partial, damaged or
missing) and whether the configuration names it. list reads no model file in
full; "unverified" means run boxd models verify.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := configs.Load(cmd.Flags())
			if err != nil {
				return cli.ConfigError{Err: err}
			}
			c, err := catalogueOf(cmd)
			if err != nil {
				return err
			}
			hashes := models.OpenHashCache(cfg.StateDir)
			var rows []modelListing
			for _, m := range configuredModels(cfg) {
				rows = append(rows, listModel(hashes, m))
			}
			entries := catalogueRows(c, cfg, hashes, rows)
			if asJSON {
				return cli.PrintJSON(cmd.OutOrStdout(), modelsListing{Config: cfg.File, ModelsDir: modelsDir(cfg), Configured: rows, Catalogue: entries})
			}
			from := "built-in defaults"
			if cfg.File != "" {
				from = cfg.File
			}
			fmt.Fprintf(cmd.OutOrStdout(), "CONFIGURED (%s)\n", from)
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ROLE\tSTATUS\tSIZE\tWEIGHTS ROOT\tCATALOGUE\tPATH")
			for _, r := range rows {
				size, root := "-", "-"
				if r.Status == "present" {
					size = humanBytes(r.Bytes)
					if r.Files > 1 {
						size += fmt.Sprintf(" in %d files", r.Files)
					}
					root = r.WeightsRoot
					if root == "" {
						root = "unverified"
					}
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Role, r.Status, size, root, cmpOrDash(r.Catalogue), cmpOrDash(r.Path))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			return printCatalogueRows(cmd.OutOrStdout(), modelsDir(cfg), entries)
		},
	}
	configs.RegisterFileFlags(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	catalogueFlag(cmd)
	return cmd
}

func listModel(hashes *models.HashCache, m configuredModel) modelListing {
	row := modelListing{configuredModel: m, Status: "not set"}
	if m.Path == "" {
		return row
	}
	files, err := models.FilesOf(m.Path)
	// The configuration already refused a path that is not a regular
	// file; what is missing here is a part of a split model, or a file
	// removed since.
	if err != nil {
		row.Status = "missing"
		return row
	}
	var manifest []models.ManifestFile
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil || !st.Mode().IsRegular() {
			row.Status = "missing"
			return row
		}
		row.Bytes += st.Size()
		if sum := hashes.Cached(f); sum != "" {
			manifest = append(manifest, models.ManifestFile{Name: filepath.Base(f), Size: st.Size(), SHA256: sum})
		}
	}
	row.Status, row.Files = "present", len(files)
	if len(manifest) == len(files) {
		if root, err := models.RootOf(manifest); err == nil {
			row.WeightsRoot = root.Root
		}
	}
	return row
}

func cmpOrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// errVerifyFailed makes `boxd models verify` exit 1 after its report.
var errVerifyFailed = errors.New("models: verification failed")

func newModelsVerify() *cobra.Command {
	var sum string
	cmd := &cobra.Command{
		Use:   "verify [FILE...]",
		Short: "Hash model files in full, print their weights roots, and report files whose bytes changed",
		Long: `Read every file of each model in full and print its weights root (the root
receipts carry). Without FILE, verify every model the configuration names. A file
whose bytes differ from the hash boxd remembered for it although its size and
timestamps did not change (disk corruption) is reported and the command exits 1.
With --sha256 (one FILE), the file's SHA-256 must equal it.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := configs.Load(cmd.Flags())
			if err != nil {
				return cli.ConfigError{Err: err}
			}
			var targets []configuredModel
			if len(args) == 0 {
				for _, m := range configuredModels(cfg) {
					if m.Path != "" {
						targets = append(targets, m)
					}
				}
				if len(targets) == 0 {
					return cli.ConfigError{Err: fmt.Errorf("no model files are configured (models.*.path); name files to verify: boxd models verify FILE")}
				}
			} else {
				for _, a := range args {
					targets = append(targets, configuredModel{Role: "file", Path: a})
				}
			}
			var want string
			if sum != "" {
				if len(targets) != 1 {
					return fmt.Errorf("--sha256 checks one file: name exactly one FILE")
				}
				if want, err = pull.ParseSHA256(sum); err != nil {
					return err
				}
			}
			hashes := models.OpenHashCache(cfg.StateDir)
			out, failed := cmd.OutOrStdout(), false
			for _, m := range targets {
				start := time.Now()
				root, bad, err := hashes.Verify(cmd.Context(), m.Path)
				if err != nil {
					fmt.Fprintf(out, "FAILED  %s  %s: %v; check the path and that this user can read the file (run as boxd on an installed box)\n", m.Role, m.Path, err)
					failed = true
					continue
				}
				for _, b := range bad {
					fmt.Fprintf(out, "CHANGED %s  %s: sha256 was %s, is now %s although its size and timestamps did not change (disk corruption?); restore it from a good copy\n", m.Role, b.Path, b.Cached, b.Actual)
					failed = true
				}
				if want != "" {
					if len(root.Files) != 1 || root.Files[0].SHA256 != want {
						got := root.Files[0].SHA256
						if len(root.Files) != 1 {
							got = fmt.Sprintf("a split model of %d files", len(root.Files))
						}
						fmt.Fprintf(out, "MISMATCH %s: sha256 %s, expected %s\n", m.Path, got, want)
						failed = true
						continue
					}
				}
				if len(bad) == 0 {
					var size int64
					for _, f := range root.Files {
						size += f.Size
					}
					fmt.Fprintf(out, "OK      %s  %s  %s  weights_root %s  (%s)\n", m.Role, m.Path, humanBytes(size), root.Root, time.Since(start).Round(time.Millisecond))
				}
			}
			if err := hashes.Save(); err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "boxd: could not remember the hashes: %v\n", err)
			}
			if failed {
				return errVerifyFailed
			}
			return nil
		},
	}
	configs.RegisterFileFlags(cmd.Flags())
	cmd.Flags().StringVar(&sum, "sha256", "", "expected SHA-256 of the one FILE")
	return cmd
}

func newModelsPull() *cobra.Command {
	var (
		sum, mirror string
		headers     []string
		force       bool
	)
	cmd := &cobra.Command{
		Use:   "pull NAME | URL [DEST]",
		Short: "Download a catalogue model by name, or a model file by URL, with resume, a progress bar and a SHA-256 check",
		Long: `Download a model into the models folder of the state directory.

  boxd models pull NAME       every file of the catalogue model NAME (boxd models
                              catalogue lists them): the model and, for a chat
                              model, its vision projector; a whisper.cpp file is
                              converted to GGUF after it arrives. Each file's
                              SHA-256 is the catalogue's. With models.mirror set
                              (or --mirror), files come from MIRROR/FILE instead
                              of their publishers, for boxes without internet.
  boxd models pull URL [DEST] one file from its publisher's or your mirror's URL
                              into DEST (a file, or a directory for the URL's file
                              name); --sha256 is required.

The bytes go to FILE.part; if the transfer stops, run the same command again and
it continues where it stopped. FILE appears only when the whole file matches its
SHA-256. The hash is remembered, so the first boxd serve with the file does not
read it again. Then: boxd models use ROLE NAME (or set models.*.path).`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := configs.Load(cmd.Flags())
			if err != nil {
				return cli.ConfigError{Err: err}
			}
			h := http.Header{}
			for _, kv := range headers {
				k, v, ok := strings.Cut(kv, ":")
				if !ok || strings.TrimSpace(k) == "" {
					return fmt.Errorf("--header %q: write it as 'Name: value'", redactHeader(kv))
				}
				h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
			}
			if !strings.Contains(args[0], "://") {
				c, err := catalogueOf(cmd)
				if err != nil {
					return err
				}
				e, ok := c.Lookup(args[0])
				if !ok {
					return unknownModel(c, args[0])
				}
				if len(args) == 2 || sum != "" {
					return fmt.Errorf("boxd models pull %s takes no DEST or --sha256: the catalogue gives each file's SHA-256, and files go to %s, where boxd models use finds them", e.Name, modelsDir(cfg))
				}
				if mirror != "" {
					if err := configs.CheckMirror(mirror); err != nil {
						return fmt.Errorf("--mirror: %w", err)
					}
				}
				return pullEntry(cmd, cfg, e, mirror, h, force)
			}
			if u, err := url.Parse(args[0]); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("%q is not a URL: boxd models pull downloads a catalogue model by name (boxd models catalogue) or one model file from the http(s) URL its publisher or your mirror serves it at, checked against its SHA-256, e.g.\n  boxd models pull https://huggingface.co/ORG/REPO/resolve/main/FILE.gguf --sha256 HEX", pull.Redact(args[0]))
			}
			if mirror != "" {
				return fmt.Errorf("--mirror applies to catalogue names; give the mirror's own URL instead")
			}
			want, err := pull.ParseSHA256(sum)
			if err != nil {
				return err
			}
			dest := modelsDir(cfg)
			if len(args) == 2 {
				dest = args[1]
			}
			if st, err := os.Stat(dest); (err == nil && st.IsDir()) || strings.HasSuffix(dest, string(filepath.Separator)) || len(args) == 1 {
				name := urlBase(args[0])
				if name == "" {
					return fmt.Errorf("%s names no file: give DEST as a file path", pull.Redact(args[0]))
				}
				dest = filepath.Join(dest, name)
			}
			bar := newProgress(cmd.ErrOrStderr())
			res, err := pull.File(cmd.Context(), pull.Options{URL: args[0], Dest: dest, SHA256: want, Header: h, Force: force, Progress: bar.update})
			bar.finish()
			if err != nil {
				return err
			}
			hashes := models.OpenHashCache(cfg.StateDir)
			if err := hashes.Remember(res.Path, res.SHA256); err == nil {
				if err := hashes.Save(); err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "boxd: could not remember the hash (serve will read the file once): %v\n", err)
				}
			}
			root, err := models.RootOf([]models.ManifestFile{{Name: filepath.Base(res.Path), Size: res.Size, SHA256: res.SHA256}})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "%s\n", res.Path)
			fmt.Fprintf(out, "size          %s (%d bytes", humanBytes(res.Size), res.Size)
			if res.Resumed > 0 {
				fmt.Fprintf(out, ", %d resumed", res.Resumed)
			}
			fmt.Fprintf(out, ")\nsha256        %s (checked)\n", res.SHA256)
			if !strings.Contains(filepath.Base(res.Path), "-of-") {
				fmt.Fprintf(out, "weights root  %s\n", root.Root)
			}
			fmt.Fprintf(out, "next          set the role's models.*.path to it in %s and restart boxd (boxd models list shows what is configured)\n", cmp.Or(cfg.File, configs.DefaultFile))
			return nil
		},
	}
	configs.RegisterFileFlags(cmd.Flags())
	cmd.Flags().StringVar(&sum, "sha256", "", "URL: expected SHA-256 of the file (required)")
	cmd.Flags().StringVar(&mirror, "mirror", "", "NAME: base URL to fetch the catalogue's files from (MIRROR/FILE), overriding models.mirror")
	cmd.Flags().StringArrayVar(&headers, "header", nil, "request header 'Name: value' (repeatable), e.g. a mirror's Authorization")
	cmd.Flags().BoolVar(&force, "force", false, "download again and replace files that are there")
	catalogueFlag(cmd)
	return cmd
}

// urlBase is the file name at the end of a URL's path.
func urlBase(raw string) string {
	r := pull.Redact(raw)
	i := strings.Index(r, "://")
	if i < 0 {
		return ""
	}
	p := r[i+3:]
	j := strings.IndexByte(p, '/')
	if j < 0 {
		return ""
	}
	name := path.Base(p[j:])
	if name == "/" || name == "." || name == ".." {
		return ""
	}
	return name
}

// redactHeader keeps a header's name only (values are often credentials).
func redactHeader(kv string) string {
	if k, _, ok := strings.Cut(kv, ":"); ok {
		return k + ": …"
	}
	if len(kv) > 12 {
		return kv[:4] + "…"
	}
	return kv
}

// progress draws a download's progress on a terminal (one line redrawn), or
// prints a line every tenth of the file elsewhere (logs, pipes).
type progress struct {
	w        io.Writer
	tty      bool
	start    time.Time
	last     time.Time
	lastTen  int64
	drawn    bool
	from     int64
	haveFrom bool
}

func newProgress(w io.Writer) *progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &progress{w: w, tty: tty, start: time.Now(), lastTen: -1}
}

func (p *progress) update(have, total int64) {
	if !p.haveFrom {
		p.from, p.haveFrom = have, true
	}
	now := time.Now()
	rate := float64(have-p.from) / max(now.Sub(p.start).Seconds(), 1e-3)
	if p.tty {
		if now.Sub(p.last) < 100*time.Millisecond && have != total {
			return
		}
		p.last = now
		if total > 0 {
			const width = 30
			done := int(float64(width) * float64(have) / float64(total))
			fmt.Fprintf(p.w, "\r[%s%s] %3.0f%%  %s / %s  %s/s   ", strings.Repeat("=", done), strings.Repeat(" ", width-done),
				100*float64(have)/float64(total), humanBytes(have), humanBytes(total), humanBytes(int64(rate)))
		} else {
			fmt.Fprintf(p.w, "\r%s  %s/s   ", humanBytes(have), humanBytes(int64(rate)))
		}
		p.drawn = true
		return
	}
	if total <= 0 {
		return
	}
	if ten := 10 * have / total; ten != p.lastTen {
		p.lastTen = ten
		fmt.Fprintf(p.w, "pull: %d%% (%s of %s, %s/s)\n", ten*10, humanBytes(have), humanBytes(total), humanBytes(int64(rate)))
	}
}

func (p *progress) finish() {
	if p.drawn {
		fmt.Fprintln(p.w)
	}
}
