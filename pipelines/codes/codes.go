// Package codes holds the code tables the clinical live vertical validates
// its suggestions against: ICD-10-CM diagnosis codes and RxNorm drug
// concepts. A code the model suggests is shown only when it is in these
// tables, with the table's official description.
//
// Sources and versions (read from the reference data directory, data_dir):
//
//   - ICD-10-CM FY2026 (CDC/NCHS, effective 2025-10-01 to 2026-09-30), the
//     "Code Descriptions in Tabular Order" codes file icd10cm-codes-2026.txt,
//     shipped gzip-compressed as icd10cm/icd10cm-codes-2026.txt.gz (74,719
//     billable codes; no header codes). Each CRLF line is the code without
//     its dot, padded with spaces to 8 columns, then the long description.
//     US Government work, public domain.
//   - RxNorm concepts of term types IN, MIN, PIN and SCD as NLM's RxNav REST
//     API (allconcepts.json) returned them on 2025-12-22, shipped as
//     rxnorm/rxnav-allconcepts-IN-MIN-PIN-SCD.json: a JSON array of
//     {rxcui, name, tty} (39,570 concepts). Branded names (SBD, BN) and packs
//     are not in it. This product uses publicly available data courtesy of
//     the U.S. National Library of Medicine (NLM), National Institutes of
//     Health, Department of Health and Human Services; NLM is not
//     responsible for the product and does not endorse or recommend this or
//     any other product.
//
// ../shared/data/MANIFEST.md gives each file's checksum and upstream commit.
package codes

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
)

// Files under the data directory.
const (
	ICD10CMFile = "icd10cm/icd10cm-codes-2026.txt.gz"
	RxNormFile  = "rxnorm/rxnav-allconcepts-IN-MIN-PIN-SCD.json"
)

// Versions of the tables, as shown to users next to validated codes.
const (
	ICD10CMVersion = "ICD-10-CM FY2026 (CDC/NCHS, effective 2025-10-01 to 2026-09-30)"
	RxNormVersion  = "RxNorm via RxNav, 2025-12-22 snapshot (IN, MIN, PIN, SCD)"
)

// NLMAttribution is the notice NLM asks users of RxNorm data to carry.
const NLMAttribution = "This product uses publicly available data courtesy of the U.S. National Library of Medicine (NLM), National Institutes of Health, Department of Health and Human Services; NLM is not responsible for the product and does not endorse or recommend this or any other product."

// Diagnosis is one ICD-10-CM code: the code as printed (with its dot, E11.9)
// and its official long description.
type Diagnosis struct {
	Code        string `json:"code"`
	Description string `json:"description"`
}

// Drug is one RxNorm concept.
type Drug struct {
	RxCUI string `json:"rxcui"`
	Name  string `json:"name"`
	TTY   string `json:"tty"` // IN, MIN, PIN or SCD
}

// How a drug suggestion was resolved (Resolve).
const (
	ByName       = "name"       // the name is a concept's name
	ByRxCUI      = "rxcui"      // the RxCUI is in the table and agrees with the name
	ByProduct    = "product"    // a clinical drug (SCD) named by ingredient, strength and form, salt left out
	ByIngredient = "ingredient" // the name contains an ingredient's name
)

// Tables are the loaded code tables. They are read-only after Load and safe
// for concurrent use.
type Tables struct {
	icd         map[string]string // code without dot -> description
	sorted      []string          // codes without dot, sorted (prefix checks)
	rx          map[string]Drug   // rxcui -> concept
	byName      map[string]Drug   // normalized name -> concept
	scdByWord   map[string][]Drug // word -> clinical drugs (SCD) whose name has it
	maxIngWords int               // words in the longest IN name
}

// Load reads both tables from the reference data directory.
func Load(dataDir string) (*Tables, error) {
	return LoadFiles(filepath.Join(dataDir, ICD10CMFile), filepath.Join(dataDir, RxNormFile))
}

