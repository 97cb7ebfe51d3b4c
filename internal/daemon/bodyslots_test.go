package daemon

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	fillroutes "boxd/web/routes/fill"
	retrievalroutes "boxd/web/routes/retrieval"

	"boxd/configs"
	"boxd/pipelines/fill"
	"boxd/web"
)

// Issue 34, the probe's slow and absent bodies: uploads that declared a
// large body and sent nothing held slots (2 demo tokens blocked /fill/run
// for about 23 minutes; 4 anonymous connections blocked all five verify
// routes for 266 s). Slots are now taken in admission once the body has
// arrived whole (admit.go); a body still arriving holds its connection and
// the bytes it sent (limits.body_memory_mb).

// slotVerifyRoutes share limits.record_verifications (s.bounds.verify).
var slotVerifyRoutes = []string{"/record/verify", "/flight/verify", "/docreader/verify", "/docreader/chart/verify", "/retrieval/verify"}

// stallPart is what stall sends of a body.
const stallPart = `{"vertical": "clin`

// stallWith sends a request head with a bearer token for a body of
// declared bytes and stallPart of it, and leaves the connection open.
func stallWith(t testing.TB, c net.Conn, path, token string, declared int) {
	t.Helper()
	head := "POST " + path + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
	if token != "" {
		head += "Authorization: Bearer " + token + "\r\n"
	}
	head += "Content-Length: " + strconv.Itoa(declared) + "\r\n\r\n" + stallPart
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
}

