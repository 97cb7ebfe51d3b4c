// Package upload reads a JSON request body whose large fields are base64
// strings (a video, an image, a file) without holding those fields in
// memory: Read reads the body once, as a stream, decodes each declared
// upload field straight into a temporary file (hashing and counting as it
// goes) and decodes the other, small fields into the caller's struct like
// the rest of the API does. Every part is bounded: each upload by its
// decoded size, the other fields together by a small limit, and the whole
// body by their sum plus slack, so a 64 MiB video costs a few buffers of
// memory, not the three copies (body, JSON string, decoded bytes) that
// json.Unmarshal would hold.
package upload

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"syscall"

	"boxd/internal/problem"
	"boxd/internal/scratch"
	"boxd/internal/strictjson"
)

// DefaultSmallLimit bounds the JSON of the non-upload fields when
// Options.SmallLimit is 0.
const DefaultSmallLimit = 1 << 20

const (
	readBuf  = 64 << 10  // the body's read buffer
	encChunk = 128 << 10 // base64 characters decoded at a time (a multiple of 4)
	slack    = 64 << 10  // BodyLimit's allowance for keys and whitespace
)

// Field declares one upload field: its JSON key and the most bytes its
// value may decode to.
type Field struct {
	Name  string
	Limit int64
}

// Options says which fields are uploads and where they go.
type Options struct {
	Fields []Field
	// Dir is where the temporary files go, each request's in a
	// directory of its own; "" is this process's directory in Base(),
	// which the next boxd to start sweeps should this one die
	// (tempdir.go).
	Dir        string
	SmallLimit int64 // bytes of JSON of the other fields; 0 is DefaultSmallLimit
}

// File is one upload, decoded into a temporary file (mode 0600) that the
// caller removes (Upload.Remove) or moves away.
type File struct {
	Field  string // the JSON key
	Path   string
	Size   int64  // decoded bytes
	SHA256 string // hex digest of the decoded bytes
}

// Upload holds the upload fields a body carried, by field name; a field
// that was absent or null has no entry.
type Upload struct {
	Files map[string]*File
	// dir is the request's own directory of the files ("" before the
	// first upload field).
	dir string
}

