package browsertest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// The recorder's addresses inside the sandbox's network namespace. The
// resolver is the only one /etc/resolv.conf names there; every name it
// is asked resolves to CanaryIP, where an HTTP server (port 80) and a TLS
// server (port 443) answer; every other address and port of the
// namespace is local too (a `local` default route), so a connection to
// anything at all is a packet on the loopback the recorder reads.
const (
	ResolverIP = "127.0.0.53"
	CanaryIP   = "127.7.7.7"
)

// ownAddrs are the loopback addresses tests serve their own hosts on
// (Host): traffic to them is the tests' own business, counted by the
// hosts themselves. Everything else that moves on the namespace's
// loopback is recorded.
var ownAddrs = []string{"127.0.0.1", "127.0.0.2", "::1"}

const sandboxEnv = "BOXD_BROWSER_SANDBOX"

// recorder is the running sandbox's recorder (nil outside one).
var recorder *Recorder

// SandboxMain runs a package's tests inside a network namespace of their
// own whose only resolver and only reachable hosts are a recorder, and
// fails the run when anything reached it: a DNS query, a TCP connection
// or a UDP datagram to any address but the tests' own loopback hosts.
// Call it from TestMain. The process re-executes itself under unshare
// (as root, or as a user with user namespaces); where that is not
// possible the tests run without the recorder and say so, except in CI
// (CI=true), where that fails.
func SandboxMain(m *testing.M) {
	// A fuzz worker (go test -fuzz) is started by its coordinator, which
	// is already in the sandbox, and talks to it over inherited pipes
	// that re-executing under unshare (or a second recorder) would lose:
	// it runs as is, in the coordinator's namespace.
	if slices.Contains(os.Args[1:], "-test.fuzzworker") {
		os.Exit(m.Run())
	}
	switch os.Getenv(sandboxEnv) {
	case "":
		os.Exit(reexec())
	case "0": // none to be had: run as is
		os.Exit(m.Run())
	}
	r, err := startSandbox()
	if err != nil {
		fmt.Fprintf(os.Stderr, "browsertest: the sandbox did not start: %v\n", err)
		os.Exit(noSandbox)
	}
	recorder = r
	code := m.Run()
	time.Sleep(300 * time.Millisecond) // late packets of the last tab
	if got := r.Seen(); len(got) > 0 {
		fmt.Fprintf(os.Stderr, "browsertest: %d things reached the sandbox's recorder (nothing may):\n  %s\n", len(got), strings.Join(got, "\n  "))
		code = 1
	}
	r.Close()
	os.Exit(code)
}

// noSandbox is the exit code of a test binary whose sandbox did not
// start (a test binary itself exits 0, 1 or 2).
const noSandbox = 3

// reexec runs this test binary again inside new network and mount
// namespaces and returns its exit code; where there are none to be had,
// it runs it without them (outside CI).
func reexec() int {
	args := []string{"--net", "--mount", "--fork"}
	if os.Geteuid() != 0 {
		args = append(args, "--map-root-user")
	}
	why := ""
	if out, err := exec.Command("unshare", append(args, "--", "true")...).CombinedOutput(); err != nil {
		why = fmt.Sprintf("unshare: %v: %s", err, bytes.TrimSpace(out))
	} else {
		code := run(append([]string{"unshare"}, append(append(args, "--"), os.Args...)...), "1")
		if code != noSandbox {
			return code
		}
		why = "the recorder did not start"
	}
	if os.Getenv("CI") == "true" {
		fmt.Fprintf(os.Stderr, "browsertest: cannot run the tests in a network namespace with the recorder (%s); CI needs it (root, util-linux, iproute2)\n", why)
		return 1
	}
	fmt.Fprintf(os.Stderr, "browsertest: no network namespace here (%s); the tests run without the recorder\n", why)
	return run(os.Args, "0")
}

// run runs argv with the sandbox variable set to env and returns its
// exit code.
func run(argv []string, env string) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), sandboxEnv+"="+env)
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		return exit.ExitCode()
	}
	fmt.Fprintf(os.Stderr, "browsertest: %v\n", err)
	return 1
}

// Sandboxed returns the running sandbox's recorder; a test that needs it
// is skipped without one (failed in CI).
func Sandboxed(t testing.TB) *Recorder {
	t.Helper()
	if recorder == nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no sandbox recorder: the package's TestMain must call browsertest.SandboxMain")
		}
		t.Skip("no sandbox recorder (no network namespace here)")
	}
	return recorder
}