// LoadFiles reads the ICD-10-CM codes file (gzip-compressed) and the RxNorm
// concepts file.
func LoadFiles(icdPath, rxPath string) (*Tables, error) {
	t := &Tables{}
	if err := t.loadICD(icdPath); err != nil {
		return nil, err
	}
	if err := t.loadRx(rxPath); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *Tables) loadICD(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("codes: ICD-10-CM table: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("codes: ICD-10-CM table %s: %w", path, err)
	}
	t.icd = make(map[string]string, 75000)
	sc := bufio.NewScanner(zr)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if len(line) < 9 {
			return fmt.Errorf("codes: %s line %d: %q is not a code padded to 8 columns and a description", path, n, line)
		}
		code, desc := strings.TrimSpace(line[:8]), strings.TrimSpace(line[8:])
		if !validICDShape(code) || desc == "" {
			return fmt.Errorf("codes: %s line %d: %q is not a code padded to 8 columns and a description", path, n, line)
		}
		t.icd[code] = desc
		t.sorted = append(t.sorted, code)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("codes: reading %s: %w", path, err)
	}
	if len(t.icd) == 0 {
		return fmt.Errorf("codes: %s holds no codes", path)
	}
	sort.Strings(t.sorted)
	return nil
}

func (t *Tables) loadRx(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("codes: RxNorm table: %w", err)
	}
	var rows []Drug
	if err := json.Unmarshal(b, &rows); err != nil {
		return fmt.Errorf("codes: RxNorm table %s: %w", path, err)
	}
	t.rx = make(map[string]Drug, len(rows))
	t.byName = make(map[string]Drug, len(rows))
	t.scdByWord = map[string][]Drug{}
	for i, r := range rows {
		if r.RxCUI == "" || r.Name == "" || !allDigits(r.RxCUI) {
			return fmt.Errorf("codes: %s entry %d: want {rxcui, name, tty}, got %+v", path, i, r)
		}
		t.rx[r.RxCUI] = r
		t.byName[normName(r.Name)] = r
		switch r.TTY {
		case "IN":
			t.maxIngWords = max(t.maxIngWords, len(strings.Fields(normName(r.Name))))
		case "SCD":
			for _, w := range uniqueWords(r.Name) {
				t.scdByWord[w] = append(t.scdByWord[w], r)
			}
		}
	}
	if len(t.rx) == 0 {
		return errors.New("codes: " + path + " holds no concepts")
	}
	return nil
}

// Counts returns how many ICD-10-CM codes and RxNorm concepts are loaded.
func (t *Tables) Counts() (icd, rxnorm int) { return len(t.icd), len(t.rx) }

// NormalizeICD turns a code as people write it (e11.9, E119, " E11.9 ")
// into the table's form: upper case, no dot. It does not check the table.
func NormalizeICD(code string) string {
	code = strings.ToUpper(strings.TrimSpace(code))
	if i := strings.IndexByte(code, '.'); i == 3 {
		code = code[:3] + code[4:]
	}
	return code
}

// FormatICD prints a code the way ICD-10-CM does: a dot after the third
// character when more follow (E119 -> E11.9, A09 -> A09).
func FormatICD(code string) string {
	code = NormalizeICD(code)
	if len(code) > 3 {
		return code[:3] + "." + code[3:]
	}
	return code
}

// validICDShape: a letter, then 2 to 6 letters or digits (FY2026 has codes
// such as QA00101 whose second character is a letter).
func validICDShape(code string) bool {
	if len(code) < 3 || len(code) > 7 || code[0] < 'A' || code[0] > 'Z' {
		return false
	}
	for i := 1; i < len(code); i++ {
		c := code[i]
		if (c < '0' || c > '9') && (c < 'A' || c > 'Z') {
			return false
		}
	}
	return true
}

// ICD10CM looks a code up, with or without its dot, in any case. It returns
// the code as printed (with the dot) and its official description.
func (t *Tables) ICD10CM(code string) (Diagnosis, bool) {
	c := NormalizeICD(code)
	desc, ok := t.icd[c]
	if !ok {
		return Diagnosis{}, false
	}
	return Diagnosis{Code: FormatICD(c), Description: desc}, true
}

// ICD10CMCategory reports whether code (not itself billable) is the start of
// billable codes, such as the category E11: a valid heading that needs more
// characters to be billed.
func (t *Tables) ICD10CMCategory(code string) bool {
	c := NormalizeICD(code)
	if !validICDShape(c) {
		return false
	}
	i := sort.SearchStrings(t.sorted, c)
	for ; i < len(t.sorted) && strings.HasPrefix(t.sorted[i], c); i++ {
		if t.sorted[i] != c {
			return true
		}
	}
	return false
}

