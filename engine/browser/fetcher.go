package browser

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// ClientFetcher fetches a tab's requests with an http.Client, one hop (a
// redirect comes back to the browser, whose policy sees the next URL).
// It applies no address rules of its own: it is for servers of the box's
// own (the ACT runner's test cases) and tests. Audits of other hosts use
// outbound's fetcher, which refuses private, loopback and link-local
// addresses.
type ClientFetcher struct {
	Client *http.Client // nil: a client with a 30 s timeout
	// MaxBytes bounds a body (0: 16 MiB); a longer one fails the request.
	MaxBytes int64
}

// Fetch fetches one request.
func (f ClientFetcher) Fetch(ctx context.Context, method, url, accept string) (Fetched, error) {
	c := f.Client
	if c == nil {
		c = &http.Client{Timeout: 30 * time.Second}
	}
	one := *c
	one.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return Fetched{}, fmt.Errorf("fetch %s: %w", url, err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := one.Do(req)
	if err != nil {
		return Fetched{}, fmt.Errorf("fetch %s: %w", url, err)
	}
	defer resp.Body.Close()
	limit := cmp.Or(f.MaxBytes, 16<<20)
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return Fetched{}, fmt.Errorf("fetch %s: %w", url, err)
	}
	if int64(len(body)) > limit {
		return Fetched{}, errors.New("fetch " + url + ": the body is larger than the tab takes")
	}
	return Fetched{Status: resp.StatusCode, Header: resp.Header, Body: body}, nil
}
