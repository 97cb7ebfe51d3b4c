package replyguard

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

type fixture struct {
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	Want  json.RawMessage `json:"want"`
}

func loadFixtures(t *testing.T, file string) []fixture {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "sitecheck", file))
	if err != nil {
		t.Fatal(err)
	}
	var fs []fixture
	if err := json.Unmarshal(b, &fs); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return fs
}

// runFixtures calls the kit function on every fixture and compares the
// JSON of its answer with want.
func runFixtures(t *testing.T, file, fn string, min int) []fixture {
	fs := loadFixtures(t, file)
	if len(fs) < min {
		t.Errorf("%s holds %d fixtures; want at least %d", file, len(fs), min)
	}
	f := KitFunctions()[fn]
	names := map[string]bool{}
	for _, c := range fs {
		if names[c.Name] {
			t.Errorf("%s: duplicate fixture name %q", file, c.Name)
		}
		names[c.Name] = true
		got, err := f(c.Input)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		gb, _ := json.Marshal(got)
		var g, w any
		if err := json.Unmarshal(gb, &g); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(c.Want, &w); err != nil {
			t.Fatalf("%s: want: %v", c.Name, err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s:\n got %s\nwant %s", c.Name, gb, c.Want)
		}
	}
	return fs
}

func TestCheckReplyFixtures(t *testing.T) {
	runFixtures(t, "check_reply.json", "checkReply", 80)
}

func TestIsHealthcareBusinessFixtures(t *testing.T) {
	runFixtures(t, "is_healthcare_business.json", "isHealthcareBusiness", 30)
}
