package crashtest

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"boxd/engine/attest"
	"boxd/internal/store"
)

// maxHeldPerOwner is pipelines/retrieval's bound on one owner's indexes:
// an owner's oldest is dropped (its file removed) for a new one.
const maxHeldPerOwner = 8

// sqliteHeader starts every SQLite database file.
var sqliteHeader = []byte("SQLite format 3\x00")

// databases lists the SQLite databases under dir.
func databases(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		head := make([]byte, len(sqliteHeader))
		if n, _ := f.Read(head); n == len(head) && bytes.Equal(head, sqliteHeader) {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// integrity runs PRAGMA integrity_check and foreign_key_check on one
// database; "" when both are clean.
func integrity(path string) string {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return fmt.Sprintf("%s: open: %v", path, err)
	}
	defer db.Close()
	rows, err := db.Query(`PRAGMA integrity_check`)
	if err != nil {
		return fmt.Sprintf("%s: integrity_check: %v", path, err)
	}
	var lines []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return fmt.Sprintf("%s: integrity_check: %v", path, err)
		}
		lines = append(lines, s)
	}
	rows.Close()
	if len(lines) != 1 || lines[0] != "ok" {
		return fmt.Sprintf("%s: integrity_check: %q", path, lines)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM pragma_foreign_key_check`).Scan(&n); err != nil || n != 0 {
		return fmt.Sprintf("%s: foreign_key_check: %d rows (%v)", path, n, err)
	}
	return ""
}

type dbKey struct {
	hash, label string
	revoked     bool
}

type dbUsage struct{ tokens, requests int64 }

// dbState is what boxd.db holds.
type dbState struct {
	keys     map[string]dbKey
	usage    map[string]dbUsage
	receipts map[string][]byte
	domains  map[string]string // key id + " " + domain -> token
}

func readDB(path string) (*dbState, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	s := &dbState{keys: map[string]dbKey{}, usage: map[string]dbUsage{}, receipts: map[string][]byte{}, domains: map[string]string{}}
	q := func(query string, scan func(*sql.Rows) error) error {
		rows, err := db.Query(query)
		if err != nil {
			return fmt.Errorf("%s: %w", query, err)
		}
		defer rows.Close()
		for rows.Next() {
			if err := scan(rows); err != nil {
				return fmt.Errorf("%s: %w", query, err)
			}
		}
		return rows.Err()
	}
	err = q(`SELECT key_id, key_sha256, label, revoked_at IS NOT NULL FROM keys`, func(r *sql.Rows) error {
		var id string
		var k dbKey
		err := r.Scan(&id, &k.hash, &k.label, &k.revoked)
		s.keys[id] = k
		return err
	})
	if err == nil {
		err = q(`SELECT key_id, SUM(llm_tokens), SUM(requests) FROM usage GROUP BY key_id`, func(r *sql.Rows) error {
			var id string
			var u dbUsage
			err := r.Scan(&id, &u.tokens, &u.requests)
			s.usage[id] = u
			return err
		})
	}
	if err == nil {
		err = q(`SELECT id, body FROM receipts`, func(r *sql.Rows) error {
			var id, body string
			err := r.Scan(&id, &body)
			s.receipts[id] = []byte(body)
			return err
		})
	}
	if err == nil {
		err = q(`SELECT key_id, domain, token FROM domains`, func(r *sql.Rows) error {
			var k, d, tok string
			err := r.Scan(&k, &d, &tok)
			s.domains[k+" "+d] = tok
			return err
		})
	}
	return s, err
}

// identity is the signing key as the state directory and the box show it.
type identity struct {
	fileSHA256 string
	pub        ed25519.PublicKey
	keyID      string
}

func keyFileHash(state string) string {
	b, err := os.ReadFile(filepath.Join(state, attest.KeyFile))
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// checkState compares the state directory, with boxd down, to the
// ledger; it resolves index sends that were in flight at the kill. It
// returns what is wrong.
func checkState(state string, l *ledger, id *identity) []string {
	var bad []string
	add := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	if id.fileSHA256 != "" {
		if got := keyFileHash(state); got != id.fileSHA256 {
			add("signing key file %s: sha256 %s, was %s", attest.KeyFile, got, id.fileSHA256)
		}
	}
	dbs, err := databases(state)
	if err != nil {
		add("listing the state directory: %v", err)
	}
	for _, p := range dbs {
		if msg := integrity(p); msg != "" {
			add("%s", msg)
		}
	}
	main := filepath.Join(state, store.File)
	if _, err := os.Stat(main); err != nil {
		return append(bad, fmt.Sprintf("%s: %v", store.File, err))
	}
	if !slices.Contains(dbs, main) && l.acked[opKeyCreate] > 0 {
		add("%s is not a SQLite database", store.File)
	}
	db, err := readDB(main)
	if err != nil {
		return append(bad, fmt.Sprintf("reading %s: %v", store.File, err))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	bad = append(bad, checkKeys(db, l)...)
	bad = append(bad, checkReceipts(db, l, id.pub)...)
	for key, d := range l.domains {
		if tok, ok := db.domains[key]; d.acked && (!ok || tok != d.token) {
			add("domain %s of key %s: acknowledged with token %s, stored %q (present %v)", d.domain, d.keyID, d.token, tok, ok)
		}
	}
	for key := range db.domains {
		if l.domains[key] == nil {
			add("domain challenge %q is stored but was never asked for", key)
		}
	}
	bad = append(bad, checkReports(filepath.Join(state, "studio", "reports"), l)...)
	bad = append(bad, checkIndexes(filepath.Join(state, "retrieval"), l)...)
	if b, err := os.ReadFile(filepath.Join(state, "weights-hashes.json")); err == nil && !json.Valid(b) {
		add("weights-hashes.json is not whole JSON (%d bytes)", len(b))
	}
	return bad
}

func checkKeys(db *dbState, l *ledger) []string {
	var bad []string
	for _, k := range l.keys {
		if !k.acked {
			continue
		}
		row, ok := db.keys[k.id]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("key %s (%s) was acknowledged and is gone", k.id, k.label))
			continue
		case row.label != k.label || row.hash != store.HashSecret(k.secret):
			bad = append(bad, fmt.Sprintf("key %s: stored label %q, hash %s; sent %q, hash %s", k.id, row.label, row.hash, k.label, store.HashSecret(k.secret)))
		case k.revokeAcked && !row.revoked:
			bad = append(bad, fmt.Sprintf("key %s: its revocation was acknowledged and it is not revoked", k.id))
		}
		u := db.usage[k.id]
		if u.requests < k.ackedReq || u.requests > k.sentReq {
			bad = append(bad, fmt.Sprintf("key %s: %d requests counted; %d answered 2xx, %d sent", k.id, u.requests, k.ackedReq, k.sentReq))
		}
		if u.tokens < k.ackedTok || (!k.fill && u.tokens > k.sentTok) {
			bad = append(bad, fmt.Sprintf("key %s: %d tokens charged; %d answered, at most %d asked", k.id, u.tokens, k.ackedTok, k.sentTok))
		}
	}
	for id, row := range db.keys {
		k := l.byLabel[row.label]
		switch {
		case k == nil:
			bad = append(bad, fmt.Sprintf("key %s (%q) is stored but was never asked for", id, row.label))
		case k.acked && k.id != id:
			bad = append(bad, fmt.Sprintf("label %q: key %s stored, %s acknowledged", row.label, id, k.id))
		case row.revoked && !k.revokeSent:
			bad = append(bad, fmt.Sprintf("key %s is revoked but no revocation was sent", id))
		}
	}
	for id := range db.usage {
		if _, ok := db.keys[id]; !ok {
			bad = append(bad, fmt.Sprintf("usage of key %s, which is not stored", id))
		}
	}
	return bad
}

// checkReceipts: each acknowledged receipt is stored, every stored one is
// whole and signed by this box for a known key, and no key's receipts
// count more generated tokens than its usage charged.
func checkReceipts(db *dbState, l *ledger, pub ed25519.PublicKey) []string {
	var bad []string
	for id, keyID := range l.receipts {
		if _, ok := db.receipts[id]; !ok {
			bad = append(bad, fmt.Sprintf("receipt %s (key %s) was acknowledged and is gone", id, keyID))
		}
	}
	generated := map[string]int64{}
	for id, body := range db.receipts {
		var st struct {
			Receipt attest.SignedModelCall `json:"receipt"`
		}
		if err := json.Unmarshal(body, &st); err != nil {
			bad = append(bad, fmt.Sprintf("receipt %s: not whole JSON: %v", id, err))
			continue
		}
		for _, c := range attest.CheckModelCall(st.Receipt, pub) {
			if !c.OK {
				bad = append(bad, fmt.Sprintf("receipt %s: check %s failed: %s", id, c.Name, c.Detail))
			}
		}
		if st.Receipt.ID != id || st.Receipt.KeyID == nil || l.byID[*st.Receipt.KeyID] == nil {
			bad = append(bad, fmt.Sprintf("receipt %s: id %q, key %v: not a call the clients made", id, st.Receipt.ID, st.Receipt.KeyID))
			continue
		}
		n, _ := strconv.ParseInt(st.Receipt.Usage.CompletionTokens, 10, 64)
		generated[*st.Receipt.KeyID] += n
	}
	for keyID, n := range generated {
		if u := db.usage[keyID]; n > u.tokens {
			bad = append(bad, fmt.Sprintf("key %s: its stored receipts count %d generated tokens, its usage %d", keyID, n, u.tokens))
		}
	}
	return bad
}

// checkReports: every report file is whole and was sent; every
// acknowledged report has its file.
func checkReports(dir string, l *ledger) []string {
	var bad []string
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return []string{fmt.Sprintf("studio reports: %v", err)}
	}
	byID := map[string]string{}
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue // a temporary file a kill left; never read as a report
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		var r struct {
			ReportID string `json:"report_id"`
			Item     string `json:"item"`
			Details  string `json:"details"`
		}
		if err != nil || json.Unmarshal(b, &r) != nil {
			bad = append(bad, fmt.Sprintf("studio report %s is not whole JSON (%d bytes)", name, len(b)))
			continue
		}
		if r.ReportID+".json" != name || r.Item != reportItem || l.reports[r.Details] == nil {
			bad = append(bad, fmt.Sprintf("studio report %s (%q, item %q) was never sent", name, r.Details, r.Item))
		}
		byID[r.ReportID] = r.Details
	}
	for nonce, r := range l.reports {
		if r.acked && byID[r.id] != nonce {
			bad = append(bad, fmt.Sprintf("studio report %s was acknowledged and its file is gone or changed", r.id))
		}
	}
	return bad
}

// checkIndexes: each owner's persisted indexes are exactly the newest
// maxHeldPerOwner it was answered for, the one in flight at the kill
// either there or not. A new index's file is written before the
// owner's oldest is removed, so a kill between the two leaves one more
// (never one less), which the next start removes.
func checkIndexes(dir string, l *ledger) []string {
	var bad []string
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	onDisk := map[string]map[string]bool{} // owner -> texts
	for _, f := range files {
		b, err := os.ReadFile(f)
		var p struct {
			V     string `json:"v"`
			Owner string `json:"owner"`
			Hash  string `json:"hash"`
			Docs  []struct {
				Text string `json:"text"`
			} `json:"documents"`
		}
		if err != nil || json.Unmarshal(b, &p) != nil || len(p.Docs) != 1 {
			bad = append(bad, fmt.Sprintf("persisted index %s is not whole (%d bytes)", filepath.Base(f), len(b)))
			continue
		}
		if !strings.HasSuffix(f, p.Hash+".json") {
			bad = append(bad, fmt.Sprintf("persisted index %s holds index %s", filepath.Base(f), p.Hash))
		}
		if onDisk[p.Owner] == nil {
			onDisk[p.Owner] = map[string]bool{}
		}
		onDisk[p.Owner][p.Docs[0].Text] = true
	}
	for owner := range onDisk {
		if _, ok := l.indexes[owner]; !ok {
			bad = append(bad, fmt.Sprintf("persisted indexes of %s, which never indexed", owner))
		}
	}
	for owner, sends := range l.indexes {
		var eff []string
		var open *indexSend
		unfinished := false // the newest effective send was never answered: its replacement may be unfinished
		for _, s := range sends {
			switch {
			case s.effective():
				eff = append(eff, s.text)
				unfinished = !s.acked
			case s.unresolved():
				if open != nil { // an earlier one never resolved: cannot happen
					bad = append(bad, fmt.Sprintf("owner %s: two index sends in flight", owner))
				}
				open = s
			}
		}
		// What may be on disk: the newest maxHeldPerOwner, or one more
		// while a replacement is unfinished.
		allowed := func(eff []string, unfinished bool) [][]string {
			out := [][]string{lastN(eff, maxHeldPerOwner)}
			if unfinished && len(eff) > maxHeldPerOwner {
				out = append(out, lastN(eff, maxHeldPerOwner+1))
			}
			return out
		}
		got := onDisk[owner]
		if len(got) > maxHeldPerOwner {
			l.replacing++
		}
		matches := func(sets [][]string) bool {
			for _, set := range sets {
				if sameSet(got, set) {
					return true
				}
			}
			return false
		}
		switch {
		case matches(allowed(eff, unfinished)):
			if open != nil {
				open.resolved = true
			}
		case open != nil && matches(allowed(append(eff, open.text), true)):
			open.resolved, open.present = true, true
		default:
			want := lastN(eff, maxHeldPerOwner)
			bad = append(bad, fmt.Sprintf("owner %s holds %d persisted indexes, not the newest %d it was answered for: missing %q, unexpected %q",
				owner, len(got), len(want), missing(got, want), extra(got, want, open)))
			if open != nil {
				open.resolved, open.present = true, got[open.text]
			}
		}
	}
	return bad
}

func lastN(s []string, n int) []string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func sameSet(got map[string]bool, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for _, w := range want {
		if !got[w] {
			return false
		}
	}
	return true
}

func missing(got map[string]bool, want []string) []string {
	var out []string
	for _, w := range want {
		if !got[w] {
			out = append(out, w)
		}
	}
	return out
}

func extra(got map[string]bool, want []string, open *indexSend) []string {
	var out []string
	for g := range got {
		if !slices.Contains(want, g) && (open == nil || g != open.text) {
			out = append(out, g)
		}
	}
	return out
}

// checkOnline asks the restarted box about what the clients were told
// before the kill: a sample of keys (they authenticate, with their domain
// challenges), revoked keys (401), receipts (served) and persisted indexes
// (searchable).
func checkOnline(ctx context.Context, c *client, l *ledger, pick func(n int) int) []string {
	var bad []string
	l.mu.Lock()
	var live, revoked []*keyRec
	for _, k := range l.keys {
		switch {
		case k.revokeAcked:
			revoked = append(revoked, k)
		case k.acked && !k.revokeSent && !k.owner && !k.fill:
			live = append(live, k)
		}
	}
	var receipts []string
	for id := range l.receipts {
		receipts = append(receipts, id)
	}
	slices.Sort(receipts)
	type ix struct {
		k    *keyRec
		hash string
	}
	var indexes []ix
	for _, o := range l.owners {
		var eff []*indexSend
		for _, s := range l.indexes[o.id] {
			if s.effective() && s.hash != "" {
				eff = append(eff, s)
			}
		}
		if len(eff) > 0 {
			indexes = append(indexes, ix{o, eff[len(eff)-1].hash})
		}
	}
	l.mu.Unlock()
	sample := func(n int) []int {
		var out []int
		for range min(n, 3) {
			out = append(out, pick(n))
		}
		return out
	}
	for _, i := range sample(len(live)) {
		k := live[i]
		t0 := l.begin(opCheck)
		st, raw, _, err := c.keyed(ctx, l, k, http.MethodGet, "/a11y/domains", nil)
		l.end(opCheck, err == nil && st == http.StatusOK, t0)
		var out struct {
			Domains []struct {
				Domain string `json:"domain"`
				Token  string `json:"token"`
			} `json:"domains"`
		}
		if err != nil || st != http.StatusOK || json.Unmarshal(raw, &out) != nil {
			bad = append(bad, fmt.Sprintf("key %s after restart: GET /a11y/domains %d %v %.200s", k.id, st, err, raw))
			continue
		}
		have := map[string]string{}
		for _, d := range out.Domains {
			have[d.Domain] = d.Token
		}
		l.mu.Lock()
		for _, d := range l.domains {
			if d.keyID == k.id && d.acked && have[d.domain] != d.token {
				bad = append(bad, fmt.Sprintf("key %s after restart: domain %s lists token %q, acknowledged %q", k.id, d.domain, have[d.domain], d.token))
			}
		}
		l.mu.Unlock()
	}
	for _, i := range sample(len(revoked)) {
		k := revoked[i]
		st, raw, _, err := c.keyed(ctx, l, k, http.MethodGet, "/a11y/domains", nil)
		if err != nil || st != http.StatusUnauthorized {
			bad = append(bad, fmt.Sprintf("revoked key %s after restart: %d %v %.200s (want 401)", k.id, st, err, raw))
		}
	}
	for _, i := range sample(len(receipts)) {
		st, raw, _, err := c.do(ctx, c.hc, http.MethodGet, "/receipts/"+receipts[i], "", nil)
		if err != nil || st != http.StatusOK {
			bad = append(bad, fmt.Sprintf("receipt %s after restart: %d %v %.200s", receipts[i], st, err, raw))
		}
	}
	for _, i := range sample(len(indexes)) {
		x := indexes[i]
		t0 := l.begin(opCheck)
		st, raw, _, err := c.keyed(ctx, l, x.k, http.MethodPost, "/retrieval/search", map[string]any{"index": x.hash, "query": "pressure after the filter change", "k": 1})
		l.end(opCheck, err == nil && st == http.StatusOK, t0)
		if err != nil || st != http.StatusOK {
			bad = append(bad, fmt.Sprintf("index %s of %s after restart: search %d %v %.200s", x.hash, x.k.id, st, err, raw))
			continue
		}
		// The search's own receipt (rs-) is signed, not stored; its model
		// calls' receipts (the query's embedding) are stored.
		var out struct {
			ModelCalls []struct {
				ID string `json:"id"`
			} `json:"model_calls"`
		}
		if json.Unmarshal(raw, &out) == nil {
			l.mu.Lock()
			for _, mc := range out.ModelCalls {
				l.receipts[mc.ID] = x.k.id
			}
			l.mu.Unlock()
		}
	}
	return bad
}