// RxCUI looks a concept up by its RxCUI.
func (t *Tables) RxCUI(rxcui string) (Drug, bool) {
	d, ok := t.rx[strings.TrimSpace(rxcui)]
	return d, ok
}

// DrugByName looks a concept up by its exact name, ignoring case and runs
// of spaces ("Metformin", "metformin hydrochloride 500 MG Oral Tablet").
func (t *Tables) DrugByName(name string) (Drug, bool) {
	d, ok := t.byName[normName(name)]
	return d, ok
}

// Resolve turns a drug as a model suggested it (a name, an RxCUI, or both)
// into a concept of the table, and says how (ByName, ByRxCUI, ByProduct,
// ByIngredient). An exact name wins; then an RxCUI whose concept shares a
// word with the name (or any RxCUI when no name is given), so a made-up
// number for the wrong drug is not shown; then the one clinical drug whose
// name is the given words plus a salt ("metformin 500 mg oral tablet" is
// metformin hydrochloride 500 MG Oral Tablet); then the longest ingredient
// (IN) name found in the name, so "lisinopril 10 mg daily" resolves to
// lisinopril. reason says why nothing matched.
func (t *Tables) Resolve(name, rxcui string) (d Drug, how string, reason string) {
	name, rxcui = strings.TrimSpace(name), strings.TrimSpace(rxcui)
	if name != "" {
		if d, ok := t.DrugByName(name); ok {
			return d, ByName, ""
		}
	}
	if rxcui != "" {
		if d, ok := t.rx[rxcui]; ok {
			if name == "" || sharesWord(name, d.Name) {
				return d, ByRxCUI, ""
			}
		}
	}
	if name != "" {
		if d, ok := t.product(name); ok {
			return d, ByProduct, ""
		}
		if d, ok := t.ingredientIn(name); ok {
			return d, ByIngredient, ""
		}
	}
	_, cuiKnown := t.rx[rxcui]
	switch {
	case name == "" && rxcui == "":
		return Drug{}, "", "no name or RxCUI"
	case name == "" && !cuiKnown:
		return Drug{}, "", "RxCUI " + rxcui + " is not in the table"
	case rxcui != "" && cuiKnown:
		return Drug{}, "", "no concept has this name, and RxCUI " + rxcui + " is " + t.rx[rxcui].Name
	case rxcui != "":
		return Drug{}, "", "no concept has this name, and RxCUI " + rxcui + " is not in the table"
	default:
		return Drug{}, "", "no concept has this name or an ingredient named in it"
	}
}

// saltWords may be left out of a clinical drug's name when it is spoken.
var saltWords = map[string]bool{
	"hydrochloride": true, "hcl": true, "hydrobromide": true, "sodium": true, "potassium": true,
	"calcium": true, "magnesium": true, "sulfate": true, "succinate": true, "tartrate": true,
	"bitartrate": true, "maleate": true, "mesylate": true, "besylate": true, "citrate": true,
	"acetate": true, "phosphate": true, "bromide": true, "fumarate": true, "hyclate": true,
	"monohydrate": true, "dihydrate": true, "trihydrate": true, "anhydrous": true, "carbonate": true,
	"gluconate": true, "lactate": true, "propionate": true, "dipropionate": true, "valerate": true,
	"furoate": true, "xinafoate": true, "chloride": true, "oxide": true,
}

// product finds the one clinical drug (SCD) whose name has every word of
// text (which must give a strength) and otherwise only salt words.
func (t *Tables) product(text string) (Drug, bool) {
	words := uniqueWords(text)
	hasNumber := false
	for _, w := range words {
		hasNumber = hasNumber || (w[0] >= '0' && w[0] <= '9')
	}
	if len(words) < 3 || !hasNumber {
		return Drug{}, false
	}
	// Candidates: the clinical drugs with the rarest word.
	cands := t.scdByWord[words[0]]
	for _, w := range words[1:] {
		if c := t.scdByWord[w]; len(c) < len(cands) {
			cands = c
		}
	}
	var found []Drug
	for _, d := range cands {
		have := map[string]bool{}
		for _, w := range uniqueWords(d.Name) {
			have[w] = true
		}
		ok := true
		for _, w := range words {
			ok = ok && have[w]
			delete(have, w)
		}
		for w := range have {
			ok = ok && saltWords[w]
		}
		if ok {
			found = append(found, d)
		}
	}
	if len(found) != 1 {
		return Drug{}, false
	}
	return found[0], true
}

