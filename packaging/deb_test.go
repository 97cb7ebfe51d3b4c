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
	debOnce.Do(func() { debPath, debErr = build(root, nfpm, data, vad) })
	if debErr != nil {
		t.Fatal(debErr)
	}
	return debPath
}

func build(root, nfpm, data, vad string) (string, error) {
	out, err := os.MkdirTemp("", "boxd-deb-")
	if err != nil {
		return "", err
	}
	debDir = out
	run := func(env []string, name string, args ...string) error {
		cmd := exec.Command(name, args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), env...)
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, b)
		}
		return nil
	}
	bin := filepath.Join(out, "boxd")
	if err := run(nil, "go", "build", "-o", bin, "./cmd/boxd"); err != nil {
		return "", err
	}
	deb := filepath.Join(out, "boxd_0.1.0_amd64.deb")
	err = run([]string{"PKG_VERSION=0.1.0", "PKG_BIN=" + bin, "PKG_DATA=" + data, "PKG_VAD=" + vad},
		nfpm, "package", "--config", "packaging/nfpm.yaml", "--packager", "deb", "--target", deb)
	return deb, err
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
		`\./usr/share/boxd/data/icd10cm/icd10cm-codes-2026\.txt\.gz\n`,
		`\./usr/share/boxd/data/rxnorm/`,
		`\./usr/share/boxd/data/wcag/wcag\.json\n`,
		`-rw-r--r-- root/root +885098 \S+ \S+ \./usr/share/boxd/models/ggml-silero-v6\.2\.0\.bin\n`,
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

func TestDebInstallUpgradeRemovePurge(t *testing.T) {
	need(t, "dpkg")
	need(t, "useradd")
	need(t, "deb-systemd-helper")
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("installing into a scratch root needs root (useradd --root)")
		}
		t.Skip("installing into a scratch root needs root")
	}
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
