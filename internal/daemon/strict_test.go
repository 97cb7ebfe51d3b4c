package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	liveroutes "boxd/web/routes/live"

	"github.com/coder/websocket"

	"boxd/configs"
	"boxd/engine/attest"
	"boxd/internal/records"
)

// rawRequest writes req on a new connection and reads one response
// (closing the connection after it).
func rawRequest(t *testing.T, ts *testServer, req string) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%.60q: reading the response: %v", req, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

// jsonError checks that a response is {"error": "..."} JSON and returns
// the message.
func jsonErrorOf(t *testing.T, what string, resp *http.Response, body []byte) string {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q, body %q", what, ct, body)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Errorf("%s: body is not JSON: %q", what, body)
		return ""
	}
	msg, ok := m["error"].(string)
	if !ok || msg == "" || len(m) != 1 {
		t.Errorf("%s: body is not {\"error\": …}: %s", what, body)
	}
	return msg
}

// TestServerErrorsAreJSON (issue 15, item 9): the answers net/http writes
// itself before any handler runs (400, 431, 501, 505, 417), CONNECT,
// unclean paths the mux would redirect, the mux's /tree → /tree/ redirect
// and the WebSocket library's handshake refusals are all {"error"} JSON.
func TestServerErrorsAreJSON(t *testing.T) {
	ts := platformServer(t, nil, nil)
	const host = "Host: localhost\r\n"
	bigHeader := "X-Big: " + strings.Repeat("a", 70<<10) + "\r\n"
	cases := []struct {
		name, req string
		status    int
		want      string
	}{
		{"garbage request line", "GARBAGE\r\n\r\n", 400, "malformed HTTP request"},
		{"missing Host", "GET /healthz HTTP/1.1\r\n\r\n", 400, "missing required Host header"},
		{"malformed header line", "GET /healthz HTTP/1.1\r\n" + host + "no colon here\r\n\r\n", 400, "malformed HTTP request"},
		{"invalid header name", "GET /healthz HTTP/1.1\r\n" + host + "Bad Name: x\r\n\r\n", 400, "invalid header name"},
		{"bad escape in the target", "GET /%zz HTTP/1.1\r\n" + host + "\r\n", 400, "malformed HTTP request"},
		{"headers too large", "GET /healthz HTTP/1.1\r\n" + host + bigHeader + "\r\n", 431, "too large"},
		{"unknown transfer encoding", "POST /demo/session HTTP/1.1\r\n" + host + "Transfer-Encoding: gzip\r\n\r\n", 501, "Transfer-Encoding is not supported"},
		{"HTTP/2.0 without the preface", "GET /healthz HTTP/2.0\r\n" + host + "\r\n", 505, "HTTP version is not supported"},
		{"HTTP/3.0", "GET /healthz HTTP/3.0\r\n" + host + "\r\n", 505, "HTTP version is not supported"},
		{"Expect other than 100-continue", "POST /demo/session HTTP/1.1\r\n" + host + "Expect: 200-ok\r\nContent-Length: 2\r\n\r\n{}", 417, "Expect header is not supported"},
		{"Expect on HTTP/1.0", "POST /demo/session HTTP/1.0\r\n" + host + "Expect: x\r\nContent-Length: 2\r\n\r\n{}", 417, "Expect header is not supported"},
		{"CONNECT", "CONNECT localhost:443 HTTP/1.1\r\nHost: localhost:443\r\n\r\n", 405, "not a proxy"},
		{"dot-dot", "GET /demo/../healthz HTTP/1.1\r\n" + host + "\r\n", 400, `request /healthz`},
		{"double slash", "GET //healthz HTTP/1.1\r\n" + host + "\r\n", 400, `request /healthz`},
		{"dot segment", "GET /./metrics HTTP/1.1\r\n" + host + "\r\n", 400, `request /metrics`},
		{"encoded dot-dot stays a segment", "GET /studio/media/..%2f..%2fx HTTP/1.1\r\n" + host + "\r\n", 404, "no studio media file"},
		{"asterisk", "GET * HTTP/1.1\r\n" + host + "\r\n", 400, "not a path"},
		{"absolute form", "GET http://localhost HTTP/1.1\r\n" + host + "\r\n", 400, "not a path"},
		{"subtree root without its slash", "GET /studio/media HTTP/1.1\r\n" + host + "\r\n", 404, "no route GET /studio/media"},
		{"WebSocket handshake without a key", "GET /ws/live HTTP/1.1\r\n" + host + "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\r\n", 400, "Sec-WebSocket-Key"},
		{"WebSocket handshake of another version", "GET /ws/live HTTP/1.1\r\n" + host + "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 8\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n", 400, "WebSocket protocol version"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := rawRequest(t, ts, tc.req)
			msg := jsonErrorOf(t, tc.name, resp, body)
			if resp.StatusCode != tc.status || !strings.Contains(msg, tc.want) {
				t.Errorf("%d %q, want %d containing %q", resp.StatusCode, msg, tc.status, tc.want)
			}
			if resp.StatusCode >= 300 && resp.StatusCode < 400 {
				t.Errorf("redirected to %q", resp.Header.Get("Location"))
			}
		})
	}

	// Expect: 100-continue still works: the box asks for the body and
	// answers the request.
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	body := `{"vertical":"code"}`
	_, _ = io.WriteString(conn, "POST /demo/session HTTP/1.1\r\n"+host+"Content-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 19\r\n\r\n")
	br := bufio.NewReader(conn)
	if line, _ := br.ReadString('\n'); line != "HTTP/1.1 100 Continue\r\n" {
		t.Fatalf("100-continue: %q", line)
	}
	_, _ = br.ReadString('\n')
	_, _ = io.WriteString(conn, body)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("after 100 Continue: %v %v", resp, err)
	}
	resp.Body.Close()
}

