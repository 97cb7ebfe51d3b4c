package replyguard

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKitListsAreCopies fails when a kit would read other word lists than
// Go: each kit reads its own copy of lists.json, shipped with the kit, and
// the copies must be byte-for-byte the file Go embeds.
func TestKitListsAreCopies(t *testing.T) {
	for _, copyPath := range []string{
		"../../../kits/ts/src/replyguard-lists.json",
		"../../../kits/python/boxd_sitecheck/replyguard_lists.json",
	} {
		got, err := os.ReadFile(filepath.FromSlash(copyPath))
		if err != nil {
			t.Errorf("%v (go generate ./pipelines/sitecheck/replyguard writes the kits' copies)", err)
			continue
		}
		if !bytes.Equal(got, listsJSON) {
			t.Errorf("%s differs from lists.json: run go generate ./pipelines/sitecheck/replyguard", strings.TrimPrefix(copyPath, "../../../"))
		}
	}
}

func TestLoadListsIsStrict(t *testing.T) {
	if _, err := loadLists(listsJSON); err != nil {
		t.Fatalf("lists.json: %v", err)
	}
	good := string(listsJSON)
	for name, data := range map[string]string{
		"unknown key":   strings.Replace(good, `"titles":`, `"title":`, 1),
		"unknown field": strings.Replace(good, `{"category": "offer",`, `{"category": "offer", "cat": "x",`, 1),
		"empty list":    strings.Replace(good, `"star_words": ["star", "stars"]`, `"star_words": []`, 1),
		"trailing data": good + "{}",
		"not an object": "[]",
	} {
		if data == good {
			t.Fatalf("%s: the replacement did not apply", name)
		}
		if _, err := loadLists([]byte(data)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestWordListsHaveNoRepeats: a word listed twice in lists.json is a
// mistake the sets built from it would hide.
func TestWordListsHaveNoRepeats(t *testing.T) {
	for name, words := range map[string][]string{
		"health_credentials": lists.HealthCredentials, "titles": lists.Titles, "common_words": lists.CommonWords,
		"star_words": lists.StarWords, "english_words": lists.EnglishWords, "foreign_words": lists.ForeignWords,
	} {
		seen := map[string]bool{}
		for _, w := range words {
			if seen[w] {
				t.Errorf("%s: %q listed twice", name, w)
			}
			seen[w] = true
		}
	}
	for _, c := range lists.HealthCredentials {
		if len(analyse(c).toks) != 1 || strings.ToUpper(c) != c {
			t.Errorf("health credential %q is not one upper-case token", c)
		}
	}
}
