package outbound

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestNonPublic(t *testing.T) {
	refused := []string{
		"127.0.0.1", "127.255.255.254", "::1",
		"10.0.0.1", "10.255.255.255", "172.16.0.1", "172.31.255.255", "192.168.0.1", "192.168.255.255",
		"fc00::1", "fd12:3456::1",
		"169.254.169.254", "169.254.0.1", "fe80::1", "fd00:ec2::254",
		"0.0.0.0", "0.1.2.3", "::",
		"224.0.0.1", "239.255.255.250", "ff02::1", "ff05::2", "255.255.255.255",
		"100.64.0.1", "100.127.255.255", "192.0.0.8", "192.0.2.1", "198.18.0.1", "198.19.255.255", "198.51.100.7", "203.0.113.9",
		"240.0.0.1", "2001:db8::1", "100::1",
		"::ffff:127.0.0.1", "::ffff:10.1.2.3", "::ffff:169.254.169.254",
		"64:ff9b::a00:1", "64:ff9b::7f00:1", "2002:a00:1::", "2002:c0a8:101::1", "2001:0:4136:e378:8000:63bf:f5ff:fffe", "64:ff9b:1::1",
		// IPv4-compatible (::/96) and IPv4-translated (::ffff:0:0:0/96)
		// forms, whatever they carry; deprecated site-local; benchmarking;
		// ORCHID; the 6to4 relay anycast.
		"::7f00:1", "::a00:1", "::808:808", "::ffff:0:7f00:1", "::ffff:0:808:808",
		"fec0::1", "feff::1", "2001:2::1", "2001:2:0:ffff::1", "2001:10::1", "192.88.99.1",
	}
	public := []string{"8.8.8.8", "1.1.1.1", "93.184.216.34", "172.32.0.1", "172.15.255.255", "192.169.0.1", "100.128.0.1", "11.0.0.1",
		"2606:4700:4700::1111", "2a00:1450:4001::200e", "64:ff9b::808:808", "2002:808:808::", "::ffff:8.8.4.4",
		"2001:4860:4860::8888", "2001:3::1", "1::1", "::1:0:0:1"}
	for _, a := range refused {
		if NonPublic(netip.MustParseAddr(a)) == "" {
			t.Errorf("%s is accepted as public", a)
		}
	}
	for _, a := range public {
		if why := NonPublic(netip.MustParseAddr(a)); why != "" {
			t.Errorf("%s refused: %s", a, why)
		}
	}
	// Policy: an allowed prefix, or everything.
	c := New(Policy{Allow: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")}})
	if c.Refuses(netip.MustParseAddr("10.1.2.3")) != "" || c.Refuses(netip.MustParseAddr("10.2.0.1")) == "" {
		t.Error("allow prefixes not applied")
	}
	if New(Policy{AllowPrivate: true}).Refuses(netip.MustParseAddr("127.0.0.1")) != "" {
		t.Error("allow_private not applied")
	}
}

func kindOf(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *outbound.Error", err, err)
	}
	return e
}

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}

func TestRefusesLoopbackAndRedirectsIntoPrivate(t *testing.T) {
	private := listen(t, "127.0.0.2:0", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "secret") }))
	front := listen(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+private+"/admin", http.StatusFound)
	}))
	ctx := context.Background()

	// Default policy: loopback is refused outright, by its address.
	_, err := New(Policy{}).Get(ctx, "http://"+front+"/", 1<<20)
	if e := kindOf(t, err); e.Kind != KindRefused || !strings.Contains(e.Msg, "loopback") || !strings.Contains(e.Msg, "outbound.allow_private") {
		t.Errorf("loopback: %s %q", e.Kind, e.Msg)
	}
	// A host name that resolves to loopback is refused too.
	_, err = New(Policy{}).Get(ctx, "http://localhost:"+strings.Split(front, ":")[1]+"/", 1<<20)
	if e := kindOf(t, err); e.Kind != KindRefused {
		t.Errorf("localhost: %s %q", e.Kind, e.Msg)
	}
	// 127.0.0.1 allowed, 127.0.0.2 not: the redirect hop is checked.
	c := New(Policy{Allow: loopback})
	_, err = c.Get(ctx, "http://"+front+"/", 1<<20)
	if e := kindOf(t, err); e.Kind != KindRefused || !strings.Contains(e.Msg, "127.0.0.2") {
		t.Errorf("redirect into a refused address: %s %q", e.Kind, e.Msg)
	}
	// With everything allowed the same redirect is followed.
	resp, err := New(Policy{AllowPrivate: true}).Get(ctx, "http://"+front+"/", 1<<20)
	if err != nil || string(resp.Body) != "secret" || len(resp.Redirects) != 1 || !strings.HasSuffix(resp.URL, "/admin") {
		t.Fatalf("allowed: %+v %v", resp, err)
	}
}

