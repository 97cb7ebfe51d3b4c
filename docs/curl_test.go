package docs

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeCurlsNameTheirContentType: every curl command in README.md that
// sends a body (-d, --data*, -F) names its Content-Type. curl -d alone
// sends application/x-www-form-urlencoded, which the box answers 415: a
// newcomer copying the example got that (issue 36).
func TestReadmeCurlsNameTheirContentType(t *testing.T) {
	b, err := os.ReadFile(README())
	if err != nil {
		t.Fatal(err)
	}
	// A command's continued lines join it (same length, so offsets keep
	// their line numbers).
	text := strings.ReplaceAll(string(b), "\\\n", "\\ ")
	cmds := regexp.MustCompile(`curl\b[^\n]*`).FindAllStringIndex(text, -1)
	body := regexp.MustCompile(`\s(-d|--data(-binary|-raw)?|--json|-F)\s`)
	checked := 0
	for _, ix := range cmds {
		c := text[ix[0]:ix[1]]
		if !body.MatchString(c) {
			continue
		}
		checked++
		if strings.Contains(c, "--json") || strings.Contains(c, " -F ") {
			continue // curl sets the type itself
		}
		if !strings.Contains(strings.ToLower(c), "content-type:") {
			line := strings.Count(string(b[:ix[0]]), "\n") + 1
			t.Errorf("README.md:%d: a curl with a body and no Content-Type: %.160s", line, c)
		}
	}
	if checked < 8 {
		t.Errorf("only %d curl commands with a body found; the pattern is wrong", checked)
	}
	t.Logf("%d curl commands with a body", checked)
}