// waitBodies waits until the server counts at least n bytes of bodies
// (the stalled requests' handlers are reading them).
func waitBodies(t *testing.T, ts *testServer, n int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for ts.Server.Bodies().Held() < n {
		if time.Now().After(deadline) {
			t.Fatalf("the server counts %d bytes of bodies, want %d: the stalled requests' bodies are not being read", ts.Server.Bodies().Held(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// isBusy reports a busy limit's refusal (503 "... at once, its limit").
func isBusy(r reply) bool {
	return r.status == http.StatusServiceUnavailable && strings.Contains(string(r.body), "at once")
}

// TestSlotsOnlyAfterTheBody: as many stalled bodies as there are
// verification slots (limits.record_verifications), anonymous, and as
// many stalled /fill/run bodies as there are fill slots, from demo
// tokens, leave every verify route and /fill/run to the next caller. Before
// the fix each stalled request took its slot before its body and every
// verify route, and /fill/run, answered 503 busy until the stalled bodies'
// deadlines.
func TestSlotsOnlyAfterTheBody(t *testing.T) {
	cfg := configs.Defaults()
	cfg.Bounds.BodyReadFloorS = 60 // the stalled bodies stay stalled through the test
	ts := start(t, cfg, web.Probes{}, nil)
	slots := ts.Server.API().Verifications.Cap()
	for range slots {
		stall(t, dialFrom(t, ts, "127.0.0.2"), "POST", "/record/verify", 1<<20)
	}
	for range ts.FillGate.Cap() {
		stallWith(t, dialFrom(t, ts, "127.0.0.3"), "/fill/run", session(t, ts, fill.Vertical), fillroutes.BodyLimit-1)
	}
	waitBodies(t, ts, int64((slots+ts.FillGate.Cap())*len(stallPart)))
	for _, path := range slotVerifyRoutes {
		r := ts.do(t, call{method: "POST", path: path, body: `{"record": {}}`})
		if isBusy(r) || r.status >= 500 {
			t.Errorf("%s beside %d stalled verify bodies: %d %s", path, slots, r.status, r.body)
		}
	}
	r := ts.do(t, call{method: "POST", path: "/fill/run", token: session(t, ts, fill.Vertical), body: `{"sample_id": "clinic-intake"}`})
	if isBusy(r) {
		t.Errorf("/fill/run beside %d stalled fill bodies: %d %s", ts.FillGate.Cap(), r.status, r.body)
	}
}

// TestDeclaredBodiesAllocateNothing: 32 requests that each declare a body
// of 8 MiB and send a few bytes do not grow the heap by what they
// declared. Before the fix the body's buffer was the declared length,
// allocated before a byte arrived (256 MiB here).
func TestDeclaredBodiesAllocateNothing(t *testing.T) {
	cfg := configs.Defaults()
	cfg.Bounds.BodyReadFloorS = 60
	ts := start(t, cfg, web.Probes{}, nil)
	tok := session(t, ts, "clinical")
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	const n = 32
	for range n {
		stallWith(t, dialFrom(t, ts, "127.0.0.2"), "/retrieval/index", tok, retrievalroutes.IndexBodyLimit)
	}
	waitBodies(t, ts, n*int64(len(stallPart)))
	runtime.ReadMemStats(&ms)
	grew := int64(ms.HeapAlloc) - int64(base)
	t.Logf("%d stalled bodies declaring %d bytes each: heap grew %.1f MB", n, retrievalroutes.IndexBodyLimit, float64(grew)/1e6)
	if grew > 64<<20 {
		t.Errorf("heap grew %d bytes for %d bodies that sent %d bytes each; want far less than the %d declared", grew, n, len(stallPart), n*retrievalroutes.IndexBodyLimit)
	}
}

// TestBodyMemoryBound: the bytes of bodies held at once are bounded by
// limits.body_memory_mb, counted as they arrive: over it, a read gets 503
// busy naming the setting; a body alone on the box may be larger than the
// bound; every byte is given back when its request ends.
func TestBodyMemoryBound(t *testing.T) {
	ts := hostileServer(t, nil, func(c *configs.Config) {
		c.Bounds.BodyReadFloorS = 60
		c.Bounds.BodyMemoryMB = 1
	})
	big := bigRecord(t, ts.deps.Key, 3<<20)
	if r := ts.do(t, call{method: "POST", path: "/record/verify", body: map[string]json.RawMessage{"record": big}}); r.status != 200 {
		t.Fatalf("a 3 MiB record alone, over a 1 MiB bound: %d %.300s", r.status, r.body)
	}
	if held := ts.Server.Bodies().Held(); held != 0 {
		t.Fatalf("%d bytes still counted after the request ended", held)
	}
	// One request holds 900 KB of a body that has not ended.
	c := dialFrom(t, ts, "127.0.0.2")
	head := fmt.Sprintf("POST /record/verify HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", 2<<20)
	if _, err := io.WriteString(c, head+`{"record": "`+strings.Repeat("a", 900<<10)); err != nil {
		t.Fatal(err)
	}
	waitBodies(t, ts, 900<<10)
	r := ts.do(t, call{method: "POST", path: "/record/verify", body: map[string]json.RawMessage{"record": bigRecord(t, ts.deps.Key, 512<<10)}})
	if r.status != 503 || r.header.Get("Retry-After") == "" || !strings.Contains(r.errMsg(t), "limits.body_memory_mb") {
		t.Errorf("a body over the bound beside another: %d %v %.300s", r.status, r.header, r.body)
	}
	if r := ts.do(t, call{method: "POST", path: "/record/verify", body: `{"record": {"format": "x"}}`}); r.status != 200 {
		t.Errorf("a small body within the bound: %d %s", r.status, r.body)
	}
	_ = c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for ts.Server.Bodies().Held() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes still counted after the client left", ts.Server.Bodies().Held())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestAbsentAndSlowBodiesLoad is the bounded load test of the class: 48
// connections from two addresses declare bodies on the five verify routes
// and /fill/run and then send nothing, or a byte now and then, while a
// caller verifies on every verify route, each answered and none 503 busy;
// every hostile connection then ends by itself (408 at its deadline, 2 s
// floor) and every byte of body memory is given back. About 5 s, loopback
// only.
func TestAbsentAndSlowBodiesLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	cfg := configs.Defaults()
	cfg.Bounds.BodyReadFloorS = 2
	ts := start(t, cfg, web.Probes{}, nil)
	fillTokens := []string{session(t, ts, fill.Vertical), session(t, ts, fill.Vertical)}
	routes := append(append([]string(nil), slotVerifyRoutes...), "/fill/run")
	var hostile []net.Conn
	stop := make(chan struct{})
	var trickle sync.WaitGroup
	for i := range 48 {
		c := dialFrom(t, ts, fmt.Sprintf("127.0.0.%d", 2+i%2))
		path, token := routes[i%len(routes)], ""
		if path == "/fill/run" {
			token = fillTokens[i%2]
		}
		head := "POST " + path + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
		if token != "" {
			head += "Authorization: Bearer " + token + "\r\n"
		}
		if _, err := io.WriteString(c, head+"Content-Length: 65536\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 { // slow: a byte every 100 ms, far under the minimum rate
			trickle.Go(func() {
				for {
					select {
					case <-stop:
						return
					case <-time.After(100 * time.Millisecond):
					}
					if _, err := c.Write([]byte(" ")); err != nil {
						return
					}
				}
			})
		}
		hostile = append(hostile, c)
	}
	waitOpen(t, ts, "127.0.0.2", 24)
	for _, path := range slotVerifyRoutes {
		r := ts.do(t, call{method: "POST", path: path, body: `{"record": {}}`})
		if isBusy(r) || r.status >= 500 {
			t.Errorf("%s under the load: %d %s", path, r.status, r.body)
		}
	}
	for i, c := range hostile {
		status, _, _, err := readAnswer(c, 15*time.Second)
		if status != http.StatusRequestTimeout {
			t.Errorf("hostile connection %d: %d %v, want 408 at its deadline", i, status, err)
		}
	}
	close(stop)
	trickle.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for ts.Server.Bodies().Held() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes of body memory still counted after every hostile request ended", ts.Server.Bodies().Held())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
