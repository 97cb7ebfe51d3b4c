package daemon

import (
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"boxd/configs"
)

// TestSlowReadersDoNotStopChat: four long streamed completions from one
// demo token, on sockets that are never read, must not hold every
// sequence: the token runs at most limits.demo_concurrent_calls (2) at
// once (the others wait for its own), and another caller's chat answers
// while those two still generate. Bounded: five requests, loopback only.
func TestSlowReadersDoNotStopChat(t *testing.T) {
	env := chatServer(t, nil, 4096, 4, 0, withSmallSendBuffers)
	body, _ := json.Marshal(chatBodyJSON(map[string]any{"max_tokens": 4000, "stream": true, "temperature": 0}))
	for range 4 {
		c, err := net.Dial("tcp", strings.TrimPrefix(env.url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.(*net.TCPConn).SetReadBuffer(1024)
		fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", env.token, len(body), body)
	}
	deadline := time.Now().Add(20 * time.Second)
	for env.engine.Stats().Active != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("one demo token's four streams: %+v, want two sequences in use", env.engine.Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	if st := env.engine.Stats(); st.Active != 2 || st.Waiting != 0 {
		t.Fatalf("one demo token holds %+v; at most two sequences", st)
	}
	other := session(t, env.testServer, "code")
	r := env.do(t, call{method: "POST", path: "/v1/chat/completions", token: other, body: chatBodyJSON(map[string]any{"max_tokens": 2})})
	if r.status != 200 {
		t.Fatalf("another caller's chat: %d %s", r.status, r.body)
	}
	if active := env.engine.Stats().Active; active == 0 {
		t.Fatal("the other caller waited for the long streams to end; it must get a free sequence beside them")
	}
}

// TestChatAnswersUnderHostileLoad is the bounded load test of issue 15
// for chat: while four never-read long streams of one demo token and 60
// stalled request bodies from two other addresses are held open, another
// caller's chat completion answers beside the streams. (Idle live sockets
// give their slots back on their own: TestLiveIdleSocketIsClosed.) About
// 3 s, loopback only.
func TestChatAnswersUnderHostileLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	cfg := configs.Defaults()
	cfg.Bounds.BodyReadFloorS = 30 // the stalled bodies stay stalled through the test
	env := chatServer(t, cfg, 4096, 4, 0, withSmallSendBuffers)
	body, _ := json.Marshal(chatBodyJSON(map[string]any{"max_tokens": 4000, "stream": true, "temperature": 0}))
	for range 4 {
		c := dialFrom(t, env.testServer, "127.0.0.1")
		defer c.Close()
		_ = c.(*net.TCPConn).SetReadBuffer(1024)
		fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", env.token, len(body), body)
	}
	var stalled []net.Conn
	for i := range 60 {
		c := dialFrom(t, env.testServer, fmt.Sprintf("127.0.0.%d", 2+i%2))
		defer c.Close()
		stall(t, c, "POST", "/demo/session", 4096)
		stalled = append(stalled, c)
	}
	deadline := time.Now().Add(20 * time.Second)
	for env.engine.Stats().Active != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the long streams hold %+v, want two sequences", env.engine.Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
	other := session(t, env.testServer, "code")
	r := env.do(t, call{method: "POST", path: "/v1/chat/completions", token: other, body: chatBodyJSON(map[string]any{"max_tokens": 2})})
	if r.status != 200 {
		t.Fatalf("chat under load: %d %s", r.status, r.body)
	}
	if env.engine.Stats().Active == 0 {
		t.Fatal("the chat waited for the long streams to end")
	}
	if status, _, _, err := readAnswer(stalled[0], 100*time.Millisecond); status != 0 || err == nil {
		t.Fatalf("a stalled body was answered before its deadline: %d %v", status, err)
	}
}
