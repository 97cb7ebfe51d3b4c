package fill

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/chromedp/chromedp"

	"boxd/engine/browser"
)

// DemoAction is where a demo form's Submit goes: the box's own demo
// endpoint (the form's action, under the page's own origin).
func DemoAction(id string) string { return "/fill/demo/" + id + "/submit" }

// Release presses the Submit of an approved demo run: the demo form is
// filled again in a fresh tab with no network, with the reviewed values
// only, and its Submit pressed; the one request that sends it (a POST to
// the demo form's own action) is released to the box, every other
// request refused, and a second Submit refused too. It returns the fields
// the form sent, as the box's demo endpoint received them.
func (s *Service) Release(ctx context.Context, out *Result) (map[string]string, error) {
	demo, ok := Sample(out.Demo)
	if !ok {
		return nil, fmt.Errorf("fill: run %s filled no demo form", out.ID)
	}
	var mu sync.Mutex
	var sent [][]byte
	target := browser.DocURL[:len(browser.DocURL)-1] + DemoAction(demo.ID)
	pol := browser.Policy{Network: browser.Offline, Release: func(method, u string, body []byte) bool {
		mu.Lock()
		defer mu.Unlock()
		if method != "POST" || u != target || len(sent) > 0 {
			return false
		}
		sent = append(sent, body)
		return true
	}}
	tab, err := s.Browser.Open(ctx, pol)
	if errors.Is(err, browser.ErrBusy) {
		return nil, fmt.Errorf("fill: every browser is busy: %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("fill: %w", err)
	}
	defer tab.Close()
	if err := tab.LoadHTML(demo.HTML); err != nil {
		return nil, fmt.Errorf("fill: the demo form: %w", err)
	}
	var ds []Decided
	for _, f := range out.Review.Fields {
		if f.Filled && f.Status != StatusSensitive {
			ds = append(ds, Decided{Field: Field{FID: f.FID, Selector: f.Selector, Name: f.Name}, Status: f.Status, Value: f.Value, Filled: true})
		}
	}
	if _, err := Type(ctx, tab, ds); err != nil {
		return nil, tab.Err(err)
	}
	if _, err := chromedp.Run(tab.Context(), chromedp.Evaluate[bool](`(() => { const f = document.forms[0]; if (!f) return false; f.requestSubmit(); return true; })()`)); err != nil {
		return nil, fmt.Errorf("fill: press Submit: %w", tab.Err(err))
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(sent)
		mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			return nil, errors.New("fill: the demo form's Submit sent nothing within 5 s")
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	q, err := url.ParseQuery(string(sent[0]))
	if err != nil {
		return nil, fmt.Errorf("fill: the Submit's body: %w", err)
	}
	fields := map[string]string{}
	for k, vs := range q {
		if len(vs) > 0 {
			fields[k] = vs[0]
		}
	}
	return fields, nil
}
