// Package dnstest is a DNS server on loopback for tests: it answers A and
// TXT questions from fixed tables, so a test can publish a challenge and
// name a host that resolves to a loopback server, and hands out a
// *net.Resolver that asks it (and nothing else).
package dnstest

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// Zone is what the server answers; change it between lookups with Set.
type Zone struct {
	mu  sync.Mutex
	a   map[string]netip.Addr
	txt map[string][]string
}

// SetA makes name resolve to addr.
func (z *Zone) SetA(name string, addr netip.Addr) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.a[canon(name)] = addr
}

// SetTXT publishes TXT records at name.
func (z *Zone) SetTXT(name string, recs ...string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.txt[canon(name)] = recs
}

func canon(name string) string { return strings.ToLower(strings.TrimSuffix(name, ".")) + "." }

// Serve starts the server for the test and returns its zone and a
// resolver that asks only it.
func Serve(t *testing.T) (*Zone, *net.Resolver) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	z := &Zone{a: map[string]netip.Addr{}, txt: map[string][]string{}}
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if out := z.answer(buf[:n]); out != nil {
				_, _ = pc.WriteTo(out, from)
			}
		}
	}()
	addr := pc.LocalAddr().String()
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", addr)
	}}
	return z, r
}

func (z *Zone) answer(msg []byte) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(msg)
	if err != nil {
		return nil
	}
	q, err := p.Question()
	if err != nil {
		return nil
	}
	name := strings.ToLower(q.Name.String())
	z.mu.Lock()
	a, hasA := z.a[name]
	txt, hasTXT := z.txt[name]
	z.mu.Unlock()
	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired, RecursionAvailable: true}
	if !hasA && !hasTXT {
		rh.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, rh)
	b.EnableCompression()
	_ = b.StartQuestions()
	_ = b.Question(q)
	_ = b.StartAnswers()
	rr := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 1}
	switch {
	case q.Type == dnsmessage.TypeA && hasA && a.Is4():
		_ = b.AResource(rr, dnsmessage.AResource{A: a.As4()})
	case q.Type == dnsmessage.TypeTXT && hasTXT:
		for _, t := range txt {
			_ = b.TXTResource(rr, dnsmessage.TXTResource{TXT: []string{t}})
		}
	}
	out, err := b.Finish()
	if err != nil {
		return nil
	}
	return out
}