// startSandbox sets the namespace up (loopback up, every address local,
// resolv.conf naming the recorder) and starts the recorder.
func startSandbox() (*Recorder, error) {
	for _, c := range [][]string{
		{"ip", "link", "set", "lo", "up"},
		{"ip", "route", "add", "local", "0.0.0.0/0", "dev", "lo"},
		{"ip", "-6", "route", "add", "local", "::/0", "dev", "lo"},
	} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("%s: %v: %s", strings.Join(c, " "), err, out)
		}
	}
	conf, err := os.CreateTemp("", "resolv-*.conf")
	if err != nil {
		return nil, err
	}
	if _, err := conf.WriteString("nameserver " + ResolverIP + "\noptions timeout:1 attempts:1\n"); err != nil {
		return nil, err
	}
	conf.Close()
	if err := syscall.Mount(conf.Name(), "/etc/resolv.conf", "", syscall.MS_BIND, ""); err != nil {
		return nil, fmt.Errorf("bind %s on /etc/resolv.conf: %w", conf.Name(), err)
	}
	return StartRecorder()
}

// Recorder answers DNS for every name and HTTP and TLS on the canary
// address, and reads every packet on the loopback; what it saw, less
// the tests' own traffic, is a leak.
type Recorder struct {
	mu    sync.Mutex
	seen  []string
	stop  chan struct{}
	wg    sync.WaitGroup
	close []func()
}

// StartRecorder starts the recorder's servers and its packet reader (in
// the sandbox's namespace: it needs the addresses above and CAP_NET_RAW).
func StartRecorder() (*Recorder, error) {
	r := &Recorder{stop: make(chan struct{})}
	if err := r.dns(); err != nil {
		r.Close()
		return nil, err
	}
	if err := r.web(); err != nil {
		r.Close()
		return nil, err
	}
	if err := r.packets(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (r *Recorder) add(s string) {
	r.mu.Lock()
	r.seen = append(r.seen, s)
	r.mu.Unlock()
}

// Seen is what reached the recorder so far, one line each: "dns NAME
// TYPE", "http METHOD HOST PATH", "tls SNI", "tcp ADDR:PORT" (a
// connection attempt), "udp ADDR:PORT" (a datagram).
func (r *Recorder) Seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}

// Reset forgets what was seen.
func (r *Recorder) Reset() {
	r.mu.Lock()
	r.seen = nil
	r.mu.Unlock()
}

// Close stops the recorder.
func (r *Recorder) Close() {
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	for _, c := range r.close {
		c()
	}
	r.wg.Wait()
}

// dns answers every A question with CanaryIP (and every other question
// with no answer), over UDP and TCP.
func (r *Recorder) dns() error {
	answer := func(q []byte) []byte {
		var p dnsmessage.Parser
		h, err := p.Start(q)
		if err != nil {
			return nil
		}
		qs, err := p.AllQuestions()
		if err != nil || len(qs) == 0 {
			return nil
		}
		for _, x := range qs {
			r.add("dns " + strings.TrimSuffix(x.Name.String(), ".") + " " + strings.TrimPrefix(x.Type.String(), "Type"))
		}
		b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired, RecursionAvailable: true})
		b.EnableCompression()
		_ = b.StartQuestions()
		for _, x := range qs {
			_ = b.Question(x)
		}
		_ = b.StartAnswers()
		for _, x := range qs {
			if x.Type == dnsmessage.TypeA {
				_ = b.AResource(dnsmessage.ResourceHeader{Name: x.Name, Class: dnsmessage.ClassINET, TTL: 60}, dnsmessage.AResource{A: [4]byte(net.ParseIP(CanaryIP).To4())})
			}
		}
		out, _ := b.Finish()
		return out
	}
	pc, err := net.ListenPacket("udp", net.JoinHostPort(ResolverIP, "53"))
	if err != nil {
		return fmt.Errorf("recorder: DNS on UDP: %w", err)
	}
	r.close = append(r.close, func() { pc.Close() })
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		buf := make([]byte, 4096)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if a := answer(buf[:n]); a != nil {
				_, _ = pc.WriteTo(a, from)
			}
		}
	}()
	ln, err := net.Listen("tcp", net.JoinHostPort(ResolverIP, "53"))
	if err != nil {
		return fmt.Errorf("recorder: DNS on TCP: %w", err)
	}
	r.close = append(r.close, func() { ln.Close() })
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				var n uint16
				if binary.Read(c, binary.BigEndian, &n) != nil {
					return
				}
				q := make([]byte, n)
				if _, err := io.ReadFull(c, q); err != nil {
					return
				}
				if a := answer(q); a != nil {
					_ = binary.Write(c, binary.BigEndian, uint16(len(a)))
					_, _ = c.Write(a)
				}
			}()
		}
	}()
	return nil
}

