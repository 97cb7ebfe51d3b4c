// Package packaging_test builds boxd's .deb with nfpm and checks its
// contents, its control data and its maintainer scripts by installing,
// upgrading, removing and purging it in a scratch root with dpkg.
package packaging_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"boxd/engine/models/testmodels"
)

func repoRoot(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// need finds a tool; under CI=true a missing tool fails the test.
func need(t *testing.T, name string, extra ...string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, p := range extra {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s not found (make deps installs it)", name)
	}
	t.Skipf("%s not found; run make deps", name)
	return ""
}

func sh(t *testing.T, dir string, env []string, name string, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), stderr.String()
}

var (
	debOnce sync.Once
	debPath string
	debErr  error
	debDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if debDir != "" {
		os.RemoveAll(debDir)
	}
	os.Exit(code)
}

// buildDeb builds the binary and the package the way `make deb` does, once
// for all tests of the package.
func buildDeb(t *testing.T) string {
	t.Helper()
	root := repoRoot(t)
	home, _ := os.UserHomeDir()
	nfpm := need(t, "nfpm", filepath.Join(home, ".cache", "boxd", "bin", "nfpm"))
	need(t, "dpkg-deb")
	data := os.Getenv("BOXD_TEST_DATA")
	if data == "" {
		data = filepath.Join(root, "..", "shared", "data")
	}
	if _, err := os.Stat(data); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("reference data missing: %v", err)
		}
		t.Skipf("reference data missing: %v", err)
	}
	vad := testmodels.Shared(t, "ggml-silero-v6.2.0.bin")
	if _, err := os.Stat(filepath.Join(root, axeDir, "axe.min.js")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("axe-core missing (make deps installs it): %v", err)
		}
		t.Skipf("axe-core missing: %v", err)
	}
	maintainer := makeMaintainer(t, root, "")
	debOnce.Do(func() { debPath, debErr = build(root, nfpm, data, vad, maintainer) })
	if debErr != nil {
		t.Fatal(debErr)
	}
	return debPath
}

// axeDir is where npm-deps installs the rule engine the package ships.
const axeDir = "pipelines/a11y/axe/npm/node_modules/axe-core"

func build(root, nfpm, data, vad, maintainer string) (string, error) {
	out, err := os.MkdirTemp("", "boxd-deb-")
	if err != nil {
		return "", err
	}
	debDir = out
	bin := filepath.Join(out, "boxd")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/boxd")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build -o %s ./cmd/boxd: %v\n%s", bin, err, b)
	}
	docs := filepath.Join(out, "pkgdocs")
	if b, err := exec.Command(bin, "docs", docs).CombinedOutput(); err != nil {
		return "", fmt.Errorf("boxd docs %s: %v\n%s", docs, err, b)
	}
	deb := filepath.Join(out, "boxd_0.1.0_amd64.deb")
	return deb, nfpmPackage(root, nfpm, bin, data, vad, maintainer, deb, docs)
}

// nfpmPackage packages bin as deb with the environment `make deb` gives
// nfpm.
func nfpmPackage(root, nfpm, bin, data, vad, maintainer, deb, docs string) error {
	cmd := exec.Command(nfpm, "package", "--config", "packaging/nfpm.yaml", "--packager", "deb", "--target", deb)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PKG_VERSION=0.1.0", "PKG_MAINTAINER="+maintainer, "PKG_BIN="+bin, "PKG_DATA="+data,
		"PKG_VAD="+vad, "PKG_AXE="+filepath.Join(root, axeDir), "PKG_DOCS="+docs)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nfpm package: %v\n%s", err, b)
	}
	return nil
}

