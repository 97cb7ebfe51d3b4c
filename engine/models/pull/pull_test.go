package pull

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// mirror is a loopback file server whose behaviour a test sets.
type mirror struct {
	blob []byte
	sum  string

	mu        sync.Mutex
	ignore    bool  // answer 200 with the whole file whatever the Range
	cutAfter  int64 // close the connection after this many body bytes (0: never)
	badStart  bool  // answer 206 with a range that does not start where asked
	status    int   // answer this status instead
	wantAuth  string
	ranges    []string
	bodyBytes int64
}

func newMirror(t *testing.T, n int) (*mirror, *httptest.Server) {
	r := rand.New(rand.NewPCG(1, 2))
	m := &mirror{blob: make([]byte, n)}
	for i := range m.blob {
		m.blob[i] = byte(r.IntN(256))
	}
	s := sha256.Sum256(m.blob)
	m.sum = hex.EncodeToString(s[:])
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return m, srv
}

type countingWriter struct {
	http.ResponseWriter
	m    *mirror
	left int64
}

func (w *countingWriter) Write(p []byte) (int, error) {
	if w.left > 0 && int64(len(p)) >= w.left {
		n, _ := w.ResponseWriter.Write(p[:w.left])
		w.m.mu.Lock()
		w.m.bodyBytes += int64(n)
		w.m.mu.Unlock()
		panic(http.ErrAbortHandler) // drop the connection mid-body
	}
	if w.left > 0 {
		w.left -= int64(len(p))
	}
	n, err := w.ResponseWriter.Write(p)
	w.m.mu.Lock()
	w.m.bodyBytes += int64(n)
	w.m.mu.Unlock()
	return n, err
}

func (m *mirror) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	m.ranges = append(m.ranges, r.Header.Get("Range"))
	ignore, cut, badStart, status, auth := m.ignore, m.cutAfter, m.badStart, m.status, m.wantAuth
	m.cutAfter = 0 // only the first request is cut
	m.mu.Unlock()
	if r.URL.Path != "/models/m.gguf" {
		http.NotFound(w, r)
		return
	}
	if auth != "" && r.Header.Get("Authorization") != auth {
		http.Error(w, "no", http.StatusUnauthorized)
		return
	}
	if status != 0 {
		http.Error(w, "nope", status)
		return
	}
	cw := &countingWriter{ResponseWriter: w, m: m, left: cut}
	if badStart && r.Header.Get("Range") != "" {
		w.Header().Set("Content-Range", "bytes 0-9/"+strconv.Itoa(len(m.blob)))
		w.WriteHeader(http.StatusPartialContent)
		_, _ = cw.Write(m.blob[:10])
		return
	}
	if ignore {
		r.Header.Del("Range")
	}
	http.ServeContent(cw, r, "m.gguf", time.Time{}, bytes.NewReader(m.blob))
}

func TestPullDownloadsAndChecks(t *testing.T) {
	m, srv := newMirror(t, 3<<20+17)
	dest := filepath.Join(t.TempDir(), "models", "m.gguf")
	var calls int
	var last [2]int64
	res, err := File(context.Background(), Options{URL: srv.URL + "/models/m.gguf", Dest: dest, SHA256: "sha256:" + strings.ToUpper(m.sum),
		Progress: func(have, total int64) { calls++; last = [2]int64{have, total} }})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(dest)
	if !bytes.Equal(got, m.blob) || res.SHA256 != m.sum || res.Size != int64(len(m.blob)) || res.Resumed != 0 {
		t.Fatalf("result %+v (file %d bytes)", res, len(got))
	}
	if _, err := os.Stat(dest + ".part"); !errors.Is(err, os.ErrNotExist) {
		t.Error("the .part file is left behind")
	}
	if calls == 0 || last != [2]int64{int64(len(m.blob)), int64(len(m.blob))} {
		t.Errorf("progress: %d calls, last %v", calls, last)
	}
	// Existing destination.
	if _, err := File(context.Background(), Options{URL: srv.URL + "/models/m.gguf", Dest: dest, SHA256: m.sum}); err == nil || !strings.Contains(err.Error(), "pass --force") {
		t.Errorf("existing file: %v", err)
	}
	if _, err := File(context.Background(), Options{URL: srv.URL + "/models/m.gguf", Dest: dest, SHA256: m.sum, Force: true}); err != nil {
		t.Errorf("--force: %v", err)
	}
}

// TestPullResumes: an interrupted download keeps its bytes and the next run
// asks only for the rest; servers that ignore or mangle ranges make it start
// over, and the result is always the checked file.
func TestPullResumes(t *testing.T) {
	const size = 2<<20 + 5
	for _, c := range []struct {
		name      string
		set       func(m *mirror)
		wantRange bool
	}{
		{"range honoured", func(m *mirror) {}, true},
		{"range ignored", func(m *mirror) { m.ignore = true }, false},
		{"range starts elsewhere", func(m *mirror) { m.badStart = true }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, srv := newMirror(t, size)
			dest := filepath.Join(t.TempDir(), "m.gguf")
			o := Options{URL: srv.URL + "/models/m.gguf?token=secret", Dest: dest, SHA256: m.sum}
			m.cutAfter = 1 << 20
			_, err := File(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), "run the same command again to resume") {
				t.Fatalf("cut transfer: %v", err)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("the error shows the URL's query: %v", err)
			}
			st, err := os.Stat(dest + ".part")
			if err != nil || st.Size() == 0 || st.Size() >= size {
				t.Fatalf("part after the cut: %v %v", st, err)
			}
			kept := st.Size()
			c.set(m)
			m.mu.Lock()
			m.bodyBytes = 0
			m.mu.Unlock()
			res, err := File(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(dest)
			if !bytes.Equal(got, m.blob) {
				t.Fatal("resumed file differs from the source")
			}
			m.mu.Lock()
			defer m.mu.Unlock()
			if last := m.ranges[len(m.ranges)-1]; c.wantRange {
				if last != "bytes="+strconv.FormatInt(kept, 10)+"-" || m.bodyBytes != size-kept || res.Resumed != kept {
					t.Errorf("asked %q, received %d bytes, resumed %d; want the %d bytes after %d", last, m.bodyBytes, res.Resumed, size-kept, kept)
				}
			} else if m.bodyBytes < size {
				t.Errorf("started over but received only %d bytes", m.bodyBytes)
			}
		})
	}
}

