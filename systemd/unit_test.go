// Package systemd_test checks boxd.service: the directives the daemon and
// the operators rely on, and `systemd-analyze verify`.
package systemd_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"boxd/configs"
)

// directives parses the unit into section.key -> values.
func directives(t *testing.T, unit []byte) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(unit))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[]")
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("bad line %q", line)
			}
			out[section+"."+k] = append(out[section+"."+k], v)
		}
	}
	return out
}

func TestUnitDirectives(t *testing.T) {
	unit, err := os.ReadFile("boxd.service")
	if err != nil {
		t.Fatal(err)
	}
	d := directives(t, unit)
	for key, want := range map[string]string{
		"Service.Type":                     "notify",
		"Service.NotifyAccess":             "main",
		"Service.ExecStart":                "/usr/bin/boxd serve --config /etc/boxd/boxd.yaml",
		"Service.User":                     "boxd",
		"Service.StateDirectory":           "boxd",
		"Service.StateDirectoryMode":       "0700",
		"Service.ProtectSystem":            "strict",
		"Service.ProtectHome":              "true",
		"Service.PrivateTmp":               "true",
		"Service.NoNewPrivileges":          "true",
		"Service.Restart":                  "on-failure",
		"Service.RestartPreventExitStatus": "2",
		"Service.DevicePolicy":             "closed",
		"Install.WantedBy":                 "multi-user.target",
	} {
		if got := d[key]; len(got) != 1 || got[0] != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
	families := strings.Fields(strings.Join(d["Service.RestrictAddressFamilies"], " "))
	for _, f := range []string{"AF_UNIX", "AF_INET", "AF_INET6"} {
		if !contains(families, f) {
			t.Errorf("RestrictAddressFamilies lacks %s (AF_UNIX carries sd_notify)", f)
		}
	}
	if len(d["Service.WatchdogSec"]) != 1 {
		t.Error("WatchdogSec is not set")
	}
	devices := strings.Join(d["Service.DeviceAllow"], "\n")
	for _, dev := range []string{"char-nvidia-frontend rw", "char-nvidia-uvm rw"} {
		if !strings.Contains(devices, dev) {
			t.Errorf("DeviceAllow lacks %s (the GPU)", dev)
		}
	}
	// A supplementary group that does not exist stops the unit from
	// starting at all (216/GROUP); the postinst adds boxd to the GPU groups
	// that exist instead (packaging.TestDebInstallWithoutRenderGroup).
	if g := d["Service.SupplementaryGroups"]; len(g) > 0 {
		t.Errorf("SupplementaryGroups=%q: systemd will not start the unit where a group is missing (no render group without udev)", g)
	}
	stop, err := strconv.Atoi(strings.TrimSuffix(d["Service.TimeoutStopSec"][0], "s"))
	if err != nil || stop <= configs.Defaults().ShutdownGraceS {
		t.Errorf("TimeoutStopSec %v must exceed shutdown_grace_s %d so the drain can finish", d["Service.TimeoutStopSec"], configs.Defaults().ShutdownGraceS)
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// TestUnitVerifies runs systemd-analyze verify on the unit, with ExecStart
// pointed at an executable that exists here (verify checks it), and fails
// on any complaint, including the warnings verify prints with status 0.
func TestUnitVerifies(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("systemd-analyze not found (make deps installs systemd)")
		}
		t.Skip("systemd-analyze not found")
	}
	unit, err := os.ReadFile("boxd.service")
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(t.TempDir(), "boxd.service")
	body := strings.Replace(string(unit), "ExecStart=/usr/bin/boxd ", "ExecStart="+exe+" ", 1)
	if err := os.WriteFile(copyPath, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(analyze, "verify", copyPath)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}

	// The check itself catches mistakes: a misspelt value is reported.
	bad := strings.Replace(body, "Type=notify", "Type=notifyy", 1)
	if err := os.WriteFile(copyPath, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ = exec.Command(analyze, "verify", copyPath).CombinedOutput()
	if !strings.Contains(string(out), "notifyy") {
		t.Errorf("verify did not report a bad Type: %s", out)
	}
}
