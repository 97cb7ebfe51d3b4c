package replyguard

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// The word lists live in lists.json, the one source for this package and
// the kits: Go embeds it, and kits/ts/src/replyguard-lists.json and
// kits/python/boxd_sitecheck/replyguard_lists.json are byte-for-byte copies
// that the kits read (TestKitListsAreCopies fails while one differs; after
// editing lists.json, go generate writes them). Every phrase is written as
// its tokens joined by single spaces, in lower case: "that's not true" is
// "that s not true" because the apostrophe separates tokens, "x-ray" is
// "x ray". The order inside a list does not matter: the matcher takes the
// longest phrase that matches at a position.

//go:generate cp lists.json ../../../kits/ts/src/replyguard-lists.json
//go:generate cp lists.json ../../../kits/python/boxd_sitecheck/replyguard_lists.json

//go:embed lists.json
var listsJSON []byte

// listFile is lists.json. A phrase list is a list of groups; a word list
// is a list of single words.
type listFile struct {
	About              []string          `json:"about"`
	OfferPhrases       []phraseGroup     `json:"offer_phrases"`
	ArguingPhrases     []phraseGroup     `json:"arguing_phrases"`
	PlaceholderPhrases []phraseGroup     `json:"placeholder_phrases"`
	PHIPhrases         []phraseGroup     `json:"phi_phrases"`
	HealthKeywords     []phraseGroup     `json:"health_keywords"`
	HealthCredentials  []string          `json:"health_credentials"`
	VeterinaryWords    []phraseGroup     `json:"veterinary_words"`
	Titles             []string          `json:"titles"`
	CommonWords        []string          `json:"common_words"`
	StarWords          []string          `json:"star_words"`
	NumberWords        map[string]string `json:"number_words"`
	EnglishWords       []string          `json:"english_words"`
	ForeignWords       []string          `json:"foreign_words"`
}

// phraseGroup is phrases of one category; Note is for readers only.
type phraseGroup struct {
	Category string   `json:"category"`
	Note     string   `json:"note,omitempty"`
	Phrases  []string `json:"phrases"`
}

// lists is lists.json, read once; the variables below are built from it.
var lists = mustLoadLists(listsJSON)

func mustLoadLists(data []byte) *listFile {
	l, err := loadLists(data)
	if err != nil {
		panic("replyguard: lists.json: " + err.Error())
	}
	return l
}

// loadLists decodes the list file strictly: an unknown key, a key given
// no entries or trailing data is an error, so a misspelt key cannot
// silently empty a list.
func loadLists(data []byte) (*listFile, error) {
	var l listFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("unexpected data after the object")
	}
	sizes := []struct {
		key string
		n   int
	}{
		{"offer_phrases", len(l.OfferPhrases)}, {"arguing_phrases", len(l.ArguingPhrases)},
		{"placeholder_phrases", len(l.PlaceholderPhrases)}, {"phi_phrases", len(l.PHIPhrases)},
		{"health_keywords", len(l.HealthKeywords)}, {"health_credentials", len(l.HealthCredentials)},
		{"veterinary_words", len(l.VeterinaryWords)}, {"titles", len(l.Titles)},
		{"common_words", len(l.CommonWords)}, {"star_words", len(l.StarWords)},
		{"number_words", len(l.NumberWords)}, {"english_words", len(l.EnglishWords)},
		{"foreign_words", len(l.ForeignWords)},
	}
	for _, s := range sizes {
		if s.n == 0 {
			return nil, fmt.Errorf("%q is missing or empty", s.key)
		}
	}
	return &l, nil
}

// phraseEntry is one phrase and its category ("" marks an exception: it
// matches, uses up its tokens and reports nothing).
type phraseEntry struct {
	words []string
	cat   string
}

// phraseList builds the entries of a list's groups, in order.
func phraseList(groups []phraseGroup) []phraseEntry {
	var out []phraseEntry
	for _, g := range groups {
		for _, p := range g.Phrases {
			out = append(out, phraseEntry{words: strings.Fields(p), cat: g.Category})
		}
	}
	return out
}

// Offer phrases: discounts, refunds, free things and compensation promised
// in public.
var offerPhrases = phraseList(lists.OfferPhrases)

// Arguing phrases: blaming or contradicting the reviewer.
var arguingPhrases = phraseList(lists.ArguingPhrases)

// Placeholder phrases (the bracket and upper-case patterns are regexes).
var placeholderPhrases = phraseList(lists.PlaceholderPhrases)

// PHI categories, each with its message.
const (
	catPatient       = "patient"
	catVisit         = "visit"
	catTreatment     = "treatment"
	catWait          = "wait"
	catBill          = "bill"
	catFamily        = "family"
	catDate          = "date"
	catName          = "name"
	catRepeatNumber  = "repeat_number"
	catRepeatContact = "repeat_contact"
)

var phiMessages = map[string]string{
	catPatient:       "confirms that the reviewer is a patient or client, or describes their care",
	catVisit:         "confirms a visit or appointment",
	catTreatment:     "confirms a treatment, procedure or diagnosis",
	catWait:          "confirms a wait or waiting time",
	catBill:          "confirms a bill, charge, payment or insurance matter",
	catFamily:        "mentions a family member",
	catDate:          "mentions a day or date that could tie the reviewer to a visit",
	catName:          "names a person (the reviewer or staff)",
	catRepeatNumber:  "repeats a number the reviewer gave",
	catRepeatContact: "repeats contact details the reviewer gave",
}

// PHI term phrases, checked for health and care businesses only. Their
// categories are those of phiMessages, or "" for an exception.
var phiPhrases = phraseList(lists.PHIPhrases)

// titles start a name: "Dr. Patel", "Nurse Amy".
var titles = wordSet(lists.Titles)

// commonWords are capitalised words that are never taken for a name.
var commonWords = wordSet(lists.CommonWords)

// starWords follow a rating: "5 stars", "five-star".
var starWords = wordSet(lists.StarWords)

// numberWords are the number words read as numbers. "one" is not among
// them: it is mostly a pronoun ("no one", "the one").
var numberWords = lists.NumberWords

// englishWords and foreignWords drive the English test.
var (
	englishWords = wordSet(lists.EnglishWords)
	foreignWords = wordSet(lists.ForeignWords)
)

func wordSet(words []string) map[string]bool {
	m := map[string]bool{}
	for _, w := range words {
		m[w] = true
	}
	return m
}
