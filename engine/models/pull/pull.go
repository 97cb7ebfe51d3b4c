// Package pull downloads a model file over HTTP(S) with resume and a
// sha256 check: the bytes go to DEST.part, a later run continues from where
// an interrupted one stopped (HTTP Range), and DEST appears only once the
// whole file matches the expected hash.
package pull

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"boxd/internal/atomicfile"
)

// Options describe one download.
type Options struct {
	URL  string
	Dest string // the final path
	// SHA256 is the expected hex digest (an optional "sha256:" prefix is
	// accepted). Required: a model file is only installed once checked.
	SHA256 string
	// Header is sent with every request (for example Authorization for a
	// private mirror). Go's client drops Authorization on a redirect to
	// another host.
	Header http.Header
	// Force replaces an existing Dest.
	Force bool
	// Client defaults to one with connection and header timeouts and no
	// overall limit (model files take minutes).
	Client *http.Client
	// Progress, when set, is called as bytes arrive with the bytes of the
	// file present so far and the total (-1 when the server does not say).
	Progress func(have, total int64)
}

// Result is a finished download.
type Result struct {
	Path    string
	Size    int64
	SHA256  string
	Resumed int64 // bytes that were already in DEST.part
}

// ErrMismatch is a finished download whose sha256 is not the expected one.
var ErrMismatch = errors.New("sha256 mismatch")

// ParseSHA256 normalises an expected digest.
func ParseSHA256(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "sha256:")))
	if len(s) != 64 {
		return "", fmt.Errorf("--sha256 must be the file's 64-character hex SHA-256 (got %d characters); the model's publisher lists it next to the file", len(s))
	}
	if _, err := hex.DecodeString(s); err != nil {
		return "", fmt.Errorf("--sha256 must be hex digits: %q", s)
	}
	return s, nil
}

// Redact is the URL without its query, fragment or user information (signed
// URLs carry credentials there), for messages.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User, u.RawQuery, u.Fragment, u.ForceQuery = nil, "", "", false
	return u.String()
}

func defaultClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 60 * time.Second
	return &http.Client{Transport: t}
}

// File downloads o.URL to o.Dest.
func File(ctx context.Context, o Options) (Result, error) {
	want, err := ParseSHA256(o.SHA256)
	if err != nil {
		return Result{}, err
	}
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Result{}, fmt.Errorf("%s: give an http:// or https:// URL of the model file", Redact(o.URL))
	}
	if !o.Force {
		if _, err := os.Stat(o.Dest); err == nil {
			return Result{}, fmt.Errorf("%s exists: pass --force to replace it", o.Dest)
		}
	}
	if err := os.MkdirAll(filepath.Dir(o.Dest), 0o755); err != nil {
		return Result{}, fmt.Errorf("pull: %w", err)
	}
	client := o.Client
	if client == nil {
		client = defaultClient()
	}
	partPath := o.Dest + ".part"
	part, err := os.OpenFile(partPath, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return Result{}, fmt.Errorf("pull: %w", err)
	}
	defer part.Close()
	if err := lockFile(part); err != nil {
		return Result{}, fmt.Errorf("another pull is writing %s (%v)", partPath, err)
	}

	// What is already there counts towards the hash: the part is read once
	// to rebuild it, so a part changed between runs still fails the check.
	h := sha256.New()
	have, err := io.Copy(h, part)
	if err != nil {
		return Result{}, fmt.Errorf("pull: read %s: %w", partPath, err)
	}
	resumed := have
	total, err := fetch(ctx, client, o, part, h, &have)
	if err != nil {
		return Result{}, err
	}
	if total >= 0 && have != total {
		return Result{}, fmt.Errorf("%s: the server sent %d of %d bytes; run the same command again to resume", Redact(o.URL), have, total)
	}
	if err := part.Sync(); err != nil {
		return Result{}, fmt.Errorf("pull: %w", err)
	}
	got := hex.EncodeToString(h.Sum(nil))
	if got != want {
		_ = os.Remove(partPath)
		return Result{}, fmt.Errorf("%w: %s is %s, expected %s; the download was removed (check the URL and the digest)", ErrMismatch, Redact(o.URL), got, want)
	}
	if err := os.Rename(partPath, o.Dest); err != nil {
		return Result{}, fmt.Errorf("pull: %w", err)
	}
	_ = atomicfile.SyncDir(filepath.Dir(o.Dest))
	return Result{Path: o.Dest, Size: have, SHA256: got, Resumed: resumed}, nil
}