// uniqueWords are the words of a drug name as written in RxNorm: lower
// case, units and forms in their table spelling ("milligrams" is mg, 500mg
// is 500 mg), punctuation other than / and . dropped, each word once.
func uniqueWords(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '/' && r != '.'
	}) {
		w = strings.Trim(w, "./")
		for _, part := range splitUnit(w) {
			if syn, ok := unitWords[part]; ok {
				part = syn
			}
			if part != "" && !seen[part] {
				seen[part] = true
				out = append(out, part)
			}
		}
	}
	return out
}

var unitWords = map[string]string{
	"milligram": "mg", "milligrams": "mg", "microgram": "mcg", "micrograms": "mcg",
	"gram": "g", "grams": "g", "milliliter": "ml", "milliliters": "ml",
	"tablets": "tablet", "capsules": "capsule",
}

// splitUnit splits a strength written without a space (500mg) in two.
func splitUnit(w string) []string {
	i := 0
	for i < len(w) && (w[i] >= '0' && w[i] <= '9' || w[i] == '.') {
		i++
	}
	if i > 0 && i < len(w) {
		if _, ok := map[string]bool{"mg": true, "mcg": true, "g": true, "ml": true, "mg/ml": true, "unt": true}[w[i:]]; ok {
			return []string{w[:i], w[i:]}
		}
	}
	return []string{w}
}

// ingredientIn finds the longest ingredient (IN) name that occurs as whole
// words in text.
func (t *Tables) ingredientIn(text string) (Drug, bool) {
	words := strings.Fields(normName(text))
	for n := min(t.maxIngWords, len(words)); n >= 1; n-- {
		for i := 0; i+n <= len(words); i++ {
			if d, ok := t.byName[strings.Join(words[i:i+n], " ")]; ok && d.TTY == "IN" {
				return d, true
			}
		}
	}
	return Drug{}, false
}

// commonWords are ingredient names that in a visit are usually not a drug
// (lab values, everyday words); Mentions leaves them out.
var commonWords = map[string]bool{
	"air": true, "water": true, "oxygen": true, "nitrogen": true, "helium": true,
	"gold": true, "silver": true, "copper": true, "iron": true, "zinc": true,
	"sodium": true, "potassium": true, "calcium": true, "magnesium": true,
	"glucose": true, "sucrose": true, "caffeine": true, "nicotine": true,
	"latex": true, "charcoal": true, "sulfur": true, "alcohol": true,
}

// Mentions finds ingredient (IN) names spoken in text, longest first at each
// position, at most limit of them, in order of first mention. It is a hint
// for the model, not a validation: everyday words that are also
// ingredients (water, sodium) are left out.
func (t *Tables) Mentions(text string, limit int) []Drug {
	words := strings.Fields(normName(text))
	var out []Drug
	seen := map[string]bool{}
	for i := 0; i < len(words) && len(out) < limit; {
		matched := 0
		for n := min(t.maxIngWords, len(words)-i); n >= 1; n-- {
			name := strings.Join(words[i:i+n], " ")
			d, ok := t.byName[name]
			if !ok || d.TTY != "IN" || commonWords[name] || len(name) < 4 {
				continue
			}
			matched = n
			if !seen[d.RxCUI] {
				seen[d.RxCUI] = true
				out = append(out, d)
			}
			break
		}
		i += max(matched, 1)
	}
	return out
}

// normName lowers case, turns punctuation other than what drug names use
// into spaces, and collapses runs of spaces.
func normName(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			return unicode.ToLower(r)
		case strings.ContainsRune("-/.%()',", r):
			return r
		default:
			return ' '
		}
	}, s)
	// Sentence punctuation glued to a word ("metformin," "aspirin.") is
	// not part of a name.
	fields := strings.Fields(s)
	for i, f := range fields {
		fields[i] = strings.TrimRight(f, ".,")
	}
	return strings.Join(fields, " ")
}

// sharesWord reports whether a and b share a word of 4 letters or more (an
// ingredient), ignoring case.
func sharesWord(a, b string) bool {
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(b), notLetter) {
		if len(w) >= 4 {
			words[w] = true
		}
	}
	for _, w := range strings.FieldsFunc(strings.ToLower(a), notLetter) {
		if words[w] {
			return true
		}
	}
	return false
}

func notLetter(r rune) bool { return !unicode.IsLetter(r) }

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}