func listen(t *testing.T, addr string, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func TestFailuresSayWhatWentWrong(t *testing.T) {
	ctx := context.Background()
	slow := listen(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	}))
	big := listen(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write(make([]byte, 2<<20))
	}))
	var loop string
	loop = listen(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+loop+"/again", http.StatusFound)
	}))
	var authSeen atomic.Value
	secret := listen(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		authSeen.Store(r.Header.Get("Authorization") + " at " + r.URL.Path)
	}))
	withCreds := listen(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://user:hunter2@"+secret+"/next", http.StatusFound)
	}))
	bigHeaders := listen(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for i := range 40 {
			w.Header().Set(fmt.Sprintf("X-Pad-%d", i), strings.Repeat("x", 2000))
		}
	}))
	ftp := listen(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "ftp://files.example/x", http.StatusFound)
	}))
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") }))
	t.Cleanup(tlsSrv.Close)
	closed := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		a := ln.Addr().String()
		ln.Close()
		return a
	}()
	noDNS := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return nil, errors.New("no resolver in tests")
	}}
	cases := []struct {
		name   string
		policy Policy
		url    string
		kind   string
		msg    string
	}{
		{"timeout", Policy{Allow: loopback, Timeout: 200 * time.Millisecond}, "http://" + slow + "/", KindTimeout, "did not answer within 200ms"},
		{"too large", Policy{Allow: loopback}, "http://" + big + "/", KindTooLarge, "larger than 1048576 bytes"},
		{"redirect loop", Policy{Allow: loopback, MaxRedirects: 3}, "http://" + loop + "/", KindRedirects, "more than 3 redirects"},
		{"redirect to ftp", Policy{Allow: loopback}, "http://" + ftp + "/", KindBadURL, "only http and https"},
		{"untrusted certificate", Policy{Allow: loopback}, tlsSrv.URL, KindTLS, "certificate"},
		{"connection refused", Policy{Allow: loopback}, "http://" + closed + "/", KindConnect, "could not connect"},
		{"dns", Policy{Resolver: noDNS}, "http://shop.boxd-test.invalid/", KindDNS, "shop.boxd-test.invalid"},
		{"not http", Policy{}, "ftp://example.com/", KindBadURL, "not an http or https URL"},
		{"no host", Policy{}, "https:///x", KindBadURL, "not an http or https URL"},
		{"credentials", Policy{}, "https://user:pw@example.com/", KindBadURL, "user names or passwords"},
		{"redirect with credentials", Policy{Allow: loopback}, "http://" + withCreds + "/", KindBadURL, "carries a user name or password"},
		{"large headers", Policy{Allow: loopback}, "http://" + bigHeaders + "/", KindTooLarge, "response headers of " + bigHeaders + " are larger than 65536 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(c.policy).Get(ctx, c.url, 1<<20)
			e := kindOf(t, err)
			if e.Kind != c.kind || !strings.Contains(e.Msg, c.msg) {
				t.Errorf("%s: kind %s, message %q; want %s containing %q", c.url, e.Kind, e.Msg, c.kind, c.msg)
			}
			if strings.Contains(e.Msg, "hunter2") || strings.Contains(e.URL, "hunter2") {
				t.Errorf("a password is in the error: %q (URL %q)", e.Msg, e.URL)
			}
		})
	}
	if v := authSeen.Load(); v != nil {
		t.Errorf("the redirect with credentials was followed: the next hop got %q", v)
	}
	// GetPrefix keeps the first bytes of the same large body.
	resp, err := New(Policy{Allow: loopback}).GetPrefix(ctx, "http://"+big+"/", 1000)
	if err != nil || len(resp.Body) != 1000 || !resp.Truncated {
		t.Errorf("GetPrefix: %v; body %d bytes, truncated %v; want 1000, true", err, len(resp.Body), resp != nil && resp.Truncated)
	}
	resp, err = New(Policy{Allow: loopback}).GetPrefix(ctx, "http://"+big+"/", 4<<20)
	if err != nil || len(resp.Body) != 2<<20 || resp.Truncated {
		t.Errorf("GetPrefix under the limit: %v; truncated %v", err, resp != nil && resp.Truncated)
	}
	// With the test server's CA the same TLS fetch works.
	pool := tlsSrv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	resp, err = New(Policy{Allow: loopback, RootCAs: pool}).Get(ctx, tlsSrv.URL, 1<<20)
	if err != nil || string(resp.Body) != "ok" || resp.Status != 200 {
		t.Errorf("trusted TLS: %v %+v", err, resp)
	}
}

