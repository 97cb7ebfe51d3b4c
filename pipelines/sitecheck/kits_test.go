package sitecheck

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"boxd/pipelines/sitecheck/pagecheck"
	"boxd/pipelines/sitecheck/replyguard"
	"boxd/pipelines/sitecheck/robots"
)

// kitFixtures maps each shared fixture file to its kit function.
var kitFixtures = []struct{ file, fn string }{
	{"robots_access.json", "robotsAccess"},
	{"check_page_jsonld.json", "checkPageJsonLd"},
	{"validate_schema.json", "validateSchemaLocally"},
	{"check_live_meta.json", "checkLiveMeta"},
	{"meaningful_alt.json", "hasMeaningfulAltText"},
	{"llms_txt.json", "llmsTxtCheck"},
	{"generate_schema_markup.json", "generateSchemaMarkup"},
	{"check_reply.json", "checkReply"},
	{"is_healthcare_business.json", "isHealthcareBusiness"},
	// Bad inputs: each case names its function ("fn"); the three
	// implementations must refuse them with the same words.
	{"kit_errors.json", "-"},
}

const fixtureDir = "../../testdata/sitecheck"

var updateErrors = flag.Bool("update-kit-errors", false, "rewrite the wants of kit_errors.json from the Go kit")

// TestKitErrorsFixture checks the Go kit against kit_errors.json: every case
// is refused (an {"error"} result); -update-kit-errors rewrites the wants.
func TestKitErrorsFixture(t *testing.T) {
	path := filepath.Join(fixtureDir, "kit_errors.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cases []kitCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	outs := goOutputs(t, cases, "-")
	for i, c := range cases {
		m, ok := outs[i].(map[string]string)
		if !ok || m["error"] == "" {
			t.Errorf("%s: accepted: %v", c.Name, outs[i])
			continue
		}
		if *updateErrors {
			cases[i].Want, _ = json.Marshal(m)
			continue
		}
		if !reflect.DeepEqual(normal(t, c.Want), normal(t, mustJSON(t, m))) {
			t.Errorf("%s: got %v, want %s", c.Name, m, c.Want)
		}
	}
	if *updateErrors {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", " ")
		if err := enc.Encode(cases); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// goKit is every Go kit function by name.
func goKit() map[string]func(json.RawMessage) (any, error) {
	all := map[string]func(json.RawMessage) (any, error){}
	for _, m := range []map[string]func(json.RawMessage) (any, error){robots.KitFunctions(), pagecheck.KitFunctions(), replyguard.KitFunctions()} {
		for k, v := range m {
			all[k] = v
		}
	}
	return all
}

type kitCase struct {
	Name  string          `json:"name"`
	Fn    string          `json:"fn,omitempty"`
	Input json.RawMessage `json:"input"`
	Want  json.RawMessage `json:"want"`
}

// goOutputs runs the Go kit over a fixture file the way the CLIs do.
func goOutputs(t *testing.T, cases []kitCase, fn string) []any {
	kit := goKit()
	var out []any
	for _, c := range cases {
		name := fn
		if fn == "-" {
			name = c.Fn
		}
		f := kit[name]
		if f == nil {
			t.Fatalf("%s: no Go kit function %q", c.Name, name)
		}
		v, err := f(c.Input)
		if err != nil {
			v = map[string]string{"error": err.Error()}
		}
		out = append(out, v)
	}
	return out
}

// normal decodes JSON into comparable values (numbers as json.Number).
func normal(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %.200s: %v", data, err)
	}
	return v
}

func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing (make deps installs it): %v", name, err)
		}
		t.Skipf("%s is missing; run make deps", name)
	}
	return p
}

// TestKitsAgree runs the Go, TypeScript and Python kits over every shared
// fixture and requires identical results, equal to the fixture's want.
func TestKitsAgree(t *testing.T) {
	node, python := needTool(t, "node"), needTool(t, "python3")
	tsDir, _ := filepath.Abs("../../kits/ts")
	pyDir, _ := filepath.Abs("../../kits/python")
	if _, err := os.Stat(filepath.Join(tsDir, "node_modules", "typescript")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("kits/ts/node_modules is missing: make deps installs it")
		}
		t.Skip("kits/ts/node_modules is missing; run make deps")
	}
	build := exec.Command(node, "node_modules/typescript/bin/tsc", "-p", "tsconfig.json")
	build.Dir = tsDir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("tsc: %v\n%s", err, out)
	}
	for _, kf := range kitFixtures {
		t.Run(kf.file, func(t *testing.T) {
			path, _ := filepath.Abs(filepath.Join(fixtureDir, kf.file))
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var cases []kitCase
			if err := json.Unmarshal(data, &cases); err != nil {
				t.Fatal(err)
			}
			if len(cases) == 0 {
				t.Fatal("no cases")
			}
			goJSON, err := json.Marshal(goOutputs(t, cases, kf.fn))
			if err != nil {
				t.Fatal(err)
			}
			run := func(dir string, args ...string) []byte {
				cmd := exec.Command(args[0], args[1:]...)
				cmd.Dir = dir
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("%v: %v\n%s", args, err, stderr.Bytes())
				}
				return out
			}
			impls := map[string][]any{
				"go":         normal(t, goJSON).([]any),
				"typescript": normal(t, run(tsDir, node, "dist/src/cli.js", path, kf.fn)).([]any),
				"python":     normal(t, run(pyDir, python, "-m", "boxd_sitecheck.cli", path, kf.fn)).([]any),
			}
			for name, outs := range impls {
				if len(outs) != len(cases) {
					t.Fatalf("%s: %d results for %d cases", name, len(outs), len(cases))
				}
			}
			bad := 0
			for i, c := range cases {
				want := normal(t, c.Want)
				for _, name := range []string{"go", "typescript", "python"} {
					if got := impls[name][i]; !reflect.DeepEqual(got, want) {
						bad++
						if bad <= 10 {
							g, _ := json.Marshal(got)
							t.Errorf("%s: %s differs from want\n got %.600s\nwant %.600s", c.Name, name, g, c.Want)
						}
					}
				}
			}
			if bad > 10 {
				t.Errorf("%d differences in all", bad)
			}
		})
	}
}
