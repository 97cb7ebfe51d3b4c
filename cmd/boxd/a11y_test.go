package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestActReport: boxd a11y act-report over two rules of the ACT test
// cases prints each rule's line and the total; bad arguments are
// configuration errors that say what to fix.
func TestActReport(t *testing.T) {
	data := os.Getenv("BOXD_TEST_DATA")
	if data == "" {
		t.Skip("BOXD_TEST_DATA is not set")
	}
	if _, err := exec.LookPath("chromium"); err != nil && os.Getenv("CI") != "true" {
		t.Skip("no chromium")
	}
	axeDir := filepath.Join("..", "..", "pipelines", "a11y", "axe", "npm", "node_modules", "axe-core")
	dir := filepath.Join(data, "act-rules")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"a11y", "act-report", dir, "--axe-dir", axeDir, "--rules", "2779a5,b5c3f8", "--tabs", "2"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"2779a5  complete", "b5c3f8  complete", "2 rules consistent (complete or partial), 0 inconsistent"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"a11y", "act-report", dir, "--axe-dir", t.TempDir()}, "axe.min.js"},
		{[]string{"a11y", "act-report", t.TempDir(), "--axe-dir", axeDir}, "testcases.json"},
		{[]string{"a11y", "act-report", dir, "--axe-dir", axeDir, "--rules", "nope"}, "no approved test case of rules nope"},
		{[]string{"a11y", "act-report", dir, "--axe-dir", axeDir, "--tabs", "0"}, "--tabs is 0"},
	} {
		errb.Reset()
		if code := run(context.Background(), c.args, &out, &errb); code == 0 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, %s; want %q", c.args, code, errb.String(), c.want)
		}
	}
}