// Remove deletes every temporary file of u, and the request's directory
// with whatever else was put in it.
func (u *Upload) Remove() error {
	if u == nil {
		return nil
	}
	var errs []error
	for _, f := range u.Files {
		if err := os.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if u.dir != "" {
		if err := os.RemoveAll(u.dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// BodyLimit is the most bytes Read reads: the base64 size of each upload
// limit plus an eighth (for line breaks and \/ escapes), the small limit
// and 64 KiB of slack. A caller may refuse a larger Content-Length early.
func (o Options) BodyLimit() int64 {
	n := o.smallLimit() + slack
	for _, f := range o.Fields {
		enc := (f.Limit + 2) / 3 * 4
		n += enc + enc/8
	}
	return n
}

func (o Options) smallLimit() int64 {
	if o.SmallLimit > 0 {
		return o.SmallLimit
	}
	return DefaultSmallLimit
}

// Read reads one JSON object from r. The value of each field of
// opt.Fields must be a base64 string (standard or URL alphabet, padded or
// not, with the JSON escapes \/, \n and \r allowed) or null; it is decoded
// into a temporary file in opt.Dir. The other fields are decoded into dst
// (a pointer, as for json.Unmarshal; nil accepts none) refusing unknown
// fields, keys given twice (at any depth) and keys in the wrong case; dst
// need not declare the upload fields. ctx is checked between
// reads of r. Errors are *problem.Error: Invalid for a malformed body,
// TooLarge for a limit, naming it. On error no temporary file remains.
func Read(ctx context.Context, r io.Reader, opt Options, dst any) (*Upload, error) {
	fields := make(map[string]Field, len(opt.Fields))
	var names []string
	for _, f := range opt.Fields {
		if _, dup := fields[f.Name]; dup || f.Name == "" || f.Limit <= 0 {
			return nil, problem.New(problem.Internal, "upload: field %q declared twice, unnamed or without a limit", f.Name)
		}
		fields[f.Name] = f
		names = append(names, f.Name)
	}
	lr := &limitReader{ctx: ctx, r: r, limit: opt.BodyLimit()}
	s := &scanner{br: bufio.NewReaderSize(lr, readBuf), smallLimit: opt.smallLimit(), uploads: strings.Join(names, ", ")}
	u := &Upload{Files: map[string]*File{}}
	if err := s.object(fields, opt.Dir, u); err != nil {
		_ = u.Remove()
		return nil, explain(ctx, err)
	}
	if dst == nil {
		dst = &struct{}{}
	}
	// A key twice in a nested object, or a key in the wrong case (which
	// json.Decoder would match): the upload fields' names count too.
	if e := strictjson.Check(s.small, dst, names...); e != nil {
		_ = u.Remove()
		return nil, problem.New(problem.Invalid, "%s", e.Error())
	}
	dec := json.NewDecoder(bytes.NewReader(s.small))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		_ = u.Remove()
		return nil, jsonError(strictjson.Explain(s.small, err))
	}
	return u, nil
}

// explain turns a read or parse error into a *problem.Error.
func explain(ctx context.Context, err error) error {
	var mbe *http.MaxBytesError
	switch _, ok := problem.As(err); {
	case ok:
		return err
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return problem.New(problem.Invalid, "body ends in the middle of its JSON; send a complete JSON object")
	case ctx.Err() != nil:
		return problem.Wrap(problem.Invalid, err, "the request was cancelled while its body was read")
	case errors.As(err, &mbe): // r was an http.MaxBytesReader
		return problem.Wrap(problem.TooLarge, err, "body is larger than %s, this route's limit", bytesText(mbe.Limit))
	}
	return problem.Wrap(problem.Invalid, err, "cannot read the body: %v", err)
}

// limitReader reads at most limit bytes of r, checking ctx before each read.
type limitReader struct {
	ctx      context.Context
	r        io.Reader
	n, limit int64
	err      error // sticky: over the limit
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	if err := l.ctx.Err(); err != nil {
		return 0, err
	}
	if rest := l.limit - l.n + 1; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	if l.n > l.limit {
		l.err = problem.New(problem.TooLarge, "body is larger than %s, this route's limit", bytesText(l.limit))
		return n - 1, l.err
	}
	return n, err
}

// scanner reads the top-level object, streaming uploads to files and
// copying the other fields, validated, into small (a JSON object).
type scanner struct {
	br         *bufio.Reader
	off        int64 // bytes consumed
	small      []byte
	smallLimit int64
	uploads    string // the upload field names, for messages
	err        error  // sticky: small passed its limit
}

func (s *scanner) read() (byte, error) {
	if s.err != nil {
		return 0, s.err
	}
	c, err := s.br.ReadByte()
	if err == nil {
		s.off++
	}
	return c, err
}

func (s *scanner) skipWS() (byte, error) {
	for {
		c, err := s.read()
		if err != nil || (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			return c, err
		}
	}
}

// put appends c to small; past the limit it sets the sticky error instead.
func (s *scanner) put(c byte) {
	if int64(len(s.small)) >= s.smallLimit {
		if s.err == nil {
			s.err = problem.New(problem.TooLarge, "the fields other than %s take more than %s of JSON, this route's limit", s.uploads, bytesText(s.smallLimit))
		}
		return
	}
	s.small = append(s.small, c)
}

func (s *scanner) syntax(c byte, context string) error {
	if s.off <= 3 { // a byte-order mark: say what to remove (web/body.go says the same)
		switch c {
		case 0xEF:
			return problem.New(problem.Invalid, "the body %s", (&strictjson.BOMError{}).Error())
		case 0xFE, 0xFF:
			return problem.New(problem.Invalid, "the body %s", (&strictjson.BOMError{UTF16: true}).Error())
		}
	}
	return problem.New(problem.Invalid, "body is not valid JSON (at byte %d): invalid character %q %s", s.off, c, context)
}

// object reads the body's one object and checks nothing follows it.
func (s *scanner) object(fields map[string]Field, dir string, up *Upload) error {
	switch c, err := s.skipWS(); {
	case err == io.EOF:
		return problem.New(problem.Invalid, "empty body; send a JSON object")
	case err != nil:
		return err
	case c != '{' && kind(c) != "":
		return problem.New(problem.Invalid, "body must be a JSON object, not %s", kind(c))
	case c != '{':
		return s.syntax(c, "looking for beginning of value")
	}
	s.put('{')
	seen := map[string]bool{}
	for first := true; ; first = false {
		c, err := s.skipWS()
		if err == nil && !(first && c == '}') {
			if err = s.member(c, seen, fields, dir, up); err == nil {
				c, err = s.skipWS()
			}
		}
		if err != nil {
			return err
		} else if c == '}' {
			break
		} else if c != ',' {
			return s.syntax(c, "after object key:value pair")
		}
	}
	s.put('}')
	if _, err := s.skipWS(); err == nil {
		return problem.New(problem.Invalid, "body has data after its JSON object; send exactly one object")
	} else if err != io.EOF {
		return err
	}
	return s.err
}

// member reads one key:value pair of the top-level object, c being the
// key's opening quote.
func (s *scanner) member(c byte, seen map[string]bool, fields map[string]Field, dir string, up *Upload) error {
	if c != '"' {
		return s.syntax(c, "looking for beginning of object key string")
	}
	mark := len(s.small)
	if mark > 1 {
		s.put(',')
	}
	var key string
	if err := s.capture(c, &key); err != nil {
		return err
	}
	if seen[key] {
		return problem.New(problem.Invalid, "duplicate field %q; send each field once", key)
	}
	seen[key] = true
	c, err := s.skipWS()
	if err == nil && c != ':' {
		return s.syntax(c, "after object key")
	} else if err == nil {
		c, err = s.skipWS()
	}
	f, isUpload := fields[key]
	switch {
	case err != nil:
		return err
	case !isUpload:
		s.put(':')
		return s.capture(c, new(json.RawMessage))
	case c == '"':
		s.small = s.small[:mark]
		return s.upload(f, dir, up)
	case c == 'n': // null, or a syntax error
		err := s.capture(c, new(json.RawMessage))
		s.small = s.small[:mark]
		return err
	case kind(c) != "":
		return problem.New(problem.Invalid, "field %s must be a string of base64, not %s", key, kind(c))
	}
	return s.syntax(c, "looking for beginning of value")
}

// kinds names the JSON kind of a value by its first byte.
var kinds = map[byte]string{'{': "an object", '[': "an array", '"': "a string", 't': "a boolean", 'f': "a boolean", 'n': "null", '-': "a number"}

func kind(c byte) string {
	if c >= '0' && c <= '9' {
		c = '-'
	}
	return kinds[c]
}

const scalar = "0123456789+-.eEabcdefghijklmnopqrstuvwxyz"

// capture copies one JSON value starting with c into small, finding its
// end by tracking only strings and nesting, then checks it by
// unmarshalling it into v.
func (s *scanner) capture(c byte, v any) error {
	start, at := len(s.small), s.off-1
	depth, inStr, esc := 0, false, false
	for {
		s.put(c)
		switch {
		case esc:
			esc = false
		case inStr:
			esc, inStr = c == '\\', c != '"'
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		}
		if !inStr && depth <= 0 {
			if c == '"' || c == '}' || c == ']' {
				break
			}
			// A number or literal ends before a byte it cannot hold.
			if next, err := s.br.Peek(1); err == io.EOF || err == nil && !strings.Contains(scalar, string(next)) {
				break
			} else if err != nil {
				return err
			}
		}
		var err error
		if c, err = s.read(); err != nil {
			return err
		}
	}
	if s.err != nil {
		return s.err
	}
	var se *json.SyntaxError
	if err := json.Unmarshal(s.small[start:], v); errors.As(err, &se) {
		return problem.Wrap(problem.Invalid, err, "body is not valid JSON (at byte %d): %v", at+se.Offset, err)
	} else if err != nil {
		return problem.Wrap(problem.Invalid, err, "body is not valid JSON (at byte %d): %v", at, err)
	}
	return nil
}

// alphabet maps each base64 character (both alphabets) to the standard
// one, '=' to itself and everything else to 0.
var alphabet = func() (t [256]byte) {
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") {
		t[c] = c
	}
	t['-'], t['_'] = '+', '/'
	return t
}()

// upload streams the base64 string after its opening quote into a new
// temporary file, entered in up at once so that an error removes it.
func (s *scanner) upload(f Field, dir string, up *Upload) error {
	if up.dir == "" {
		d, err := requestDir(dir)
		if err != nil {
			return storeError(f.Name, err)
		}
		up.dir = d
	}
	tmp, err := os.CreateTemp(up.dir, "upload-*")
	if err != nil {
		return storeError(f.Name, err)
	}
	defer tmp.Close()
	file := &File{Field: f.Name, Path: tmp.Name()}
	up.Files[f.Name] = file
	d := &decoder{Field: f, w: tmp, h: sha256.New(), enc: make([]byte, 0, encChunk), dec: make([]byte, encChunk/4*3)}
	for err = bufio.ErrBufferFull; err == bufio.ErrBufferFull; {
		var seg []byte
		seg, err = s.br.ReadSlice('"')
		s.off += int64(len(seg))
		if err == nil {
			seg = seg[:len(seg)-1]
		}
		if ferr := d.feed(seg); ferr != nil {
			return ferr
		} else if err == nil && d.esc {
			return d.bad(d.pos-1, `the escape \"`)
		}
	}
	if err != nil {
		return err
	}
	if d.quad == 1 || d.pad && d.quad != 0 {
		return d.bad(d.pos, "the end (a length base64 cannot have)")
	}
	if err := d.flush(); err != nil {
		return err
	}
	file.Size, file.SHA256 = d.size, hex.EncodeToString(d.h.Sum(nil))
	if err := tmp.Close(); err != nil {
		return storeError(f.Name, err)
	}
	return nil
}

// decoder decodes base64 characters fed to it in segments.
type decoder struct {
	Field
	w         io.Writer
	h         hash.Hash
	enc, dec  []byte // pending standard-alphabet characters, decoded bytes
	pos, size int64  // bytes of the JSON string read, bytes decoded
	quad      int    // characters (padding included) of the current group of 4
	esc, pad  bool   // after a backslash, after '='
}

func (d *decoder) feed(seg []byte) error {
	for i, c := range seg {
		if d.esc {
			d.esc = false
			if c == 'n' || c == 'r' {
				continue
			} else if c != '/' {
				return d.bad(d.pos+int64(i)-1, `the escape \`+string(rune(c)))
			}
		} else if c == '\\' {
			d.esc = true
			continue
		}
		switch v := alphabet[c]; {
		case v == 0 || d.pad && (v != '=' || d.quad == 0) || v == '=' && d.quad < 2:
			return d.bad(d.pos+int64(i), fmt.Sprintf("%q", string(rune(c))))
		case v == '=':
			d.pad = true
		default:
			d.enc = append(d.enc, v)
			if len(d.enc) == cap(d.enc) {
				if err := d.flush(); err != nil {
					return err
				}
			}
		}
		d.quad = (d.quad + 1) % 4
	}
	d.pos += int64(len(seg))
	return nil
}

func (d *decoder) bad(pos int64, what string) error {
	return problem.New(problem.Invalid, "%s is not valid base64: %s at byte %d of its string", d.Name, what, pos)
}

// flush decodes the pending characters (whole groups of 4 but at the end)
// and writes them out unless that passes the limit.
func (d *decoder) flush() error {
	n, err := base64.RawStdEncoding.Decode(d.dec, d.enc)
	d.enc = d.enc[:0]
	if err != nil {
		return problem.Wrap(problem.Invalid, err, "%s is not valid base64: %v", d.Name, err)
	}
	if d.size+int64(n) > d.Limit {
		return problem.New(problem.TooLarge, "%s decodes to more than %s, this route's limit", d.Name, bytesText(d.Limit))
	}
	d.size += int64(n)
	d.h.Write(d.dec[:n])
	if _, err := d.w.Write(d.dec[:n]); err != nil {
		return storeError(d.Name, err)
	}
	return nil
}

func storeError(field string, err error) error {
	if errors.Is(err, syscall.ENOSPC) {
		return problem.Wrap(problem.Unavailable, err, "no room to store %s on this box", field)
	}
	return problem.Wrap(problem.Internal, err, "cannot store %s: %v", field, err)
}

// bytesText is n in bytes, with MiB or KiB when n is a whole number of them.
func bytesText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d bytes (%d MiB)", n, n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d bytes (%d KiB)", n, n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// jsonError words a json.Decoder error on the small fields like the rest
// of the API (web's decodeJSON).
func jsonError(err error) error {
	var typ *json.UnmarshalTypeError
	var inv *json.InvalidUnmarshalError
	var named *strictjson.TypeError
	switch {
	case errors.As(err, &inv):
		return problem.Wrap(problem.Internal, err, "upload: %v", err)
	case errors.As(err, &named) && named.Path != "": // explained: the path, in JSON's words
		return problem.Wrap(problem.Invalid, err, "field %s must be %s, not %s", named.Path, named.Want, named.Got)
	case errors.As(err, &typ) && typ.Field != "":
		return problem.Wrap(problem.Invalid, err, "field %s must be %s, not %s", typ.Field, goTypeName(typ.Type.String()), article(typ.Value))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return problem.Wrap(problem.Invalid, err, "unknown field %s; remove it", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return problem.Wrap(problem.Invalid, err, "body: %s", strings.TrimPrefix(err.Error(), "json: "))
}

// article names the kind of an UnmarshalTypeError value.
func article(kind string) string {
	switch {
	case kind == "bool":
		return "a boolean"
	case strings.HasPrefix(kind, "number "):
		return "the " + kind
	case kind == "object" || kind == "array":
		return "an " + kind
	}
	return "a " + kind
}

// goKinds names what a Go type takes, in JSON terms, by its prefix.
var goKinds = []struct{ prefix, name string }{{"string", "a string"}, {"bool", "true or false"},
	{"int", "a whole number"}, {"uint", "a whole number"}, {"float", "a number"}, {"[]", "an array"}, {"map[", "an object"}}

func goTypeName(t string) string {
	t = strings.TrimPrefix(t, "*")
	for _, k := range goKinds {
		if strings.HasPrefix(t, k.prefix) {
			return k.name
		}
	}
	if strings.Contains(t, ".") {
		return "an object"
	}
	return t
}

// requestDir makes a new directory for one request's files: in dir when
// the caller gave one (Options.Dir, which it owns), else in this
// process's scratch directory (scratch.Dir), which the next start sweeps
// if this process dies before removing it.
func requestDir(dir string) (string, error) {
	if dir == "" {
		return scratch.Dir("r-")
	}
	return os.MkdirTemp(dir, "r-")
}
