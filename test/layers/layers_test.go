// Package layers checks that data flows one way through boxd's packages
// (docs/decisions.md, "Layout"): guards and admission, then pipelines, then
// engines, never back; the web core and its route families apart.
package layers

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// imports lists every package of the module with its non-test imports
// inside the module.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(filepath.Dir(file)))
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		var own []string
		for _, imp := range f[1:] {
			if imp == "boxd" || strings.HasPrefix(imp, "boxd/") {
				own = append(own, imp)
			}
		}
		pkgs[f[0]] = own
	}
	return pkgs
}

func under(pkg, dir string) bool {
	return pkg == "boxd/"+dir || strings.HasPrefix(pkg, "boxd/"+dir+"/")
}

// family is the route family of a web/routes package ("" for none).
func family(pkg string) string {
	rest, ok := strings.CutPrefix(pkg, "boxd/web/routes/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return name
}

// violation says why pkg must not import imp ("" when it may).
func violation(pkg, imp string) string {
	switch {
	case under(pkg, "internal") && !under(pkg, "internal/daemon") && (under(imp, "web") || under(imp, "pipelines") || under(imp, "cmd")):
		return "the run model and trust plumbing import no web, pipeline or command"
	case under(pkg, "engine") && (under(imp, "pipelines") || under(imp, "web") || under(imp, "cmd") || under(imp, "internal/daemon")):
		return "engines import no pipeline, web or command"
	case under(pkg, "pipelines") && (under(imp, "web") || under(imp, "cmd") || under(imp, "internal/daemon")):
		return "pipelines import no web or command"
	case under(pkg, "web") && family(pkg) == "" && family(imp) != "":
		return "the web core, admission and guards know no route family"
	case family(pkg) != "" && family(imp) != "" && family(imp) != family(pkg):
		return "a route family imports no other family"
	case family(pkg) != "" && (imp == "boxd/web" || under(imp, "internal/daemon") || under(imp, "cmd")):
		return "a route family imports no web core, composition root or command"
	case under(imp, "internal/daemon") && !under(pkg, "cmd"):
		return "only the command imports the composition root"
	case family(imp) != "" && family(pkg) == "" && !under(pkg, "internal/daemon") && !under(pkg, "cmd"):
		return "only the composition root mounts route families"
	}
	return ""
}

func TestLayering(t *testing.T) {
	pkgs := imports(t)
	if len(pkgs) < 50 {
		t.Fatalf("only %d packages listed", len(pkgs))
	}
	for pkg, imps := range pkgs {
		for _, imp := range imps {
			if why := violation(pkg, imp); why != "" {
				t.Errorf("%s imports %s: %s", pkg, imp, why)
			}
		}
	}
}

// TestViolations: the rule refuses what it must and allows the layers'
// own imports.
func TestViolations(t *testing.T) {
	for _, c := range []struct {
		pkg, imp string
		bad      bool
	}{
		{"boxd/web/routes/fill", "boxd/web/routes/platform", true},
		{"boxd/web/routes/fill", "boxd/web", true},
		{"boxd/web/routes/fill", "boxd/web/api", false},
		{"boxd/web", "boxd/web/routes/chat", true},
		{"boxd/web/api", "boxd/web/routes/chat", true},
		{"boxd/pipelines/fill", "boxd/web/api", true},
		{"boxd/engine/llm", "boxd/pipelines/llmcall", true},
		{"boxd/internal/run", "boxd/pipelines/llmcall", true},
		{"boxd/internal/daemon", "boxd/web/routes/chat", false},
		{"boxd/internal/daemon", "boxd/pipelines/chat", false},
		{"boxd/pipelines/chat", "boxd/internal/daemon", true},
		{"boxd/cmd/boxd", "boxd/internal/daemon", false},
		{"boxd/pipelines/fill", "boxd/engine/browser", false},
	} {
		if got := violation(c.pkg, c.imp) != ""; got != c.bad {
			t.Errorf("%s imports %s: refused %v, want %v", c.pkg, c.imp, got, c.bad)
		}
	}
}