// web serves HTTP on port 80 and TLS (a self-signed certificate, for
// whatever name) on 443 of every address, and notes each request and
// each TLS hello.
func (r *Recorder) web() error {
	h := http.HandlerFunc(func(w http.ResponseWriter, q *http.Request) {
		r.add("http " + q.Method + " " + q.Host + " " + q.URL.Path)
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<p>recorded</p>"))
	})
	cert, err := selfSigned()
	if err != nil {
		return err
	}
	for _, port := range []string{"80", "443"} {
		ln, err := net.Listen("tcp", ":"+port)
		if err != nil {
			return fmt.Errorf("recorder: listen on %s: %w", port, err)
		}
		if port == "443" {
			ln = tls.NewListener(ln, &tls.Config{GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
				r.add("tls " + hello.ServerName)
				return &cert, nil
			}})
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ErrorLog: nil}
		r.close = append(r.close, func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_ = srv.Shutdown(ctx)
		})
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			_ = srv.Serve(ln)
		}()
	}
	return nil
}

func selfSigned() (tls.Certificate, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "recorder"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), DNSNames: []string{"*"}}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &k.PublicKey, k)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: k}, nil
}

// packets reads every packet on the loopback (an AF_PACKET socket) and
// notes each TCP connection attempt (a SYN) and each UDP datagram to an
// address that is not one of the tests' own.
func (r *Recorder) packets() error {
	const ethPAll = 0x0003
	proto := int(htons(ethPAll))
	fd, err := syscall.Socket(syscall.AF_PACKET, syscall.SOCK_DGRAM, proto)
	if err != nil {
		return fmt.Errorf("recorder: packet socket: %w", err)
	}
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		syscall.Close(fd)
		return err
	}
	if err := syscall.Bind(fd, &syscall.SockaddrLinklayer{Protocol: htons(ethPAll), Ifindex: lo.Index}); err != nil {
		syscall.Close(fd)
		return fmt.Errorf("recorder: bind the packet socket: %w", err)
	}
	tv := syscall.Timeval{Usec: 200_000}
	_ = syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer syscall.Close(fd)
		buf := make([]byte, 65536)
		for {
			select {
			case <-r.stop:
				return
			default:
			}
			n, from, err := syscall.Recvfrom(fd, buf, 0)
			if err != nil {
				continue // the timeout, to look at stop
			}
			ll, ok := from.(*syscall.SockaddrLinklayer)
			if !ok || ll.Pkttype != syscall.PACKET_HOST { // each loopback packet is also seen outgoing
				continue
			}
			if s := leak(buf[:n]); s != "" {
				r.add(s)
			}
		}
	}()
	return nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// leak describes an IP packet that counts ("" for one that does not: the
// tests' own traffic, a TCP segment that opens nothing, replies).
func leak(p []byte) string {
	if len(p) < 20 {
		return ""
	}
	var dst net.IP
	var proto byte
	var payload []byte
	switch p[0] >> 4 {
	case 4:
		ihl := int(p[0]&0x0f) * 4
		if len(p) < ihl+4 {
			return ""
		}
		dst, proto, payload = net.IP(p[16:20]), p[9], p[ihl:]
	case 6:
		if len(p) < 44 {
			return ""
		}
		dst, proto, payload = net.IP(p[24:40]), p[6], p[40:]
	default:
		return ""
	}
	for _, a := range ownAddrs {
		if dst.Equal(net.ParseIP(a)) {
			return ""
		}
	}
	port := func() string { return fmt.Sprint(binary.BigEndian.Uint16(payload[2:4])) }
	switch proto {
	case syscall.IPPROTO_TCP:
		if len(payload) < 14 || payload[13]&0x12 != 0x02 { // SYN without ACK
			return ""
		}
		return "tcp " + net.JoinHostPort(dst.String(), port())
	case syscall.IPPROTO_UDP:
		if len(payload) < 8 {
			return ""
		}
		if dst.String() == ResolverIP && port() == "53" {
			return "" // the question itself is noted by name
		}
		return "udp " + net.JoinHostPort(dst.String(), port())
	case syscall.IPPROTO_ICMP, syscall.IPPROTO_ICMPV6:
		return ""
	}
	return fmt.Sprintf("ip proto %d to %s", proto, dst)
}