func TestDebContentsAndScripts(t *testing.T) {
	deb := buildDeb(t)

	info, _ := sh(t, "", nil, "dpkg-deb", "--info", deb)
	for _, want := range []string{"Package: boxd", "Version: 0.1.0", "Architecture: amd64", "Depends: passwd, init-system-helpers",
		"conffiles", "preinst", "postinst", "prerm", "postrm"} {
		if !strings.Contains(info, want) {
			t.Errorf("dpkg-deb -I lacks %q:\n%s", want, info)
		}
	}
	conffiles, _ := sh(t, "", nil, "dpkg-deb", "--info", deb, "conffiles")
	if strings.TrimSpace(conffiles) != "/etc/boxd/boxd.yaml" {
		t.Errorf("conffiles = %q", conffiles)
	}

	list, _ := sh(t, "", nil, "dpkg-deb", "--contents", deb)
	for _, re := range []string{
		`-rwxr-xr-x root/root +\d+ \S+ \S+ \./usr/bin/boxd\n`,
		`drwxr-x--- root/boxd +0 \S+ \S+ \./etc/boxd/\n`,
		`-rw-r----- root/boxd +\d+ \S+ \S+ \./etc/boxd/boxd\.yaml\n`,
		`-rw-r--r-- root/root +\d+ \S+ \S+ \./lib/systemd/system/boxd\.service\n`,
		`\./usr/share/doc/boxd/README\.md\n`,
		`-rw-r--r-- root/root +\d+ \S+ \S+ \./usr/share/doc/boxd/copyright\n`,
		`-rw-r--r-- root/root +\d+ \S+ \S+ \./usr/share/doc/boxd/examples/network\.conf\n`, // the drop-in that opens the network
		`\./usr/share/boxd/data/icd10cm/icd10cm-codes-2026\.txt\.gz\n`,
		`\./usr/share/boxd/data/rxnorm/`,
		`\./usr/share/boxd/data/wcag/wcag\.json\n`,
		`-rw-r--r-- root/root +\d+ \S+ \S+ \./usr/share/boxd/axe-core/axe\.min\.js\n`,
		`-rw-r--r-- root/root +885098 \S+ \S+ \./usr/share/boxd/models/ggml-silero-v6\.2\.0\.bin\n`,
		`-rw-r--r-- root/root +\d+ \S+ \S+ \./usr/share/man/man1/boxd\.1\.gz\n`,
		`\./usr/share/man/man1/boxd-serve\.1\.gz\n`,
		`-rw-r--r-- root/root +\d+ \S+ \S+ \./usr/share/bash-completion/completions/boxd\n`,
		`\./usr/share/zsh/vendor-completions/_boxd\n`,
		`\./usr/share/fish/vendor_completions\.d/boxd\.fish\n`,
	} {
		if !regexp.MustCompile(re).MatchString(list) {
			t.Errorf("dpkg-deb -c lacks %s:\n%s", re, list)
		}
	}
	if strings.Contains(list, "var/lib/boxd") {
		t.Error("the package must not own /var/lib/boxd (systemd's StateDirectory does; dpkg would delete it on remove)")
	}

	postinst, _ := sh(t, "", nil, "dpkg-deb", "--info", deb, "postinst")
	starts := regexp.MustCompile(`^\s*(systemctl|deb-systemd-invoke)\s+(--\S+\s+)*(start|restart)\b`)
	for _, line := range strings.Split(postinst, "\n") {
		if starts.MatchString(line) {
			t.Errorf("postinst must enable the unit, not start it: %s", line)
		}
	}
	if !strings.Contains(postinst, "deb-systemd-helper enable boxd.service") {
		t.Error("postinst does not enable the unit")
	}
}

