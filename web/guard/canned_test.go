package guard

import (
	"bytes"
	"testing"
)

// TestRewriteCannedOnlyExactResponses: the connection wrapper leaves
// everything but net/http's exact canned answers alone.
func TestRewriteCannedOnlyExactResponses(t *testing.T) {
	for _, p := range []string{
		"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n200 OK",
		"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request and more",
		"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nX-Request-Id: 1\r\n\r\n{\"error\":\"x\"}",
		"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n404 Page Not Found",
		"HTTP/1.1 417 Expectation Failed\r\nContent-Length: 5\r\n\r\nhello",
		"\x81\x05hello",
		"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n431 Request Header Fields Too Larg",
	} {
		if out, ok := rewriteCanned([]byte(p)); ok {
			t.Errorf("%q rewritten to %q", p, out)
		}
	}
	out, ok := rewriteCanned([]byte("HTTP/1.1 400 Bad Request: invalid header value\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request: invalid header value"))
	if !ok || !bytes.HasPrefix(out, []byte("HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n")) || !bytes.Contains(out, []byte(`"malformed HTTP request: invalid header value;`)) {
		t.Errorf("not rewritten: %q", out)
	}
}
