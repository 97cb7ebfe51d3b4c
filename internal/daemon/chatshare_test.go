package daemon

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"boxd/web/api"
)

// TestDemoTokensShareOfChatSequences is the probe's finding: 2 demo
// tokens with 2 long streams each held all 4 chat sequences (each token
// within its own limits.demo_concurrent_calls), and another caller's
// 5-token chat waited until it timed out. Demo tokens together now run at
// most the chat model's sequences less one (limits.demo_model_calls): the
// fourth stream waits for the share a moment and is refused 503 busy with
// Retry-After, naming the setting,
// as is a third demo token's chat, while a developer key's chat answers
// beside the three streams. The streams' sockets are never read and the
// server's send buffers are a few KiB, so they hold their sequences
// through the test on any machine (CI's fast one once finished 2,048
// tokens into loopback's megabyte buffers before the key's chat).
func TestDemoTokensShareOfChatSequences(t *testing.T) {
	env := chatServer(t, nil, 4096, 4, 0, withSmallSendBuffers)
	body, _ := json.Marshal(chatBodyJSON(map[string]any{"max_tokens": 4000, "stream": true, "temperature": 0}))
	var streams []net.Conn
	for _, tok := range []string{env.token, session(t, env.testServer, "code")} {
		for range 2 {
			c := dialFrom(t, env.testServer, "127.0.0.1")
			_ = c.(*net.TCPConn).SetReadBuffer(1024)
			fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", tok, len(body), body)
			streams = append(streams, c)
		}
	}
	// Three take sequences.
	deadline := time.Now().Add(20 * time.Second)
	for env.engine.Stats().Active != 3 {
		if time.Now().After(deadline) {
			t.Fatalf("four demo streams hold %+v; want three sequences", env.engine.Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The fourth waits for the share (api.BusyWait), then is refused.
	var mu sync.Mutex
	refused := 0
	var readers sync.WaitGroup
	for _, c := range streams {
		readers.Go(func() {
			// Only the status of a stream is read (its body never ends while
			// nobody reads it); the refused one's body is read whole.
			_ = c.SetReadDeadline(time.Now().Add(3 * api.BusyWait))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil || resp.StatusCode == http.StatusOK {
				return
			}
			b, _ := io.ReadAll(resp.Body)
			status, header := resp.StatusCode, resp.Header
			mu.Lock()
			refused++
			mu.Unlock()
			if status != http.StatusServiceUnavailable || header.Get("Retry-After") == "" || !strings.Contains(string(b), "limits.demo_model_calls") {
				t.Errorf("the refused stream: %d %v %s", status, header, b)
			}
		})
	}
	readers.Wait()
	if refused != 1 {
		t.Errorf("%d of the four demo streams refused, want 1", refused)
	}
	if st := env.engine.Stats(); st.Active != 3 || st.Waiting != 0 {
		t.Errorf("demo tokens hold %+v; at most three sequences, none waiting", st)
	}

	r := env.do(t, call{method: "POST", path: "/v1/chat/completions", token: session(t, env.testServer, "code"), body: chatBodyJSON(map[string]any{"max_tokens": 5})})
	if r.status != 503 || r.header.Get("Retry-After") == "" || !strings.Contains(r.errMsg(t), "limits.demo_model_calls") {
		t.Errorf("a third demo token beside the demo share: %d %v %s", r.status, r.header, r.body)
	}
	key, _ := createKeyForChat(t, env)
	client := &http.Client{Timeout: 60 * time.Second}
	r = env.do(t, call{method: "POST", path: "/v1/chat/completions", token: key, body: chatBodyJSON(map[string]any{"max_tokens": 5}), client: client})
	if r.status != 200 {
		t.Fatalf("a developer key's 5-token chat beside the demo streams: %d %s", r.status, r.body)
	}
	if active := env.engine.Stats().Active; active < 3 {
		t.Fatalf("the key's chat answered only after the demo streams ended (%d active); it must get the sequence kept for keys", active)
	}
}