// scratchRoot makes an empty dpkg root with the host's user database.
func scratchRoot(t *testing.T) string {
	t.Helper()
	r := t.TempDir()
	for _, d := range []string{"var/lib/dpkg/info", "var/lib/dpkg/updates", "etc"} {
		if err := os.MkdirAll(filepath.Join(r, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(r, "var/lib/dpkg/status"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"passwd", "group", "shadow", "gshadow"} {
		b, err := os.ReadFile(filepath.Join("/etc", f))
		if err != nil {
			t.Fatal(err)
		}
		// Start without a boxd user even where the host has one.
		var keep []string
		for _, line := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(line, "boxd:") {
				keep = append(keep, line)
			}
		}
		if err := os.WriteFile(filepath.Join(r, "etc", f), []byte(strings.Join(keep, "\n")), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func dpkg(t *testing.T, root string, args ...string) (string, string) {
	t.Helper()
	base := []string{"--root=" + root, "--log=/dev/null", "--force-script-chrootless", "--force-depends"}
	return sh(t, "", nil, "dpkg", append(base, args...)...)
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// needScratchInstall skips (fails under CI=true) a test that installs the
// package into a scratch root when a tool it runs is missing or the test
// is not root (useradd --root).
func needScratchInstall(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range append([]string{"dpkg", "useradd", "deb-systemd-helper"}, tools...) {
		need(t, tool)
	}
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("installing into a scratch root needs root (useradd --root)")
		}
		t.Skip("installing into a scratch root needs root")
	}
}

func TestDebInstallUpgradeRemovePurge(t *testing.T) {
	needScratchInstall(t)
	deb := buildDeb(t)
	r := scratchRoot(t)

	// Install: user and group created, files in place, unit enabled.
	out, _ := dpkg(t, r, "-i", deb)
	if !strings.Contains(out, "enabled, not started") {
		t.Errorf("install output: %s", out)
	}
	passwd, _ := os.ReadFile(filepath.Join(r, "etc/passwd"))
	userLine := regexp.MustCompile(`(?m)^boxd:x:(\d+):(\d+):[^:]*:/var/lib/boxd:/usr/sbin/nologin$`).FindStringSubmatch(string(passwd))
	if userLine == nil {
		t.Fatalf("no boxd system user with home /var/lib/boxd and nologin:\n%s", passwd)
	}
	group, _ := os.ReadFile(filepath.Join(r, "etc/group"))
	if !regexp.MustCompile(`(?m)^boxd:x:` + userLine[2] + `:`).Match(group) {
		t.Errorf("no boxd group with gid %s", userLine[2])
	}
	st, err := os.Stat(filepath.Join(r, "usr/bin/boxd"))
	if err != nil || st.Mode().Perm() != 0o755 {
		t.Fatalf("/usr/bin/boxd: %v %v", err, st)
	}
	ver, _ := sh(t, "", nil, filepath.Join(r, "usr/bin/boxd"), "version")
	if !strings.HasPrefix(ver, "boxd 0.1.0") {
		t.Errorf("installed boxd version: %q", ver)
	}
	if st, err := os.Stat(filepath.Join(r, "etc/boxd")); err != nil || st.Mode().Perm() != 0o750 {
		t.Errorf("/etc/boxd: %v %v", err, st)
	}
	// The state directory exists before the first start (so the CLI can
	// pull models or create keys as boxd), as systemd would make it.
	if st, err := os.Stat(filepath.Join(r, "var/lib/boxd")); err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 ||
		fmt.Sprint(st.Sys().(*syscall.Stat_t).Uid) != userLine[1] || fmt.Sprint(st.Sys().(*syscall.Stat_t).Gid) != userLine[2] {
		t.Errorf("/var/lib/boxd after install: %v %+v; want a 0700 directory owned by boxd (%s:%s)", err, st, userLine[1], userLine[2])
	}
	// The packaged VAD is where models.vad.path defaults to, and it loads.
	vad := filepath.Join(r, "usr/share/boxd/models/ggml-silero-v6.2.0.bin")
	if out, _ := sh(t, "", nil, filepath.Join(r, "usr/bin/boxd"), "models", "convert", vad, filepath.Join(t.TempDir(), "vad.gguf")); !strings.Contains(out, "6.2.0") {
		t.Errorf("the installed VAD: %s", out)
	}
	wants := filepath.Join(r, "etc/systemd/system/multi-user.target.wants/boxd.service")
	if target, err := os.Readlink(wants); err != nil || target != "/lib/systemd/system/boxd.service" {
		t.Errorf("unit not enabled: %v %q", err, target)
	}

	// The operator edits the config; an upgrade (reinstall) keeps it.
	conf := filepath.Join(r, "etc/boxd/boxd.yaml")
	f, err := os.OpenFile(conf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("# operator's change\n")
	f.Close()
	dpkg(t, r, "-i", deb)
	if b, _ := os.ReadFile(conf); !strings.Contains(string(b), "# operator's change") {
		t.Error("upgrade replaced the operator's /etc/boxd/boxd.yaml")
	}
	passwd2, _ := os.ReadFile(filepath.Join(r, "etc/passwd"))
	if strings.Count(string(passwd2), "\nboxd:") != 1 {
		t.Error("upgrade created a second boxd user")
	}

	// The daemon's state: the signing key.
	key := filepath.Join(r, "var/lib/boxd/instance.key")
	if err := os.MkdirAll(filepath.Dir(key), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, []byte("key"), 0o600); err != nil {
		t.Fatal(err)
	}

	// Remove: program gone, state and config kept.
	out, _ = dpkg(t, r, "-r", "boxd")
	if exists(filepath.Join(r, "usr/bin/boxd")) {
		t.Error("remove left /usr/bin/boxd")
	}
	if !exists(key) {
		t.Fatal("remove deleted /var/lib/boxd: the signing key is gone")
	}
	if !exists(conf) {
		t.Error("remove deleted the conffile (only purge may)")
	}
	if !strings.Contains(out, "kept /var/lib/boxd") {
		t.Errorf("remove should say the state was kept: %s", out)
	}

	// Purge: the only path that deletes the state, with a warning.
	_, errOut := dpkg(t, r, "-P", "boxd")
	if exists(filepath.Join(r, "var/lib/boxd")) {
		t.Error("purge left /var/lib/boxd")
	}
	if exists(filepath.Join(r, "etc/boxd")) {
		t.Error("purge left /etc/boxd")
	}
	if !strings.Contains(errOut, "WARNING: purging deletes /var/lib/boxd") || !strings.Contains(errOut, "signing key") {
		t.Errorf("purge must warn about the signing key; stderr:\n%s", errOut)
	}
	if exists(wants) || exists(filepath.Join(r, "etc/systemd/system/boxd.service")) {
		t.Error("purge left systemd links behind")
	}

	// Install again after purge: the existing user is reused.
	dpkg(t, r, "-i", deb)
	if !exists(filepath.Join(r, "usr/bin/boxd")) {
		t.Error("reinstall after purge failed")
	}
}

// binOf is the boxd binary buildDeb packaged.
func binOf(deb string) string { return filepath.Join(filepath.Dir(deb), "boxd") }

// control reads one field of the package's control data ("" if absent).
func control(t *testing.T, deb, field string) string {
	t.Helper()
	out, _ := sh(t, "", nil, "dpkg-deb", "--field", deb, field)
	return strings.TrimSpace(out)
}

// depRe is one Depends entry: a package, and an optional version relation.
var depRe = regexp.MustCompile(`^([a-z0-9][a-z0-9+.-]*)(?:\s*\((>=|>>|=|<=|<<)\s*([^)\s]+)\))?$`)

func parseDepends(t *testing.T, s string) map[string][2]string {
	t.Helper()
	deps := map[string][2]string{}
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		m := depRe.FindStringSubmatch(e)
		if m == nil {
			t.Fatalf("cannot read dependency %q in %q", e, s)
		}
		deps[m[1]] = [2]string{m[2], m[3]}
	}
	return deps
}

// TestDebDependsOnSharedLibraries checks that Depends names every shared
// library package the binary needs, at least at the version
// dpkg-shlibdeps computes for it, and that this Debian satisfies them.
func TestDebDependsOnSharedLibraries(t *testing.T) {
	shlibdeps := need(t, "dpkg-shlibdeps")
	deb := buildDeb(t)
	depends := parseDepends(t, control(t, deb, "Depends"))

	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "debian"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "debian", "control"), []byte("Source: boxd\n\nPackage: boxd\nArchitecture: amd64\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ := sh(t, dir, nil, shlibdeps, "-O", "--warnings=0", binOf(deb))
	computed, ok := strings.CutPrefix(strings.TrimSpace(out), "shlibs:Depends=")
	if !ok || computed == "" {
		t.Fatalf("dpkg-shlibdeps: %q", out)
	}
	for _, lib := range []string{"libc6", "libstdc++6"} {
		if !strings.Contains(computed, lib) {
			t.Errorf("dpkg-shlibdeps does not list %s (%s): is the binary still linked with cgo?", lib, computed)
		}
	}
	for pkg, want := range parseDepends(t, computed) {
		got, ok := depends[pkg]
		switch {
		case !ok:
			t.Errorf("Depends lacks %s (%s %s); the binary links it. Depends: %v", pkg, want[0], want[1], depends)
			continue
		case want[1] == "":
		case got[0] != ">=" && got[0] != ">>" && got[0] != "=":
			t.Errorf("Depends %s has no minimum version; dpkg-shlibdeps wants (%s %s)", pkg, want[0], want[1])
			continue
		case exec.Command("dpkg", "--compare-versions", got[1], "ge", want[1]).Run() != nil:
			t.Errorf("Depends %s (%s %s) is older than dpkg-shlibdeps's (%s %s)", pkg, got[0], got[1], want[0], want[1])
		}
		// The package installs on this Debian (12): the installed library
		// satisfies the relation.
		if v, err := exec.Command("dpkg-query", "-W", "-f=${Version}", pkg).Output(); err == nil && got[1] != "" {
			if err := exec.Command("dpkg", "--compare-versions", string(v), map[string]string{">=": "ge", ">>": "gt", "=": "eq", "<=": "le", "<<": "lt"}[got[0]], got[1]).Run(); err != nil {
				t.Errorf("installed %s %s does not satisfy Depends %s (%s %s)", pkg, v, pkg, got[0], got[1])
			}
		}
	}
}

// dep5 reads a machine-readable copyright file into its paragraphs, each a
// map from field name to value (continuation lines joined with "\n", their
// leading space and the "." of an empty line removed).
func dep5(t *testing.T, text string) []map[string]string {
	t.Helper()
	var paras []map[string]string
	for _, block := range regexp.MustCompile(`\n\s*\n`).Split(strings.TrimSpace(text), -1) {
		p := map[string]string{}
		key := ""
		for _, line := range strings.Split(block, "\n") {
			if strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") {
				if key == "" {
					t.Fatalf("continuation line before any field: %q", line)
				}
				cont := strings.TrimSpace(line)
				if cont == "." {
					cont = ""
				}
				p[key] += "\n" + cont
				continue
			}
			k, v, ok := strings.Cut(line, ":")
			if !ok || strings.ContainsAny(k, " \t") {
				t.Fatalf("not a field: %q", line)
			}
			if _, dup := p[k]; dup {
				t.Fatalf("field %s twice in one paragraph:\n%s", k, block)
			}
			key = k
			p[k] = strings.TrimSpace(v)
		}
		paras = append(paras, p)
	}
	return paras
}

// dep5Match reports whether a Files pattern matches a path: "*" matches
// any run of characters, "/" included, and "?" any one character.
func dep5Match(pattern, path string) bool {
	re := "^" + strings.NewReplacer(`\*`, ".*", `\?`, ".").Replace(regexp.QuoteMeta(pattern)) + "$"
	return regexp.MustCompile(re).MatchString(path)
}

// TestDebCopyright checks /usr/share/doc/boxd/copyright: a DEP-5 file, with
// boxd's own paragraph (Files: *) under AGPL-3.0-or-later whose text is the
// repository's LICENSE, a notice for every file under /usr/share/boxd
// (third-party data and the VAD model), for every Go module linked into the
// binary, for llama.cpp and ggml, and NLM's attribution for RxNorm.
func TestDebCopyright(t *testing.T) {
	deb := buildDeb(t)
	x := t.TempDir()
	sh(t, "", nil, "dpkg-deb", "--extract", deb, x)
	b, err := os.ReadFile(filepath.Join(x, "usr/share/doc/boxd/copyright"))
	if err != nil {
		t.Fatalf("the package has no /usr/share/doc/boxd/copyright: %v", err)
	}
	text := string(b)
	paras := dep5(t, text)
	if paras[0]["Format"] != "https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/" {
		t.Fatalf("first paragraph is not a DEP-5 header: %v", paras[0])
	}

	// Every Files paragraph has a copyright and a licence; a licence given
	// by name only has its text in a stand-alone License paragraph.
	standalone := map[string]bool{}
	for _, p := range paras[1:] {
		if _, ok := p["Files"]; !ok {
			name := strings.SplitN(p["License"], "\n", 2)[0]
			if name == "" || !strings.Contains(p["License"], "\n") {
				t.Errorf("stand-alone License paragraph without a name or text: %v", p)
			}
			if standalone[name] {
				t.Errorf("License %s given twice", name)
			}
			standalone[name] = true
		}
	}
	var files [][]string // each Files paragraph's patterns, in order
	for _, p := range paras[1:] {
		f, ok := p["Files"]
		if !ok {
			continue
		}
		if p["Copyright"] == "" || p["License"] == "" {
			t.Errorf("Files: %s lacks Copyright or License", f)
		}
		name, body, _ := strings.Cut(p["License"], "\n")
		if strings.TrimSpace(body) == "" {
			for _, l := range regexp.MustCompile(`\s+(?:or|and)\s+|,\s*`).Split(name, -1) {
				if !standalone[l] {
					t.Errorf("Files: %s names License %s, whose text is nowhere in the file", f, l)
				}
			}
		}
		files = append(files, strings.Fields(f))
	}
	// governing returns the Files paragraph that applies to a path: the
	// last one that matches, as DEP-5 says.
	governing := func(path string) string {
		which := ""
		for _, patterns := range files {
			for _, pat := range patterns {
				if dep5Match(pat, path) {
					which = strings.Join(patterns, " ")
				}
			}
		}
		return which
	}

	// boxd's own licence: Files: * is AGPL-3.0+, whose stand-alone text is
	// LICENSE word for word, and no paragraph keeps the old proprietary
	// terms (they contradicted the AGPL MuPDF is linked under).
	var own map[string]string
	for _, p := range paras[1:] {
		if p["Files"] == "*" {
			own = p
		}
	}
	if own == nil || strings.SplitN(own["License"], "\n", 2)[0] != "AGPL-3.0+" ||
		!strings.Contains(strings.Join(strings.Fields(own["Comment"]), " "), "either version 3 of the License, or (at your option) any later version") {
		t.Errorf("Files: * must be License: AGPL-3.0+ with the or-later grant in its Comment: %v", own)
	}
	if strings.Contains(text, "Proprietary") {
		t.Error("copyright still names a Proprietary licence")
	}
	license, err := os.ReadFile(filepath.Join(repoRoot(t), "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(strings.TrimSpace(string(license)), "GNU AFFERO GENERAL PUBLIC LICENSE\n                       Version 3, 19 November 2007") {
		t.Errorf("LICENSE is not the GNU AGPL version 3: %.80q", license)
	}
	for _, p := range paras[1:] {
		if _, ok := p["Files"]; ok {
			continue
		}
		if name, body, _ := strings.Cut(p["License"], "\n"); name == "AGPL-3.0+" &&
			strings.Join(strings.Fields(body), " ") != strings.Join(strings.Fields(string(license)), " ") {
			t.Error("the stand-alone License: AGPL-3.0+ paragraph is not the text of LICENSE")
		}
	}
	if !standalone["AGPL-3.0+"] {
		t.Error("no stand-alone License: AGPL-3.0+ paragraph with the licence's text")
	}

	// The files under /usr/share/boxd are not boxd's own work: each needs
	// its own notice, not the catch-all "Files: *" (boxd's AGPL).
	shipped := 0
	err = filepath.WalkDir(filepath.Join(x, "usr/share/boxd"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(x, p)
		shipped++
		if g := governing(rel); g == "" || g == "*" {
			t.Errorf("%s has no notice of its own in packaging/copyright (governed by %q)", rel, g)
		}
		return nil
	})
	if err != nil || shipped == 0 {
		t.Fatalf("walking /usr/share/boxd: %v (%d files)", err, shipped)
	}

	// Every Go module in the binary (go version -m) has its paragraph.
	mods, _ := sh(t, "", nil, "go", "version", "-m", binOf(deb))
	var missing []string
	for _, line := range strings.Split(mods, "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == "dep" {
			if g := governing("vendor/" + f[1] + "/LICENSE"); g != "vendor/"+f[1]+"/*" {
				missing = append(missing, f[1]+" "+f[2])
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("packaging/copyright has no \"Files: vendor/<module>/*\" paragraph for these Go modules linked into boxd "+
			"(their licences are in $(go env GOMODCACHE)/<module>@<version>/):\n  %s", strings.Join(missing, "\n  "))
	}

	// The components the issue names, by name, and NLM's attribution as
	// ../shared/data/MANIFEST.md quotes it.
	flat := strings.Join(strings.Fields(text), " ")
	for _, want := range []string{
		"The ggml authors", "llama.cpp", "ggml", "Silero", "whisper.cpp", "ICD-10-CM", "RxNorm", "WCAG",
		"This product uses publicly available data courtesy of the U.S. National Library of Medicine (NLM), National Institutes of Health, " +
			"Department of Health and Human Services; NLM is not responsible for the product and does not endorse or recommend this or any other product.",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("copyright does not mention %q", want)
		}
	}
	// The paragraph that governs each of these (the last that matches)
	// has this licence and names this holder.
	for path, want := range map[string][2]string{
		"usr/bin/boxd": {"AGPL-3.0+", "The boxd authors"},
		"vendor/github.com/ollama/ollama/llama/llama.cpp/src/llama.cpp":       {"Expat", "The ggml authors"},
		"vendor/github.com/ollama/ollama/llama/llama.cpp/common/sampling.cpp": {"Expat", "The ggml authors"},
		"vendor/github.com/ollama/ollama/ml/backend/ggml/ggml/src/ggml.c":     {"Expat", "The ggml authors"},
		"vendor/github.com/ollama/ollama/ml/backend/ggml/ggml/include/ggml.h": {"Expat", "The ggml authors"},
		"vendor/github.com/ollama/ollama/llama/llama.go":                      {"Expat", "Ollama"},
		"usr/share/boxd/models/ggml-silero-v6.2.0.bin":                        {"Expat", "Silero Team"},
		"usr/share/boxd/data/icd10cm/icd10cm-codes-2026.txt.gz":               {"public-domain", "United States Government"},
		"usr/share/boxd/data/rxnorm/rxnav-allconcepts-IN-MIN-PIN-SCD.json":    {"NLM-RxNorm-attribution", "National Library of Medicine"},
		"usr/share/boxd/data/wcag/wcag.json":                                  {"W3C-document", "W3C"},
		"usr/share/boxd/axe-core/axe.min.js":                                  {"MPL-2.0", "Deque Systems"},
	} {
		var got map[string]string
		for _, p := range paras[1:] {
			for _, pat := range strings.Fields(p["Files"]) {
				if dep5Match(pat, path) {
					got = p
				}
			}
		}
		if got == nil {
			t.Errorf("%s: no Files paragraph", path)
			continue
		}
		if name, _, _ := strings.Cut(got["License"], "\n"); name != want[0] || !strings.Contains(got["Copyright"], want[1]) {
			t.Errorf("%s is governed by Files: %s (License %s, Copyright %q); want License %s, Copyright naming %s",
				path, got["Files"], name, got["Copyright"], want[0], want[1])
		}
	}
}

// groupFile reads name -> members from an /etc/group-style file.
func groupFile(t *testing.T, path string) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	groups := map[string][]string{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, ":")
		if len(f) < 4 || f[0] == "" {
			continue
		}
		var members []string
		if f[3] != "" {
			members = strings.Split(f[3], ",")
		}
		groups[f[0]] = members
	}
	return groups
}

func count(list []string, s string) int {
	n := 0
	for _, e := range list {
		if e == s {
			n++
		}
	}
	return n
}

// unitResolves checks what systemd resolves when it starts the unit, in
// root's user database: User=, Group= and each SupplementaryGroups= group
// must exist, or the service fails with 217/USER or 216/GROUP.
func unitResolves(t *testing.T, root, unit string) {
	t.Helper()
	users := map[string]bool{}
	b, _ := os.ReadFile(filepath.Join(root, "etc/passwd"))
	for _, line := range strings.Split(string(b), "\n") {
		if name, _, ok := strings.Cut(line, ":"); ok {
			users[name] = true
		}
	}
	groups := groupFile(t, filepath.Join(root, "etc/group"))
	for _, line := range strings.Split(unit, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || strings.HasPrefix(k, "#") {
			continue
		}
		switch k {
		case "User":
			if !users[v] {
				t.Errorf("User=%s does not exist: systemd would fail the unit with 217/USER", v)
			}
		case "Group", "SupplementaryGroups":
			for _, g := range strings.Fields(v) {
				if _, ok := groups[g]; !ok {
					t.Errorf("%s= names group %s, which does not exist here: systemd would fail the unit with 216/GROUP", k, g)
				}
			}
		}
	}
}

// groupsOf runs `id -G` as boxd with root's passwd and group files bound
// over /etc in a private mount namespace (the host's /etc is untouched):
// the groups initgroups(3) gives boxd, as systemd does for User=boxd. It
// returns nil where namespaces are not allowed.
func groupsOf(t *testing.T, root string) []string {
	t.Helper()
	if _, err := exec.LookPath("unshare"); err != nil {
		return nil
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		return nil
	}
	// id -G, not -Gn: once setpriv has dropped to boxd, the scratch
	// root's group file (0600) is not readable for the names.
	script := `mount --bind "$1/etc/passwd" /etc/passwd && mount --bind "$1/etc/group" /etc/group && exec setpriv --reuid=boxd --regid=boxd --init-groups id -G`
	out, err := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", root).CombinedOutput()
	if err != nil {
		t.Logf("no private mount namespace here, skipping the runtime group check: %v %s", err, out)
		return nil
	}
	names := map[string]string{}
	b, _ := os.ReadFile(filepath.Join(root, "etc/group"))
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Split(line, ":"); len(f) >= 3 {
			names[f[2]] = f[0]
		}
	}
	var groups []string
	for _, id := range strings.Fields(string(out)) {
		groups = append(groups, names[id])
	}
	t.Logf("boxd's groups, as initgroups(3) sets them: %v", groups)
	return groups
}

// TestDebInstallWithoutRenderGroup installs the package, with its real
// maintainer scripts and no systemd running, into a root whose user
// database has no render group (a minimal Debian without udev), and checks
// that the unit can start there: every group it names exists, boxd is in
// the video group, and systemd-analyze verify accepts the installed unit.
// When render appears later, the next configure adds boxd to it, once.
func TestDebInstallWithoutRenderGroup(t *testing.T) {
	needScratchInstall(t, "usermod", "groupadd")
	deb := buildDeb(t)
	r := scratchRoot(t)
	for _, f := range []string{"group", "gshadow"} {
		p := filepath.Join(r, "etc", f)
		b, _ := os.ReadFile(p)
		var keep []string
		for _, line := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(line, "render:") {
				keep = append(keep, line)
			}
		}
		if err := os.WriteFile(p, []byte(strings.Join(keep, "\n")), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := groupFile(t, filepath.Join(r, "etc/group"))["video"]; !ok {
		// Debian's base-passwd always has video (44); keep the test
		// meaningful on a host that lacks it.
		sh(t, "", nil, "groupadd", "--root", r, "--system", "video")
	}

	dpkg(t, r, "-i", deb)

	unitPath := filepath.Join(r, "lib/systemd/system/boxd.service")
	unit, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	unitResolves(t, r, string(unit))
	groups := groupFile(t, filepath.Join(r, "etc/group"))
	if n := count(groups["video"], "boxd"); n != 1 {
		t.Errorf("boxd is in the video group %d times, want once: %v", n, groups["video"])
	}
	if _, ok := groups["render"]; ok {
		t.Error("the package created a render group; it only joins the GPU groups that exist")
	}
	if ids := groupsOf(t, r); ids != nil && (count(ids, "video") != 1 || count(ids, "boxd") != 1) {
		t.Errorf("boxd's groups as systemd would set them (id -G): %v, want boxd and video", ids)
	}

	// systemd-analyze accepts the installed unit, with ExecStart pointed at
	// the installed binary (verify checks it exists).
	if analyze, err := exec.LookPath("systemd-analyze"); err == nil {
		copyPath := filepath.Join(t.TempDir(), "boxd.service")
		body := strings.Replace(string(unit), "ExecStart=/usr/bin/boxd ", "ExecStart="+filepath.Join(r, "usr/bin/boxd")+" ", 1)
		if err := os.WriteFile(copyPath, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(analyze, "verify", copyPath).CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
			t.Errorf("systemd-analyze verify of the installed unit: %v\n%s", err, out)
		}
	} else if os.Getenv("CI") == "true" {
		t.Error("systemd-analyze not found (make deps installs systemd)")
	}

	// udev arrives later with its render group: the next configure (here
	// an upgrade, twice) adds boxd to it, and to no group twice.
	sh(t, "", nil, "groupadd", "--root", r, "--system", "render")
	dpkg(t, r, "-i", deb)
	dpkg(t, r, "-i", deb)
	groups = groupFile(t, filepath.Join(r, "etc/group"))
	for _, g := range []string{"video", "render"} {
		if n := count(groups[g], "boxd"); n != 1 {
			t.Errorf("after upgrades boxd is in %s %d times, want once: %v", g, n, groups[g])
		}
	}
	gshadow := groupFile(t, filepath.Join(r, "etc/gshadow"))
	if count(gshadow["render"], "boxd") != 1 {
		t.Errorf("/etc/gshadow's render entry does not list boxd: %v", gshadow["render"])
	}
	if ids := groupsOf(t, r); ids != nil && count(ids, "render") != 1 {
		t.Errorf("boxd's groups after render appeared (id -G): %v", ids)
	}
	unitResolves(t, r, string(unit))
}
