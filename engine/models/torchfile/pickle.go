package torchfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
)

// The unpickler below covers the opcodes of pickle protocols 2 to 5 that
// torch.save and the objects of a Lightning checkpoint use. It runs no code:
// a global it does not know becomes an opaque *object, and only the torch
// functions that rebuild tensors and OrderedDict are interpreted.

// global is a class or function named by GLOBAL or STACK_GLOBAL.
type global struct{ module, name string }

func (g *global) String() string { return g.module + "." + g.name }

// tuple is a Python tuple; *list a list or set, which APPEND can grow.
type tuple []any

type list struct{ items []any }

// dict is a dict or OrderedDict in insertion order; str indexes its
// string keys.
type dict struct {
	keys, vals []any
	str        map[string]int
}

func (d *dict) set(k, v any) {
	if s, ok := k.(string); ok {
		if i, ok := d.str[s]; ok {
			d.vals[i] = v
			return
		}
		if d.str == nil {
			d.str = map[string]int{}
		}
		d.str[s] = len(d.keys)
	}
	d.keys, d.vals = append(d.keys, k), append(d.vals, v)
}

// object is an instance of a class the reader does not interpret; what
// BUILD, SETITEMS and APPENDS give it is kept but never looked at.
type object struct {
	class *global
	args  any
	state any
	items dict
	list  []any
}

// bigInt stands for an integer that does not fit in int64.
type bigInt struct{}

// storageRef is torch.save's persistent id: storage <key> of <numel>
// elements of the dtype its class names.
type storageRef struct {
	class *global
	key   string
	numel int64
}

// tensorRef is a tensor as _rebuild_tensor_v2 describes it.
type tensorRef struct {
	storage      *storageRef
	offset       int64
	size, stride []int64
}

const (
	maxPickle  = 64 << 20
	maxTensors = 100_000
	maxDims    = 64
	maxStack   = 1 << 20
	maxMarks   = 10_000
	maxMemo    = 1 << 22
)

// pickleError carries a decoding error out of the opcode handlers.
type pickleError struct{ error }

func fail(format string, args ...any) { panic(pickleError{fmt.Errorf(format, args...)}) }

type unpickler struct {
	data    []byte
	pos     int
	stack   []any
	marks   []int
	memo    map[uint64]any
	tensors int
}

// unpickle decodes one pickle and returns its top object.
func unpickle(data []byte) (top any, err error) {
	if len(data) > maxPickle {
		return nil, fmt.Errorf("pickle is %d bytes, over the %d limit", len(data), maxPickle)
	}
	u := &unpickler{data: data, memo: map[uint64]any{}}
	at := 0
	defer func() {
		if r := recover(); r != nil {
			pe, ok := r.(pickleError)
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("pickle: opcode 0x%02x at %d: %w", data[at], at, pe.error)
		}
	}()
	for {
		if at = u.pos; at >= len(data) {
			return nil, errors.New("pickle: truncated (no STOP opcode)")
		}
		if u.step(u.take(1)[0]) {
			if len(u.stack) != 1 || len(u.marks) != 0 {
				fail("%d objects and %d marks left at STOP", len(u.stack), len(u.marks))
			}
			return u.stack[0], nil
		}
		if len(u.stack) > maxStack || len(u.marks) > maxMarks || len(u.memo) > maxMemo {
			fail("stack, marks or memo over their limits")
		}
	}
}

func (u *unpickler) take(n uint64) []byte {
	if n > uint64(len(u.data)-u.pos) {
		fail("truncated")
	}
	u.pos += int(n)
	return u.data[u.pos-int(n) : u.pos]
}

// uint reads an n-byte little-endian unsigned integer.
func (u *unpickler) uint(n int) uint64 {
	var v uint64
	for i, c := range u.take(uint64(n)) {
		v |= uint64(c) << (8 * i)
	}
	return v
}

func (u *unpickler) line() string {
	rest := u.data[u.pos:min(len(u.data), u.pos+512)]
	i := strings.IndexByte(string(rest), '\n')
	if i < 0 {
		fail("unterminated line")
	}
	return string(u.take(uint64(i + 1))[:i])
}

func (u *unpickler) push(v any) { u.stack = append(u.stack, v) }

func (u *unpickler) pop() any {
	v := u.top()
	u.stack = u.stack[:len(u.stack)-1]
	return v
}

// top is the last object pushed since the last MARK.
func (u *unpickler) top() any {
	if len(u.stack) == 0 || (len(u.marks) > 0 && len(u.stack) <= u.marks[len(u.marks)-1]) {
		fail("stack underflow")
	}
	return u.stack[len(u.stack)-1]
}

