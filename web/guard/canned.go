package guard

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"boxd/web/api"
)

// net/http answers some malformed requests itself, before any handler
// runs, by writing fixed plain-text responses straight to the connection
// (net/http/server.go, conn.serve): 400 (a request line or header it
// cannot parse, "400 Bad Request: missing required Host header", ...),
// 431 (headers over MaxHeaderBytes), 501 (a Transfer-Encoding it does not
// know), 505 (an HTTP version other than 1.x) and 417 (an Expect other
// than 100-continue, through its own response writer with no body). There
// is no hook for them, so cannedListener wraps each connection and, when
// a single write is exactly one of those responses, writes the same status
// with a {"error"} JSON body instead. The match is on the whole write and
// on net/http's exact bytes: a handler's response never matches (it would
// carry X-Request-Id, and the box writes no 417), and a response that
// does not match is written unchanged. Test: web.TestServerErrorsAreJSON.

// cannedListener wraps accepted connections in cannedConn.
type cannedListener struct{ net.Listener }

// JSONCanned makes net/http's own error responses on ln's connections
// JSON.
func JSONCanned(ln net.Listener) net.Listener { return cannedListener{ln} }

func (l cannedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &cannedConn{Conn: c}, nil
}

// cannedConn rewrites net/http's canned error responses (see above).
type cannedConn struct{ net.Conn }

func (c *cannedConn) Write(p []byte) (int, error) {
	if out, ok := rewriteCanned(p); ok {
		if _, err := c.Conn.Write(out); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// CloseWrite lets net/http half-close the connection after a 431 (as it
// does on a *net.TCPConn) so the client reads the answer.
func (c *cannedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// ReadFrom keeps sendfile for response bodies (they are never canned).
func (c *cannedConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

// The parts of net/http's canned responses.
const (
	cannedPrefix  = "HTTP/1.1 "
	cannedHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
	cannedTE      = "501 Not Implemented" + cannedHeaders + "Unsupported transfer encoding"
)

// rewriteCanned returns the JSON response that replaces p when p is
// exactly one of net/http's canned error responses.
func rewriteCanned(p []byte) ([]byte, bool) {
	if !bytes.HasPrefix(p, []byte("HTTP/1.")) {
		return nil, false
	}
	if out, ok := rewriteExpect(p); ok {
		return out, true
	}
	// Every response's first write passes here: a successful one, or one
	// without the canned headers, leaves at once and without copying.
	if !bytes.HasPrefix(p, []byte(cannedPrefix)) || len(p) <= len(cannedPrefix) ||
		(p[len(cannedPrefix)] != '4' && p[len(cannedPrefix)] != '5') || !bytes.Contains(p, []byte(cannedHeaders)) {
		return nil, false
	}
	rest := string(p[len(cannedPrefix):])
	if rest == cannedTE {
		return cannedJSON(http.StatusNotImplemented, "the request's Transfer-Encoding is not supported: send the body with Content-Length, or with Transfer-Encoding: chunked"), true
	}
	i := bytes.Index([]byte(rest), []byte(cannedHeaders))
	if i < 0 {
		return nil, false
	}
	line, body := rest[:i], rest[i+len(cannedHeaders):]
	// "431 Request Header Fields Too Large", "400 Bad Request", or
	// "505 HTTP Version Not Supported: unsupported protocol version", the
	// body repeating the status line.
	if line != body || len(line) < 4 || line[3] != ' ' {
		return nil, false
	}
	code, err := strconv.Atoi(line[:3])
	if err != nil || code < 400 || code > 599 {
		return nil, false
	}
	status := line[:3] + " " + http.StatusText(code)
	var detail string
	switch {
	case line == status:
	case len(line) > len(status)+2 && line[:len(status)+2] == status+": ":
		detail = line[len(status)+2:]
	default:
		return nil, false
	}
	return cannedJSON(code, cannedMessage(code, detail)), true
}

// rewriteExpect matches the 417 net/http writes for an Expect other than
// 100-continue: a status line and headers ending with Content-Length: 0,
// no body.
func rewriteExpect(p []byte) ([]byte, bool) {
	for _, prefix := range []string{"HTTP/1.1 417 Expectation Failed\r\n", "HTTP/1.0 417 Expectation Failed\r\n"} {
		if bytes.HasPrefix(p, []byte(prefix)) {
			end := bytes.Index(p, []byte("\r\n\r\n"))
			if end != len(p)-4 || !bytes.Contains(p, []byte("\r\nContent-Length: 0\r\n")) {
				return nil, false
			}
			return cannedJSON(http.StatusExpectationFailed, "the Expect header is not supported: the box understands only Expect: 100-continue; send the request without it"), true
		}
	}
	return nil, false
}

func cannedMessage(code int, detail string) string {
	switch code {
	case http.StatusRequestHeaderFieldsTooLarge:
		return "the request line and headers are too large for this box; send fewer or smaller headers (a long query string counts too)"
	case http.StatusHTTPVersionNotSupported:
		return "the request's HTTP version is not supported: send HTTP/1.1 (or HTTP/1.0)"
	case http.StatusBadRequest:
		if detail != "" {
			return "malformed HTTP request: " + detail + "; send a well-formed HTTP/1.1 request"
		}
		return "malformed HTTP request: the request line or a header could not be read; send a well-formed HTTP/1.1 request (METHOD /path HTTP/1.1, then headers)"
	}
	if detail != "" {
		return http.StatusText(code) + ": " + detail
	}
	return http.StatusText(code)
}

// cannedJSON is a whole response: status, JSON headers, {"error": msg}.
func cannedJSON(code int, msg string) []byte {
	body, _ := json.Marshal(api.ErrorBody{Error: msg})
	body = append(body, '\n')
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 " + strconv.Itoa(code) + " " + http.StatusText(code) + "\r\n")
	b.WriteString("Content-Type: application/json\r\n")
	b.WriteString("Date: " + time.Now().UTC().Format(http.TimeFormat) + "\r\n")
	b.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n")
	b.WriteString("Connection: close\r\n\r\n")
	b.Write(body)
	return b.Bytes()
}
