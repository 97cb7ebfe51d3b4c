package attest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// RecordFormat identifies signed hash-chain records.
const RecordFormat = "service.record.v1"

// genesis is the prev of the first entry.
var genesis = strings.Repeat("0", 64)

// Entry is one link of a record's chain. Its hash covers every field but
// text and hash; text_sha256 commits to the text, so an entry whose text is
// removed still verifies. Data holds strings, booleans, null, lists and
// objects only: numbers in signed records are strings.
type Entry struct {
	N          string         `json:"n"`
	Type       string         `json:"type"`
	Prev       string         `json:"prev"`
	TextSHA256 string         `json:"text_sha256,omitempty"`
	Text       *string        `json:"text,omitempty"`
	Data       map[string]any `json:"data,omitempty"`
	Hash       string         `json:"hash"`
}

// Record is a signed chain of entries (service.record.v1). The signature
// covers every top-level field except entries and signature; head is the
// last entry's hash, so the signature covers the chain.
type Record struct {
	Format    string            `json:"format"`
	Kind      string            `json:"kind"`
	ID        string            `json:"id"`
	Created   string            `json:"created"`
	Meta      map[string]string `json:"meta,omitempty"`
	Count     string            `json:"count"`
	Head      string            `json:"head"`
	Signer    Signer            `json:"signer"`
	Entries   []Entry           `json:"entries"`
	Signature string            `json:"signature"`
}

// RecordBuilder collects entries for one record.
type RecordBuilder struct {
	kind, id string
	meta     map[string]string
	entries  []Entry
	err      error
}

// NewRecord starts a record of a kind ("site-check", "oral-draft", …) with
// an id and optional metadata (strings only).
func NewRecord(kind, id string, meta map[string]string) *RecordBuilder {
	return &RecordBuilder{kind: kind, id: id, meta: meta}
}

// Add appends an entry. text may be nil for an entry without text. data
// must not hold numbers (write them with strconv).
func (b *RecordBuilder) Add(typ string, text *string, data map[string]any) {
	if b.err != nil {
		return
	}
	if path := numberPath(data, "data"); path != "" {
		b.err = fmt.Errorf("record entry %d (%s): %s is a number; signed records carry numbers as strings", len(b.entries)+1, typ, path)
		return
	}
	e := Entry{N: strconv.Itoa(len(b.entries) + 1), Type: typ, Data: data}
	if text != nil {
		t := *text
		e.Text = &t
		e.TextSHA256 = sha256Hex([]byte(t))
	}
	b.entries = append(b.entries, e)
}

// AddText appends an entry with text.
func (b *RecordBuilder) AddText(typ, text string, data map[string]any) { b.Add(typ, &text, data) }

// Sign links the entries and signs the record.
func (b *RecordBuilder) Sign(k *Key, now time.Time) (*Record, error) {
	if b.err != nil {
		return nil, b.err
	}
	prev := genesis
	for i := range b.entries {
		e := &b.entries[i]
		e.Prev = prev
		h, err := entryHash(e)
		if err != nil {
			return nil, err
		}
		e.Hash = h
		prev = h
	}
	r := &Record{
		Format:  RecordFormat,
		Kind:    b.kind,
		ID:      b.id,
		Created: now.UTC().Format(time.RFC3339),
		Meta:    b.meta,
		Count:   strconv.Itoa(len(b.entries)),
		Head:    prev,
		Signer:  k.Signer(),
		Entries: b.entries,
	}
	sig, _, err := k.Sign(RecordFormat, recordHeader(r))
	if err != nil {
		return nil, err
	}
	r.Signature = sig
	return r, nil
}

func recordHeader(r *Record) map[string]any {
	h := map[string]any{
		"format": r.Format, "kind": r.Kind, "id": r.ID, "created": r.Created,
		"count": r.Count, "head": r.Head, "signer": r.Signer,
	}
	if len(r.Meta) > 0 {
		h["meta"] = r.Meta
	}
	return h
}

func entryHash(e *Entry) (string, error) {
	c := *e
	c.Text, c.Hash = nil, ""
	m, err := toMap(c)
	if err != nil {
		return "", err
	}
	delete(m, "hash")
	return hashEntryMap(m)
}

func hashEntryMap(m map[string]any) (string, error) {
	msg, err := Message(RecordFormat+"/entry", m)
	if err != nil {
		return "", err
	}
	return sha256Hex(msg), nil
}

// hashEntryTree is hashEntryMap for an entry decoded from JSON (with
// UseNumber): its canonical form is written from the tree as it is, where
// Canonical would encode and decode it again first (the same bytes, at
// three times the memory).
func hashEntryTree(m map[string]any) (string, error) {
	var buf bytes.Buffer
	buf.WriteString(RecordFormat + "/entry\n")
	if err := writeCanonical(&buf, m); err != nil {
		return "", err
	}
	return sha256Hex(buf.Bytes()), nil
}

func toMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return m, dec.Decode(&m)
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// numberPath returns the path of the first number inside v ("" if none).
func numberPath(v any, path string) string {
	switch v := v.(type) {
	case json.Number, float64, float32, int, int64, int32, int16, int8, uint, uint64, uint32, uint16, uint8:
		return path
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p := numberPath(v[k], path+"."+k); p != "" {
				return p
			}
		}
	case []any:
		for i, e := range v {
			if p := numberPath(e, fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	case map[string]string, []string, string, bool, nil:
	default:
		// Other Go types: check their JSON form.
		if m, err := toAny(v); err == nil {
			return numberPath(m, path)
		}
	}
	return ""
}

func toAny(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	return out, dec.Decode(&out)
}

// Check is one named verification step.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// Verification is the result of verifying a record.
type Verification struct {
	OK     bool    `json:"ok"`
	Checks []Check `json:"checks"`
	// Entries is the number of entries the record holds.
	Entries int `json:"entries"`
	// FirstBadEntry is the 1-based position of the first entry whose
	// content or link was changed; null when the chain is intact.
	FirstBadEntry *int    `json:"first_bad_entry"`
	Signer        *Signer `json:"signer"`
	// SignedByTrustedKey: the signer is the key verification trusts (this
	// box's key on the server, --pubkey offline).
	SignedByTrustedKey bool `json:"signed_by_trusted_key"`
	// Problem is the first failure, in words ("" when ok).
	Problem string `json:"problem,omitempty"`
}

func (v *Verification) add(name string, ok bool, detail string) {
	v.Checks = append(v.Checks, Check{Name: name, OK: ok, Detail: detail})
	if !ok && v.Problem == "" {
		v.Problem = name + ": " + detail
	}
}

// MaxRecordBytes bounds the records VerifyRecord accepts.
const MaxRecordBytes = 16 << 20

// VerifyRecord checks a record given as JSON: format, that every number is
// a string, every entry's text, content and link, the count and head, the
// signature, and that the signer is trusted (nil trusts nobody: the
// signature is still checked against the record's own signer, but
// SignedByTrustedKey stays false and ok is false).
func VerifyRecord(raw []byte, trusted ed25519.PublicKey) Verification {
	v, _, _ := VerifyRecordParsed(raw, trusted)
	return v
}

// VerifyRecordParsed is VerifyRecord that also returns the record, read in
// the same pass (nil when the format check failed), and why its fields do
// not have Record's types when they do not (a meta value or an entry field
// that is not a string, data that is not an object). Keys match exactly.
//
// The record is read once, one entry at a time: the memory it takes is the
// Record and one entry's JSON tree, not a tree of the whole record.
func VerifyRecordParsed(raw []byte, trusted ed25519.PublicKey) (Verification, *Record, error) {
	var v Verification
	if len(raw) > MaxRecordBytes {
		v.add("format", false, fmt.Sprintf("record is %d bytes; the limit is %d", len(raw), MaxRecordBytes))
		return v, nil, nil
	}
	var p recordPass
	if err := p.read(raw); err != nil {
		v.add("format", false, err.Error())
		return v, nil, nil
	}
	p.verify(&v, trusted)
	v.OK = v.Problem == ""
	if v.Signer == nil {
		return v, nil, nil
	}
	rec, err := p.record(*v.Signer)
	return v, rec, err
}

// recordPass is what one read of a record keeps: the top-level fields but
// entries as JSON values, and for the entries the outcome of the chain
// check, the first number inside them and the typed entries.
type recordPass struct {
	header map[string]any // every top-level field but entries

	entriesSeen bool
	entriesList bool // entries is a list (else entriesValue holds it)
	entries     []Entry
	count       int    // entries read
	numberPath  string // the first number inside entries
	prev        string // the last good entry's hash
	chainBad    string // the first chain failure ("" while intact)
	badPos      int
	fieldsErr   error // the first field that does not have its Record type
}

// read reads raw: one JSON object, then only white space. The entries are
// checked as they are read.
func (p *recordPass) read(raw []byte) error {
	notObject := func(err error) error { return fmt.Errorf("record is not a JSON object: %v", err) }
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return notObject(err)
	}
	if tok != json.Delim('{') {
		return notObject(fmt.Errorf("it starts with %v", tokenText(tok)))
	}
	p.header = map[string]any{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return notObject(err)
		}
		key, _ := tok.(string)
		if key != "entries" {
			var val any
			if err := dec.Decode(&val); err != nil {
				return notObject(err)
			}
			p.header[key] = val // a repeated key: the last one counts, as everywhere
			continue
		}
		if err := p.readEntries(dec); err != nil {
			return notObject(err)
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return notObject(err)
	}
	if !onlySpaceLeft(dec) {
		return errors.New("record has data after its JSON object")
	}
	return nil
}

