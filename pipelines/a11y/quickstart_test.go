package a11y

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"boxd/configs"
	"boxd/pipelines/a11y/axe"
)

// TestQuickStartAxe: make run passes boxd the rule engine npm-deps
// installs (--a11y-axe-dir, the Makefile's AXE_DIR under the checkout),
// so the quick start can audit: read from the Makefile, taken by the
// configuration as a11y.axe_dir over configs/boxd.yaml's, and loading as
// axe-core. The package's configuration (configs/boxd.yaml, installed as
// /etc/boxd/boxd.yaml) points a11y.axe_dir where packaging/nfpm.yaml
// installs axe-core's script and package.json.
func TestQuickStartAxe(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	recipe := regexp.MustCompile(`(?ms)^run: .*?\n\n`).Find(mk)
	flag := "--" + configs.FlagName("a11y.axe_dir")
	m := regexp.MustCompile(regexp.QuoteMeta(flag) + ` (\S+)`).FindSubmatch(recipe)
	axeDir := regexp.MustCompile(`(?m)^AXE_DIR := (\S+)$`).FindSubmatch(mk)
	if m == nil || axeDir == nil {
		t.Fatalf("the Makefile's run target does not pass %s (or AXE_DIR is gone):\n%s", flag, recipe)
	}
	dir := strings.NewReplacer("$(CURDIR)", root, "$(AXE_DIR)", string(axeDir[1])).Replace(string(m[1]))
	if !filepath.IsAbs(dir) || strings.Contains(dir, "$(") {
		t.Fatalf("make run's %s is %q: not an absolute path boxd can open from any directory", flag, dir)
	}
	load := func(args ...string) *configs.Config {
		t.Helper()
		fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		configs.RegisterFlags(fs)
		if err := fs.Parse(append([]string{"--config", filepath.Join(root, "configs", "boxd.yaml")}, args...)); err != nil {
			t.Fatal(err)
		}
		cfg, err := configs.Load(fs)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	if cfg := load(flag, dir); cfg.A11y.AxeDir != dir {
		t.Errorf("a11y.axe_dir %q from %s %s", cfg.A11y.AxeDir, flag, dir)
	}
	if _, err := axe.Load(dir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("make run's rule engine: %v", err)
		}
		t.Skipf("make run's rule engine is not installed here (make deps): %v", err)
	}
	packaged := load().A11y.AxeDir
	nfpm, err := os.ReadFile(filepath.Join(root, "packaging", "nfpm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"axe.min.js", "package.json"} {
		if !strings.Contains(string(nfpm), "dst: "+packaged+"/"+f+"\n") {
			t.Errorf("packaging/nfpm.yaml does not install %s in a11y.axe_dir (%s)", f, packaged)
		}
	}
	if !strings.Contains(string(nfpm), "src: configs/boxd.yaml\n    dst: /etc/boxd/boxd.yaml") {
		t.Error("packaging/nfpm.yaml no longer installs configs/boxd.yaml as the package's configuration")
	}
}