// popMark returns the objects pushed since the last MARK and drops them.
func (u *unpickler) popMark() []any {
	if len(u.marks) == 0 {
		fail("no MARK")
	}
	m := u.marks[len(u.marks)-1]
	u.marks = u.marks[:len(u.marks)-1]
	items := append([]any(nil), u.stack[m:]...)
	u.stack = u.stack[:m]
	return items
}

// width of the integer or length argument of an opcode.
var width = map[byte]int{'K': 1, 'M': 2, 'J': 4, 0x8a: 1, 0x8b: 4, 'q': 1, 'r': 4, 'h': 1, 'j': 4,
	'U': 1, 'C': 1, 0x8c: 1, 'T': 4, 'B': 4, 'X': 4, 0x8d: 8, 0x8e: 8, 0x96: 8}

// step runs one opcode; it reports STOP.
func (u *unpickler) step(op byte) bool {
	switch op {
	case 0x80: // PROTO
		u.take(1)
	case 0x95: // FRAME
		u.take(8)
	case '.': // STOP
		return true
	case '(': // MARK
		u.marks = append(u.marks, len(u.stack))
	case '0': // POP
		u.pop()
	case '1': // POP_MARK
		u.popMark()
	case '2': // DUP
		u.push(u.top())
	case 'N':
		u.push(nil)
	case 0x88, 0x89: // NEWTRUE, NEWFALSE
		u.push(op == 0x88)
	case 'K', 'M': // BININT1, BININT2
		u.push(int64(u.uint(width[op])))
	case 'J': // BININT
		u.push(int64(int32(uint32(u.uint(4)))))
	case 0x8a, 0x8b: // LONG1, LONG4
		u.push(decodeLong(u.take(u.uint(width[op]))))
	case 'G': // BINFLOAT, big-endian
		u.push(math.Float64frombits(binary.BigEndian.Uint64(u.take(8))))
	case 'X', 0x8c, 0x8d, 'T', 'U': // unicode and py2 strings
		u.push(string(u.take(u.uint(width[op]))))
	case 'B', 'C', 0x8e, 0x96: // bytes, bytearray
		u.push(append([]byte(nil), u.take(u.uint(width[op]))...))
	case ')':
		u.push(tuple{})
	case ']', 0x8f: // EMPTY_LIST, EMPTY_SET
		u.push(&list{})
	case '}':
		u.push(&dict{})
	case 't': // TUPLE
		u.push(tuple(u.popMark()))
	case 'l', 0x91: // LIST, FROZENSET
		u.push(&list{items: u.popMark()})
	case 'd': // DICT
		items, d := u.popMark(), &dict{}
		setItems(d, items)
		u.push(d)
	case 0x85, 0x86, 0x87: // TUPLE1..3
		t := make(tuple, op-0x84)
		for i := len(t) - 1; i >= 0; i-- {
			t[i] = u.pop()
		}
		u.push(t)
	case 'a', 'e', 0x90: // APPEND, APPENDS, ADDITEMS
		var items []any
		if op == 'a' {
			items = []any{u.pop()}
		} else {
			items = u.popMark()
		}
		switch t := u.top().(type) {
		case *list:
			t.items = append(t.items, items...)
		case *object:
			t.list = append(t.list, items...)
		default:
			fail("append to %s", describe(t))
		}
	case 's', 'u': // SETITEM, SETITEMS
		var items []any
		if op == 's' {
			v := u.pop()
			items = []any{u.pop(), v}
		} else {
			items = u.popMark()
		}
		switch t := u.top().(type) {
		case *dict:
			setItems(t, items)
		case *object:
			setItems(&t.items, items)
		default:
			fail("setitem on %s", describe(t))
		}
	case 'q', 'r': // BINPUT, LONG_BINPUT
		u.memo[u.uint(width[op])] = u.top()
	case 0x94: // MEMOIZE
		u.memo[uint64(len(u.memo))] = u.top()
	case 'h', 'j': // BINGET, LONG_BINGET
		idx := u.uint(width[op])
		v, ok := u.memo[idx]
		if !ok {
			fail("memo %d missing", idx)
		}
		u.push(v)
	case 'c': // GLOBAL
		mod := u.line()
		u.push(&global{mod, u.line()})
	case 0x93: // STACK_GLOBAL
		name, mod := u.pop(), u.pop()
		m, ok1 := mod.(string)
		n, ok2 := name.(string)
		if !ok1 || !ok2 {
			fail("STACK_GLOBAL wants two strings")
		}
		u.push(&global{m, n})
	case 'R', 0x81: // REDUCE, NEWOBJ
		args := u.pop()
		u.push(u.call(u.pop(), args))
	case 0x92: // NEWOBJ_EX
		kw, args := u.pop(), u.pop()
		v := u.call(u.pop(), args)
		if o, ok := v.(*object); ok {
			o.state = kw
		}
		u.push(v)
	case 'b': // BUILD
		state := u.pop()
		if o, ok := u.top().(*object); ok {
			o.state = state
		}
	case 'Q': // BINPERSID
		u.push(persistentLoad(u.pop()))
	default:
		fail("unsupported opcode")
	}
	return false
}