// readEntries reads the value of entries, checking each entry as it is
// read. A repeated entries key starts over: the last one counts.
func (p *recordPass) readEntries(dec *json.Decoder) error {
	*p = recordPass{header: p.header, entriesSeen: true, prev: genesis}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('['):
	case json.Delim('{'): // not a list: read past it
		return skipObject(dec)
	default: // not a list: a scalar, read whole
		return nil
	}
	p.entriesList = true
	for dec.More() {
		var e any
		if err := dec.Decode(&e); err != nil {
			return err
		}
		p.entry(e)
	}
	_, err = dec.Token() // the closing bracket
	return err
}

// skipObject reads the rest of an object whose opening brace was read.
func skipObject(dec *json.Decoder) error {
	for depth := 1; depth > 0; {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	return nil
}

func tokenText(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		return string(t)
	case string:
		return "a string"
	case nil:
		return "null"
	}
	return fmt.Sprint(tok)
}

// entry checks one entry (its position is count+1) and keeps it typed.
func (p *recordPass) entry(x any) {
	p.count++
	pos := p.count
	if p.numberPath == "" {
		p.numberPath = numberPath(x, fmt.Sprintf("record.entries[%d]", pos-1))
	}
	te, err := typedEntry(x, pos)
	if err != nil && p.fieldsErr == nil {
		p.fieldsErr = err
	}
	p.entries = append(p.entries, te)
	if p.chainBad != "" {
		return
	}
	bad := func(detail string) { p.chainBad, p.badPos = detail, pos }
	e, ok := x.(map[string]any)
	if !ok {
		bad("not an object")
		return
	}
	if n, _ := e["n"].(string); n != strconv.Itoa(pos) {
		bad(fmt.Sprintf("carries n=%v at position %d: entries were removed, reordered or inserted", e["n"], pos))
		return
	}
	stated, _ := e["hash"].(string)
	if text, has := e["text"]; has {
		ts, isStr := text.(string)
		want, _ := e["text_sha256"].(string)
		if !isStr || sha256Hex([]byte(ts)) != want {
			bad("text changed: its SHA-256 does not match text_sha256")
			return
		}
	}
	body := make(map[string]any, len(e))
	for k, val := range e {
		if k != "text" && k != "hash" {
			body[k] = val
		}
	}
	h, err := hashEntryTree(body)
	if err != nil {
		bad("cannot be hashed: " + err.Error())
		return
	}
	if h != stated {
		bad("content changed: its fields no longer match its hash")
		return
	}
	if prev, _ := e["prev"].(string); prev != p.prev {
		if pos == 1 {
			bad("link changed: the first entry must link to the genesis hash")
		} else {
			bad(fmt.Sprintf("link broken: prev does not match entry %d's hash (entry %d or this link was changed)", pos-1, pos-1))
		}
		return
	}
	p.prev = h
}

// typedEntry is x as an Entry, with an error when a field does not have
// its Entry type (null reads as absent, as encoding/json reads it).
func typedEntry(x any, pos int) (Entry, error) {
	var e Entry
	if x == nil {
		return e, nil
	}
	m, ok := x.(map[string]any)
	if !ok {
		return e, fmt.Errorf("entries[%d] is not an object", pos-1)
	}
	var err error
	str := func(k string, dst *string) {
		switch v := m[k].(type) {
		case nil:
		case string:
			*dst = v
		default:
			if err == nil {
				err = fmt.Errorf("entries[%d].%s is not a string", pos-1, k)
			}
		}
	}
	str("n", &e.N)
	str("type", &e.Type)
	str("prev", &e.Prev)
	str("text_sha256", &e.TextSHA256)
	str("hash", &e.Hash)
	switch t := m["text"].(type) {
	case nil:
	case string:
		e.Text = &t
	default:
		if err == nil {
			err = fmt.Errorf("entries[%d].text is not a string", pos-1)
		}
	}
	switch d := m["data"].(type) {
	case nil:
	case map[string]any:
		e.Data = d
	default:
		if err == nil {
			err = fmt.Errorf("entries[%d].data is not an object", pos-1)
		}
	}
	return e, err
}

// record is the typed record (the format check passed, so the header's
// string fields are strings).
func (p *recordPass) record(signer Signer) (*Record, error) {
	s := func(k string) string { v, _ := p.header[k].(string); return v }
	r := &Record{Format: s("format"), Kind: s("kind"), ID: s("id"), Created: s("created"), Count: s("count"),
		Head: s("head"), Signer: signer, Entries: p.entries, Signature: s("signature")}
	err := p.fieldsErr
	switch m := p.header["meta"].(type) {
	case nil:
	case map[string]any:
		r.Meta = make(map[string]string, len(m))
		for k, v := range m {
			if sv, ok := v.(string); ok {
				r.Meta[k] = sv
			} else if err == nil {
				err = fmt.Errorf("meta.%s is not a string", k)
			}
		}
	default:
		if err == nil {
			err = errors.New("meta is not an object")
		}
	}
	return r, err
}