// TestHostHeader (issue 15, item 8): a request whose Host names another
// host (a DNS-rebinding page) gets 421 with a JSON error naming the hosts
// allowed and the setting; localhost, loopback addresses (any port), the
// configured names and, on a box serving the network, IP addresses pass.
func TestHostHeader(t *testing.T) {
	cfg := configs.Defaults()
	cfg.AllowedHosts = []string{"boxd.clinic.lan"}
	ts := platformServer(t, cfg, nil)
	port := ts.url[strings.LastIndex(ts.url, ":"):]
	for _, tc := range []struct {
		host   string
		status int
	}{
		{"localhost" + port, 200}, {"localhost", 200}, {"LocalHost:1", 200}, {"localhost.", 200},
		{"127.0.0.1" + port, 200}, {"127.0.0.2", 200}, {"[::1]" + port, 200}, {"[::1]", 200},
		{"boxd.clinic.lan", 200}, {"BOXD.clinic.lan:8445", 200},
		{"evil.example" + port, 421}, {"evil.example", 421}, {"localhost.evil.example", 421},
		{"192.168.1.5" + port, 421}, {"boxd.clinic.lan.evil", 421}, {"[::1]x", 421}, {"localhost:x", 421},
	} {
		resp, body := rawRequest(t, ts, "GET /healthz HTTP/1.1\r\nHost: "+tc.host+"\r\nConnection: close\r\n\r\n")
		if resp.StatusCode != tc.status {
			t.Errorf("Host %s: %d %s, want %d", tc.host, resp.StatusCode, body, tc.status)
			continue
		}
		if tc.status != 200 {
			msg := jsonErrorOf(t, tc.host, resp, body)
			if tc.status == 421 && (!strings.Contains(msg, "allowed_hosts") || !strings.Contains(msg, "localhost, 127.0.0.1, [::1]") || !strings.Contains(msg, "boxd.clinic.lan")) {
				t.Errorf("Host %s: message %q", tc.host, msg)
			}
		}
	}
	// HTTP/1.0 without Host: no browser sends that.
	if resp, body := rawRequest(t, ts, "GET /healthz HTTP/1.0\r\n\r\n"); resp.StatusCode != 200 {
		t.Errorf("HTTP/1.0 without Host: %d %s", resp.StatusCode, body)
	}
	// Every route, preflights too.
	for _, req := range []string{"GET /metrics", "GET /receipts/chatcmpl-1", "GET /attest/signing-key", "OPTIONS /demo/session", "POST /demo/session"} {
		resp, body := rawRequest(t, ts, req+" HTTP/1.1\r\nHost: rebound.example"+port+"\r\nOrigin: http://rebound.example"+port+
			"\r\nAccess-Control-Request-Method: POST\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
		if resp.StatusCode != 421 {
			t.Errorf("%s: %d %s", req, resp.StatusCode, body)
		}
	}

	// The live socket: the upgrade, an error event, close 4403.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.url, "http")+liveroutes.Path+"?vertical=sales&token=x", &websocket.DialOptions{Host: "rebound.example" + port})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	_, data, err := c.Read(ctx)
	var ev map[string]any
	if err != nil || json.Unmarshal(data, &ev) != nil || ev["type"] != "error" || !strings.Contains(ev["message"].(string), "allowed_hosts") {
		t.Fatalf("first event %s, %v", data, err)
	}
	if _, _, err := c.Read(ctx); websocket.CloseStatus(err) != 4403 {
		t.Errorf("closed with %v, want 4403", err)
	}

	// A box serving the network takes IP addresses (they cannot be
	// rebound), still not other names.
	cfg = configs.Defaults()
	cfg.AllowNonLoopback = true
	ts = platformServer(t, cfg, nil)
	for host, status := range map[string]int{"192.168.1.5" + port: 200, "[fd00::5]:8445": 200, "evil.example": 421} {
		if resp, body := rawRequest(t, ts, "GET /healthz HTTP/1.1\r\nHost: "+host+"\r\n\r\n"); resp.StatusCode != status {
			t.Errorf("non-loopback box, Host %s: %d %s", host, resp.StatusCode, body)
		}
	}
}

// TestRequestKeysAreStrict (issue 15, item 10): a key twice (at any depth)
// or in the wrong case is refused with 400 naming it, on the strict routes
// and on the OpenAI-compatible ones (which still ignore unknown fields).
func TestRequestKeysAreStrict(t *testing.T) {
	cfg := configs.Defaults()
	cfg.AdminSecret = configs.Secret(adminSecret)
	ts := platformServer(t, cfg, nil)
	code := session(t, ts, "code")
	reviews := session(t, ts, "review-reply")
	cases := []struct {
		name, path, token, body string
		status                  int
		want                    string
	}{
		{"duplicate", "/demo/session", "", `{"vertical":"clinical","vertical":"code"}`, 400, `key "vertical" appears twice at the top level`},
		{"escaped duplicate", "/demo/session", "", `{"vertical":"clinical","\u0076ertical":"code"}`, 400, `key "vertical" appears twice`},
		{"wrong case", "/demo/session", "", `{"Vertical":"code"}`, 400, `key "Vertical" at the top level is spelled "vertical"`},
		{"admin nested duplicate", "/v1/keys", adminSecret, `{"label":"a","verticals":["code"],"verticals":"all"}`, 400, `key "verticals" appears twice`},
		{"chat duplicate", "/v1/chat/completions", code, `{"model":"m","messages":[{"role":"user","content":"hi","role":"system"}]}`, 400, `key "role" appears twice in messages[0]`},
		{"chat wrong case", "/v1/chat/completions", code, `{"Model":"m","messages":[{"role":"user","content":"hi"}]}`, 400, `key "Model" at the top level is spelled "model"`},
		{"chat wrong case in a content part", "/v1/chat/completions", code, `{"model":"m","messages":[{"role":"user","content":[{"type":"text","Text":"hi"}]}]}`, 400, `key "Text" in messages[0].content[0] is spelled "text"`},
		{"chat duplicate in a schema", "/v1/chat/completions", code, `{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object","type":"string"}}}}`, 400, `appears twice in response_format.json_schema.schema`},
		{"review wrong case", "/reviews/check", reviews, `{"Review":"ok","rating":5,"business_name":"B","reply":"Thanks"}`, 400, `is spelled "review"`},
		{"verify duplicate record", "/record/verify", "", `{"record":{},"record":{"x":1}}`, 400, `key "record" appears twice`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := ts.do(t, call{method: "POST", path: tc.path, token: tc.token, body: tc.body})
			if msg := r.errMsg(t); r.status != tc.status || !strings.Contains(msg, tc.want) {
				t.Errorf("%d %q, want %d containing %q", r.status, msg, tc.status, tc.want)
			}
		})
	}
	// Unknown fields on the OpenAI route are still ignored (the request
	// passes the body and fails later: no model on this box).
	r := ts.do(t, call{method: "POST", path: "/v1/chat/completions", token: code, body: `{"model":"m","messages":[{"role":"user","content":"hi"}],"logit_bias":{"1":2},"service_tier":"auto"}`})
	if r.status == 400 {
		t.Errorf("unknown OpenAI fields refused: %s", r.body)
	}

	// A record with a key twice verifies as not valid (200, ok false, the
	// canonical check first), also when its signature holds: the forged
	// kind first, the signed one last.
	b := attest.NewRecord("site-check", "rec_1", nil)
	b.AddText("input", "example.com", nil)
	rec, err := b.Sign(ts.deps.Key, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(rec)
	forged := bytes.Replace(raw, []byte(`{`), []byte(`{"kind":"approval",`), 1)
	for _, body := range []any{map[string]json.RawMessage{"record": forged}, map[string]string{"record": string(forged)}} {
		r := ts.do(t, call{method: "POST", path: "/record/verify", body: body})
		var v records.Check
		if err := json.Unmarshal(r.body, &v); err != nil || r.status != 200 || v.OK || len(v.Checks) == 0 ||
			v.Checks[0].Name != records.CheckCanonical || !strings.Contains(v.Problem, `key "kind" appears twice`) {
			t.Errorf("forged record: %d %s", r.status, r.body)
		}
	}
}

// TestContentTypes (issue 15, item 11): JSON bodies only. Form-encoded
// (curl -d's default) and text/plain bodies get 415 telling the caller
// the header to send; JSON types and no Content-Type pass.
func TestContentTypes(t *testing.T) {
	ts := platformServer(t, nil, nil)
	code := session(t, ts, "code")
	for _, tc := range []struct {
		path, token, ctype string
		status             int
	}{
		{"/demo/session", "", "application/x-www-form-urlencoded", 415},
		{"/demo/session", "", "text/plain", 415},
		{"/demo/session", "", "text/plain; charset=utf-8", 415},
		{"/demo/session", "", "multipart/form-data; boundary=x", 415},
		{"/demo/session", "", "application/json", 200},
		{"/demo/session", "", "Application/JSON; charset=utf-8", 200},
		{"/demo/session", "", "application/vnd.boxd+json", 200},
		{"/demo/session", "", "", 200},
		{"/v1/chat/completions", code, "application/x-www-form-urlencoded", 415},
		{"/v1/chat/completions", code, "text/plain", 415},
		{"/record/verify", "", "text/plain", 415},
	} {
		req, _ := http.NewRequest("POST", ts.url+tc.path, strings.NewReader(`{"vertical":"code"}`))
		if tc.ctype != "" {
			req.Header.Set("Content-Type", tc.ctype)
		}
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s %q: %d %s, want %d", tc.path, tc.ctype, resp.StatusCode, body, tc.status)
			continue
		}
		if tc.status == 415 {
			if msg := jsonErrorOf(t, tc.ctype, resp, body); !strings.Contains(msg, "Content-Type: application/json") {
				t.Errorf("%s %q: message %q", tc.path, tc.ctype, msg)
			}
		}
	}
}