func setItems(d *dict, items []any) {
	if len(items)%2 != 0 {
		fail("odd number of dict items")
	}
	for i := 0; i < len(items); i += 2 {
		d.set(items[i], items[i+1])
	}
}

// decodeLong decodes the little-endian two's complement of LONG1 and LONG4.
func decodeLong(b []byte) any {
	if len(b) > 8 {
		return bigInt{}
	}
	var v uint64
	for i, c := range b {
		v |= uint64(c) << (8 * i)
	}
	if n := len(b); n > 0 && n < 8 && b[n-1]&0x80 != 0 {
		v -= 1 << (8 * n)
	}
	return int64(v)
}

// call interprets REDUCE and NEWOBJ: torch's tensor rebuilders and
// OrderedDict are understood, anything else becomes an opaque object.
func (u *unpickler) call(fn, args any) any {
	g, ok := fn.(*global)
	if !ok { // the result of another call, getattr say: opaque
		return &object{class: &global{"?", "?"}, args: args}
	}
	a, _ := args.(tuple)
	switch g.String() {
	case "collections.OrderedDict", "builtins.dict", "__builtin__.dict":
		return &dict{}
	case "torch._utils._rebuild_tensor", "torch._utils._rebuild_tensor_v2":
		if u.tensors++; u.tensors > maxTensors {
			fail("more than %d tensors", maxTensors)
		}
		return rebuildTensor(a)
	case "torch._utils._rebuild_parameter", "torch._utils._rebuild_parameter_with_state":
		if len(a) > 0 {
			if t, ok := a[0].(*tensorRef); ok {
				return t
			}
		}
		fail("%s: first argument is not a tensor", g)
	case "torch._tensor._rebuild_from_type_v2": // (func, type, args, state)
		if len(a) < 3 {
			fail("%s: %d arguments", g, len(a))
		}
		return u.call(a[0], a[2])
	}
	return &object{class: g, args: args}
}

// rebuildTensor reads the arguments of _rebuild_tensor_v2(storage,
// storage_offset, size, stride, requires_grad, backward_hooks, ...).
func rebuildTensor(a tuple) *tensorRef {
	if len(a) < 4 {
		fail("_rebuild_tensor: %d arguments, want at least 4", len(a))
	}
	s, ok := a[0].(*storageRef)
	if !ok {
		fail("_rebuild_tensor: argument 0 is %s, not a storage", describe(a[0]))
	}
	off, ok := a[1].(int64)
	if !ok || off < 0 {
		fail("_rebuild_tensor: bad storage offset %v", a[1])
	}
	t := &tensorRef{storage: s, offset: off, size: intTuple(a[2]), stride: intTuple(a[3])}
	if len(t.size) != len(t.stride) {
		fail("_rebuild_tensor: %d sizes but %d strides", len(t.size), len(t.stride))
	}
	return t
}

func intTuple(v any) []int64 {
	t, ok := v.(tuple)
	if !ok || len(t) > maxDims {
		fail("_rebuild_tensor: size or stride %s is not a tuple of at most %d", describe(v), maxDims)
	}
	out := make([]int64, len(t))
	for i, x := range t {
		n, ok := x.(int64)
		if !ok || n < 0 {
			fail("_rebuild_tensor: bad size or stride %v", x)
		}
		out[i] = n
	}
	return out
}

// persistentLoad reads ('storage', storage_type, key, location, numel).
func persistentLoad(pid any) *storageRef {
	t, ok := pid.(tuple)
	if !ok || len(t) < 5 || t[0] != "storage" {
		fail("persistent id %s is not ('storage', type, key, location, numel)", describe(pid))
	}
	cls, ok1 := t[1].(*global)
	key, ok2 := t[2].(string)
	numel, ok3 := t[4].(int64)
	if !ok1 || !ok2 || !ok3 || numel < 0 {
		fail("malformed storage persistent id")
	}
	return &storageRef{class: cls, key: key, numel: numel}
}