// verify adds the checks in their order: format, numbers, chain, count,
// head, signature, signer.
func (p *recordPass) verify(v *Verification, trusted ed25519.PublicKey) {
	top := p.header
	str := func(k string) (string, bool) { s, ok := top[k].(string); return s, ok }
	if f, _ := str("format"); f != RecordFormat {
		v.add("format", false, fmt.Sprintf("format is %v, want %s", top["format"], RecordFormat))
		return
	}
	for _, k := range []string{"kind", "id", "created", "count", "head", "signature"} {
		if _, ok := str(k); !ok {
			v.add("format", false, fmt.Sprintf("field %s is missing or not a string", k))
			return
		}
	}
	if !p.entriesSeen || !p.entriesList {
		v.add("format", false, "entries is missing or not a list")
		return
	}
	signer, err := parseSigner(top["signer"])
	if err != nil {
		v.add("format", false, "signer: "+err.Error())
		return
	}
	v.Signer = &signer
	v.Entries = p.count
	v.add("format", true, RecordFormat)

	// The first number in key order, as numberPath walks the whole record.
	keys := make([]string, 0, len(top)+1)
	for k := range top {
		keys = append(keys, k)
	}
	keys = append(keys, "entries")
	sort.Strings(keys)
	path := ""
	for _, k := range keys {
		if k == "entries" {
			path = p.numberPath
		} else {
			path = numberPath(top[k], "record."+k)
		}
		if path != "" {
			break
		}
	}
	if path != "" {
		v.add("numbers", false, path+" is a number; numbers in signed records are strings")
	} else {
		v.add("numbers", true, "every number is a string")
	}

	if p.chainBad != "" {
		v.add("chain", false, fmt.Sprintf("entry %d: %s", p.badPos, p.chainBad))
		bad := p.badPos
		v.FirstBadEntry = &bad
	} else {
		v.add("chain", true, plural(p.count, "entry", "entries")+" linked")
		count, _ := str("count")
		if count != strconv.Itoa(p.count) {
			v.add("count", false, fmt.Sprintf("the record holds %d entries but was signed with %s: entries were removed or added", p.count, count))
		} else {
			v.add("count", true, plural(p.count, "entry", "entries"))
		}
		head, _ := str("head")
		if head != p.prev {
			v.add("head", false, "the last entry's hash does not match the signed head: entries at the end were changed, removed or added")
		} else {
			v.add("head", true, "the chain ends at the signed head")
		}
	}

	// The signature over the header (all top-level fields but entries and
	// the signature itself).
	header := make(map[string]any, len(top))
	for k, val := range top {
		if k != "signature" {
			header[k] = val
		}
	}
	msg, err := Message(RecordFormat, header)
	sig, _ := str("signature")
	if err == nil {
		err = VerifyHex(signer.PubKey, sig, msg)
	}
	if err != nil {
		v.add("signature", false, err.Error()+": the signed fields or the signature were changed")
	} else {
		v.add("signature", true, "Ed25519 signature by key "+signer.KeyID)
	}

	switch {
	case trusted == nil:
		v.add("signer", false, "no trusted key given to compare the signer with")
	case signer.PubKey != hex.EncodeToString(trusted):
		v.add("signer", false, fmt.Sprintf("signed by key %s, not by the trusted key %s", signer.KeyID, KeyID(trusted)))
	default:
		v.SignedByTrustedKey = true
		v.add("signer", true, "signed by the trusted key "+signer.KeyID)
	}
}

func parseSigner(x any) (Signer, error) {
	m, ok := x.(map[string]any)
	if !ok {
		return Signer{}, errors.New("missing or not an object")
	}
	var s Signer
	s.Scheme, _ = m["scheme"].(string)
	s.PubKey, _ = m["pubkey"].(string)
	s.KeyID, _ = m["key_id"].(string)
	if s.Scheme != Scheme {
		return Signer{}, fmt.Errorf("scheme %v, want %s", m["scheme"], Scheme)
	}
	pub, err := hex.DecodeString(s.PubKey)
	if err != nil || len(pub) != ed25519.PublicKeySize || !isLowerHex(s.PubKey) {
		return Signer{}, errors.New("pubkey is not 64 lower-case hex characters")
	}
	if s.KeyID != KeyID(pub) {
		return Signer{}, errors.New("key_id does not match pubkey")
	}
	return s, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