// fetch requests the rest of the file and appends it to part. It returns
// the file's total size (-1 when unknown).
func fetch(ctx context.Context, client *http.Client, o Options, part *os.File, h hash.Hash, have *int64) (int64, error) {
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.URL, nil)
		if err != nil {
			return 0, fmt.Errorf("pull: %w", err)
		}
		for k, vs := range o.Header {
			for _, v := range vs {
				req.Header.Add(k, v)
			}
		}
		if *have > 0 {
			req.Header.Set("Range", fmt.Sprintf("bytes=%d-", *have))
		}
		// Compressed transfer would make ranges refer to other bytes.
		req.Header.Set("Accept-Encoding", "identity")
		resp, err := client.Do(req)
		if err != nil {
			return 0, fmt.Errorf("%s: %w; run the same command again to resume", Redact(o.URL), unwrapURLError(err))
		}
		total, restart, err := plan(resp, *have)
		if err != nil {
			resp.Body.Close()
			return 0, fmt.Errorf("%s: %w", Redact(o.URL), err)
		}
		if restart {
			// The server will not continue where the part ends: start over.
			if err := part.Truncate(0); err != nil {
				resp.Body.Close()
				return 0, fmt.Errorf("pull: %w", err)
			}
			if _, err := part.Seek(0, io.SeekStart); err != nil {
				resp.Body.Close()
				return 0, fmt.Errorf("pull: %w", err)
			}
			h.Reset()
			*have = 0
			if resp.StatusCode != http.StatusOK {
				resp.Body.Close()
				if attempt > 0 {
					return 0, fmt.Errorf("%s: the server does not answer with the file", Redact(o.URL))
				}
				continue
			}
		}
		if resp.StatusCode == http.StatusRequestedRangeNotSatisfiable {
			resp.Body.Close()
			return total, nil // the part is already complete
		}
		err = copyBody(ctx, resp.Body, part, h, have, total, o.Progress)
		resp.Body.Close()
		if err != nil {
			return 0, fmt.Errorf("%s: %w after %d bytes; run the same command again to resume", Redact(o.URL), err, *have)
		}
		return total, nil
	}
}

// plan reads the response's status and range headers: the file's total
// size, and whether the bytes already present must be dropped.
func plan(resp *http.Response, have int64) (total int64, restart bool, err error) {
	switch resp.StatusCode {
	case http.StatusOK:
		total = resp.ContentLength
		return total, have > 0, nil
	case http.StatusPartialContent:
		start, _, size, ok := contentRange(resp.Header.Get("Content-Range"))
		if !ok || start != have {
			return -1, true, nil
		}
		return size, false, nil
	case http.StatusRequestedRangeNotSatisfiable:
		_, _, size, ok := contentRange(resp.Header.Get("Content-Range"))
		if ok && size == have {
			return size, false, nil
		}
		return -1, true, nil
	case http.StatusUnauthorized, http.StatusForbidden:
		return 0, false, fmt.Errorf("the server answered %s: it wants credentials; pass them with --header 'Authorization: …'", resp.Status)
	case http.StatusNotFound, http.StatusGone:
		return 0, false, fmt.Errorf("the server answered %s: check the URL (the file's name and the mirror's path)", resp.Status)
	default:
		return 0, false, fmt.Errorf("the server answered %s", resp.Status)
	}
}

// contentRange parses "bytes START-END/SIZE" or "bytes */SIZE" (SIZE may be
// "*": -1).
func contentRange(v string) (start, end, size int64, ok bool) {
	rest, found := strings.CutPrefix(v, "bytes ")
	if !found {
		return 0, 0, 0, false
	}
	span, sz, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, 0, false
	}
	size = -1
	if sz != "*" {
		n, err := strconv.ParseInt(sz, 10, 64)
		if err != nil || n < 0 {
			return 0, 0, 0, false
		}
		size = n
	}
	if span == "*" {
		return -1, -1, size, true
	}
	a, b, found := strings.Cut(span, "-")
	if !found {
		return 0, 0, 0, false
	}
	s, err1 := strconv.ParseInt(a, 10, 64)
	e, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || s < 0 || e < s {
		return 0, 0, 0, false
	}
	return s, e, size, true
}

func copyBody(ctx context.Context, body io.Reader, part *os.File, h hash.Hash, have *int64, total int64, progress func(int64, int64)) error {
	buf := make([]byte, 1<<20)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, rerr := body.Read(buf)
		if n > 0 {
			if _, err := part.Write(buf[:n]); err != nil {
				return fmt.Errorf("write: %w", err)
			}
			h.Write(buf[:n])
			*have += int64(n)
			if progress != nil {
				progress(*have, total)
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return unwrapURLError(rerr)
		}
	}
}

// lockFile takes an exclusive lock on f without waiting, so two pulls never
// write one part file.
func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