func TestPullRefusals(t *testing.T) {
	m, srv := newMirror(t, 4096)
	dir := t.TempDir()
	url := srv.URL + "/models/m.gguf"
	for _, c := range []struct {
		name string
		o    Options
		set  func()
		want string
	}{
		{"no digest", Options{URL: url, Dest: filepath.Join(dir, "a")}, nil, "64-character hex SHA-256"},
		{"short digest", Options{URL: url, Dest: filepath.Join(dir, "a"), SHA256: "abc"}, nil, "64-character"},
		{"not hex", Options{URL: url, Dest: filepath.Join(dir, "a"), SHA256: strings.Repeat("z", 64)}, nil, "hex digits"},
		{"not http", Options{URL: "ftp://example/m.gguf", Dest: filepath.Join(dir, "a"), SHA256: m.sum}, nil, "http:// or https://"},
		{"relative URL", Options{URL: "m.gguf", Dest: filepath.Join(dir, "a"), SHA256: m.sum}, nil, "http:// or https://"},
		{"404", Options{URL: srv.URL + "/other.gguf", Dest: filepath.Join(dir, "b"), SHA256: m.sum}, nil, "404 Not Found: check the URL"},
		{"500", Options{URL: url, Dest: filepath.Join(dir, "c"), SHA256: m.sum}, func() { m.status = 500 }, "500 Internal Server Error"},
		{"unauthorised", Options{URL: url, Dest: filepath.Join(dir, "d"), SHA256: m.sum}, func() { m.status = 0; m.wantAuth = "Bearer t" }, "401 Unauthorized: it wants credentials; pass them with --header"},
		{"refused", Options{URL: "http://127.0.0.1:1/m.gguf", Dest: filepath.Join(dir, "e"), SHA256: m.sum}, nil, "connection refused"},
	} {
		if c.set != nil {
			c.set()
		}
		_, err := File(context.Background(), c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.name, err, c.want)
		}
		if _, serr := os.Stat(c.o.Dest); serr == nil {
			t.Errorf("%s: the destination was written", c.name)
		}
	}
	// The header reaches the mirror.
	if _, err := File(context.Background(), Options{URL: url, Dest: filepath.Join(dir, "ok"), SHA256: m.sum, Header: http.Header{"Authorization": {"Bearer t"}}}); err != nil {
		t.Errorf("with the header: %v", err)
	}
	m.wantAuth = ""

	// A wrong digest removes the download and installs nothing.
	wrong := strings.Repeat("0", 64)
	dest := filepath.Join(dir, "wrong.gguf")
	_, err := File(context.Background(), Options{URL: url, Dest: dest, SHA256: wrong})
	if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), m.sum) || !strings.Contains(err.Error(), wrong) {
		t.Errorf("mismatch: %v", err)
	}
	for _, p := range []string{dest, dest + ".part"} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left after a mismatch", p)
		}
	}

	// A complete part whose server answers 416 to the range is checked and
	// installed.
	dest = filepath.Join(dir, "complete.gguf")
	if err := os.WriteFile(dest+".part", m.blob, 0o644); err != nil {
		t.Fatal(err)
	}
	if res, err := File(context.Background(), Options{URL: url, Dest: dest, SHA256: m.sum}); err != nil || res.Resumed != int64(len(m.blob)) {
		t.Errorf("complete part: %+v %v", res, err)
	}

	// A second pull into the same part waits for nobody: it is refused.
	dest = filepath.Join(dir, "locked.gguf")
	f, err := os.OpenFile(dest+".part", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := lockFile(f); err != nil {
		t.Fatal(err)
	}
	if _, err := File(context.Background(), Options{URL: url, Dest: dest, SHA256: m.sum}); err == nil || !strings.Contains(err.Error(), "another pull is writing") {
		t.Errorf("concurrent pull: %v", err)
	}

	// Cancellation stops the transfer.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := File(ctx, Options{URL: url, Dest: filepath.Join(dir, "cancelled"), SHA256: m.sum}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestContentRange(t *testing.T) {
	for _, c := range []struct {
		in             string
		start, end, sz int64
		ok             bool
	}{
		{"bytes 0-9/100", 0, 9, 100, true},
		{"bytes 10-99/*", 10, 99, -1, true},
		{"bytes */100", -1, -1, 100, true},
		{"bytes 9-0/100", 0, 0, 0, false},
		{"bytes 0-9", 0, 0, 0, false},
		{"items 0-9/10", 0, 0, 0, false},
		{"bytes a-9/10", 0, 0, 0, false},
		{"bytes 0-9/-1", 0, 0, 0, false},
	} {
		s, e, sz, ok := contentRange(c.in)
		if ok != c.ok || (ok && (s != c.start || e != c.end || sz != c.sz)) {
			t.Errorf("%q: %d %d %d %v", c.in, s, e, sz, ok)
		}
	}
}
