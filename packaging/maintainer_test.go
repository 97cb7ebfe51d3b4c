package packaging_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"boxd/engine/models/testmodels"
)

// makeMaintainer is the PKG_MAINTAINER `make deb` hands nfpm, with
// MAINTAINER=override on the command line when override is not empty
// (make -n prints the commands without running them).
func makeMaintainer(t *testing.T, root, override string) string {
	t.Helper()
	args := []string{"-n", "-s", "deb"}
	if override != "" {
		args = append(args, "MAINTAINER="+override)
	}
	out, _ := sh(t, root, nil, need(t, "make"), args...)
	m := regexp.MustCompile(`(?m)^PKG_VERSION=\S+ PKG_MAINTAINER='([^']*)' .*/nfpm package --config packaging/nfpm\.yaml `).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("make -n deb does not hand nfpm PKG_MAINTAINER:\n%s", out)
	}
	return m[1]
}

// maintainerRe is Debian's Maintainer form, "Name <address>".
var maintainerRe = regexp.MustCompile(`^[^<>]+ <[^<>@\s]+@([^<>@\s]+)>$`)

// TestDebControlFields checks the package's Maintainer: the Makefile's
// documented default, a name and an address on a domain that can never
// be someone else's (.invalid) and is not this machine (localhost), and
// an operator's MAINTAINER= on make's command line reaching the package.
func TestDebControlFields(t *testing.T) {
	deb := buildDeb(t)
	// nfpm writes no Homepage when the field is left out; one on localhost
	// is no page anyone can visit.
	if h := control(t, deb, "Homepage"); strings.Contains(h, "localhost") || strings.Contains(h, "127.0.0.1") {
		t.Errorf("Homepage: %s", h)
	}
	// nfpm writes the licence into the control data (a field dpkg keeps).
	if l := control(t, deb, "License"); l != "AGPL-3.0-or-later" {
		t.Errorf("License %q, want AGPL-3.0-or-later (boxd's own licence, packaging/copyright's Files: *)", l)
	}
	const documented = "boxd maintainers <maintainers@boxd.invalid>"
	root := repoRoot(t)
	if m := makeMaintainer(t, root, ""); m != documented {
		t.Errorf("make deb's default MAINTAINER is %q; the Makefile's comment and the README document %q", m, documented)
	}
	m := control(t, deb, "Maintainer")
	if m != documented {
		t.Errorf("Maintainer %q, want the default %q", m, documented)
	}
	if g := maintainerRe.FindStringSubmatch(m); g == nil || g[1] == "localhost" || strings.HasSuffix(g[1], ".localdomain") {
		t.Errorf("Maintainer %q is not 'Name <address>' on a real-looking domain", m)
	}

	// Whoever builds the package for others names themselves.
	const own = "Clinic IT <it@clinic.example>"
	if got := makeMaintainer(t, root, own); got != own {
		t.Fatalf("make deb MAINTAINER=%q hands nfpm %q", own, got)
	}
	home, _ := os.UserHomeDir()
	nfpm := need(t, "nfpm", filepath.Join(home, ".cache", "boxd", "bin", "nfpm"))
	data := os.Getenv("BOXD_TEST_DATA")
	if data == "" {
		data = filepath.Join(root, "..", "shared", "data")
	}
	other := filepath.Join(t.TempDir(), "boxd_0.1.0_amd64.deb")
	if err := nfpmPackage(root, nfpm, binOf(deb), data, testmodels.Shared(t, "ggml-silero-v6.2.0.bin"), own, other, filepath.Join(filepath.Dir(deb), "pkgdocs")); err != nil {
		t.Fatal(err)
	}
	if got := control(t, other, "Maintainer"); got != own {
		t.Errorf("built with MAINTAINER=%q, the package says Maintainer %q", own, got)
	}
}