// TestHop: one hop, no redirect followed (the 302 and its Location come
// back), HEAD allowed, POST refused before anything is sent, the address
// checked as for Get.
func TestHop(t *testing.T) {
	var posts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("accept=" + r.Header.Get("Accept")))
	}))
	defer srv.Close()
	c := New(Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	ctx := context.Background()
	r, err := c.Hop(ctx, http.MethodGet, srv.URL+"/old", "", 1024)
	if err != nil || r.Status != http.StatusFound || r.Header.Get("Location") != "/new" {
		t.Fatalf("a redirect is not followed: %+v %v", r, err)
	}
	r, err = c.Hop(ctx, http.MethodGet, srv.URL+"/new", "image/*", 1024)
	if err != nil || r.Status != 200 || string(r.Body) != "accept=image/*" {
		t.Fatalf("get: %+v %v", r, err)
	}
	if r, err = c.Hop(ctx, http.MethodHead, srv.URL+"/new", "", 1024); err != nil || r.Status != 200 || len(r.Body) != 0 {
		t.Fatalf("head: %+v %v", r, err)
	}
	if _, err := c.Hop(ctx, http.MethodPost, srv.URL+"/new", "", 1024); err == nil || posts.Load() != 0 {
		t.Fatalf("a POST was fetched: %v, %d reached the server", err, posts.Load())
	}
	if _, err := c.Hop(ctx, http.MethodGet, srv.URL+"/new", "", 3); kindOf(t, err).Kind != KindTooLarge {
		t.Errorf("limit: %v", err)
	}
	if _, err := New(Policy{}).Hop(ctx, http.MethodGet, srv.URL+"/new", "", 1024); kindOf(t, err).Kind != KindRefused {
		t.Errorf("loopback fetched without being allowed: %v", err)
	}
}

// TestClosedNetworkSaysHow: under the unit's IPAddressDeny=any the kernel
// refuses a connection with EPERM; the error names the drop-in that
// opens the network instead of "operation not permitted".
func TestClosedNetworkSaysHow(t *testing.T) {
	err := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.EPERM)}
	e := New(Policy{}).classify(context.Background(), "https://shop.example/", fmt.Errorf("get: %w", err))
	if e.Kind != KindConnect || !strings.Contains(e.Msg, "network.conf") || !strings.Contains(e.Msg, "shop.example") {
		t.Errorf("kind %s, message %q", e.Kind, e.Msg)
	}
}
