// Package gguf reads and writes GGUF files (version 3): key-value metadata,
// tensor infos and aligned tensor data. boxd writes its test models and
// converted Whisper models with it, and reads metadata without loading
// weights.
package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"

	"boxd/internal/atomicfile"
)

// Magic starts every GGUF file.
const Magic = "GGUF"

// Value types of GGUF metadata.
const (
	tUint8   = 0
	tInt8    = 1
	tUint16  = 2
	tInt16   = 3
	tUint32  = 4
	tInt32   = 5
	tFloat32 = 6
	tBool    = 7
	tString  = 8
	tArray   = 9
	tUint64  = 10
	tInt64   = 11
	tFloat64 = 12
)

// Type is a ggml tensor type.
type Type uint32

// The tensor types boxd reads and writes.
const (
	F32  Type = 0
	F16  Type = 1
	Q4_0 Type = 2
	Q4_1 Type = 3
	Q5_0 Type = 6
	Q5_1 Type = 7
	Q8_0 Type = 8
	Q4_K Type = 12
	Q6_K Type = 14
)

func (t Type) String() string {
	switch t {
	case F32:
		return "F32"
	case F16:
		return "F16"
	case Q8_0:
		return "Q8_0"
	case Q4_0:
		return "Q4_0"
	case Q4_1:
		return "Q4_1"
	case Q5_0:
		return "Q5_0"
	case Q5_1:
		return "Q5_1"
	case Q4_K:
		return "Q4_K"
	case Q6_K:
		return "Q6_K"
	}
	return fmt.Sprintf("type%d", uint32(t))
}

// blockInfo is (elements per block, bytes per block) of a type.
func blockInfo(t Type) (int, int, bool) {
	switch t {
	case F32:
		return 1, 4, true
	case F16:
		return 1, 2, true
	case Q8_0:
		return 32, 34, true
	case Q4_0:
		return 32, 18, true
	case Q4_1:
		return 32, 20, true
	case Q5_0:
		return 32, 22, true
	case Q5_1:
		return 32, 24, true
	case Q4_K: // d, dmin (f16), 12 bytes of 6-bit scales, 128 bytes of nibbles
		return 256, 144, true
	case Q6_K: // 128 bytes low bits, 64 high bits, 16 int8 scales, d (f16)
		return 256, 210, true
	}
	return 0, 0, false
}

// ByteSize is the size of a tensor of n elements of type t.
func ByteSize(t Type, n uint64) (uint64, error) {
	per, size, ok := blockInfo(t)
	if !ok {
		return 0, fmt.Errorf("gguf: tensor type %s is not supported here", t)
	}
	if n%uint64(per) != 0 {
		return 0, fmt.Errorf("gguf: %d elements is not a whole number of %s blocks of %d", n, t, per)
	}
	return n / uint64(per) * uint64(size), nil
}

// KV is one metadata entry.
type KV struct {
	Key   string
	Value any
}

// TensorInfo describes one tensor. Dims are ggml's order: Dims[0] varies
// fastest.
type TensorInfo struct {
	Name   string
	Dims   []uint64
	Type   Type
	Offset uint64 // from the start of the data section
}

// Elements is the number of elements.
func (t TensorInfo) Elements() uint64 {
	n := uint64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// Writer builds a GGUF file in memory order: metadata, tensor infos, data.
// A tensor's data is held in memory (AddTensor, AddFloats) or produced
// while the file is written (AddStream), so files larger than memory can
// be written.
type Writer struct {
	kvs       []KV
	tensors   []TensorInfo
	data      []tensorData
	alignment uint64
}

// tensorData is a tensor's bytes, or a function that writes size bytes.
type tensorData struct {
	bytes  []byte
	size   uint64
	stream func(io.Writer) error
}

// NewWriter starts a file with the default alignment (32).
func NewWriter() *Writer { return &Writer{alignment: 32} }

// Set adds a metadata entry. Values: string, bool, uint8, int8, uint16,
// int16, uint32, int32, float32, uint64, int64, float64, and slices of
// string, int32, uint32, float32, uint8 or bool.
func (w *Writer) Set(key string, value any) {
	w.kvs = append(w.kvs, KV{Key: key, Value: value})
}

// AddTensor adds a tensor with its raw data in the given type.
func (w *Writer) AddTensor(name string, typ Type, dims []uint64, data []byte) error {
	info := TensorInfo{Name: name, Dims: append([]uint64(nil), dims...), Type: typ}
	want, err := ByteSize(typ, info.Elements())
	if err != nil {
		return fmt.Errorf("tensor %s: %w", name, err)
	}
	if uint64(len(data)) != want {
		return fmt.Errorf("tensor %s: %d bytes of data, want %d", name, len(data), want)
	}
	w.tensors = append(w.tensors, info)
	w.data = append(w.data, tensorData{bytes: data, size: want})
	return nil
}

// AddStream adds a tensor whose data write produces when the file is
// written: exactly ByteSize(typ, elements) bytes, or Write fails.
func (w *Writer) AddStream(name string, typ Type, dims []uint64, write func(io.Writer) error) error {
	info := TensorInfo{Name: name, Dims: append([]uint64(nil), dims...), Type: typ}
	want, err := ByteSize(typ, info.Elements())
	if err != nil {
		return fmt.Errorf("tensor %s: %w", name, err)
	}
	w.tensors = append(w.tensors, info)
	w.data = append(w.data, tensorData{size: want, stream: write})
	return nil
}

// DataSize is the number of bytes of tensor data added so far (without
// alignment padding).
func (w *Writer) DataSize() uint64 {
	var n uint64
	for _, d := range w.data {
		n += d.size
	}
	return n
}

// AddFloats adds a tensor given as float32 values, encoded as typ.
func (w *Writer) AddFloats(name string, typ Type, dims []uint64, values []float32) error {
	data, err := Encode(typ, values)
	if err != nil {
		return fmt.Errorf("tensor %s: %w", name, err)
	}
	return w.AddTensor(name, typ, dims, data)
}

func pad(n, align uint64) uint64 { return (align - n%align) % align }

// WriteFile writes the file to path (through a temporary file, renamed
// into place).
func (w *Writer) WriteFile(path string) error {
	var werr error // w.Write's own error, returned as it is
	err := atomicfile.WriteFunc(path, 0o644, func(f io.Writer) error {
		bw := bufio.NewWriterSize(f, 1<<20)
		if werr = w.Write(bw); werr != nil {
			return werr
		}
		return bw.Flush()
	})
	if err != nil && werr == nil {
		err = fmt.Errorf("gguf: %w", err)
	}
	return err
}

// Write writes the file.
func (w *Writer) Write(out io.Writer) error {
	cw := &countWriter{w: out}
	le := binary.LittleEndian
	put := func(v any) {
		if cw.err == nil {
			cw.err = binary.Write(cw, le, v)
		}
	}
	putString := func(s string) {
		put(uint64(len(s)))
		if cw.err == nil {
			_, cw.err = io.WriteString(cw, s)
		}
	}
	cw.Write([]byte(Magic))
	put(uint32(3))
	put(uint64(len(w.tensors)))
	put(uint64(len(w.kvs)))
	for _, kv := range w.kvs {
		putString(kv.Key)
		if err := writeValue(cw, kv.Value, put, putString); err != nil {
			return fmt.Errorf("gguf: %s: %w", kv.Key, err)
		}
	}
	var offset uint64
	for i := range w.tensors {
		t := &w.tensors[i]
		t.Offset = offset
		putString(t.Name)
		put(uint32(len(t.Dims)))
		for _, d := range t.Dims {
			put(d)
		}
		put(uint32(t.Type))
		put(t.Offset)
		offset += w.data[i].size
		offset += pad(offset, w.alignment)
	}
	cw.Write(make([]byte, pad(cw.n, w.alignment)))
	for i, d := range w.data {
		if d.stream == nil {
			cw.Write(d.bytes)
		} else if cw.err == nil {
			before := cw.n
			if err := d.stream(cw); err != nil {
				return fmt.Errorf("gguf: tensor %s: %w", w.tensors[i].Name, err)
			}
			if got := cw.n - before; got != d.size && cw.err == nil {
				return fmt.Errorf("gguf: tensor %s: wrote %d bytes of data, want %d", w.tensors[i].Name, got, d.size)
			}
		}
		if i < len(w.data)-1 {
			cw.Write(make([]byte, pad(d.size, w.alignment)))
		}
	}
	if cw.err != nil {
		return fmt.Errorf("gguf: write: %w", cw.err)
	}
	return nil
}

func writeValue(cw *countWriter, v any, put func(any), putString func(string)) error {
	switch v := v.(type) {
	case string:
		put(uint32(tString))
		putString(v)
	case bool:
		put(uint32(tBool))
		put(v)
	case uint8:
		put(uint32(tUint8))
		put(v)
	case int8:
		put(uint32(tInt8))
		put(v)
	case uint16:
		put(uint32(tUint16))
		put(v)
	case int16:
		put(uint32(tInt16))
		put(v)
	case uint32:
		put(uint32(tUint32))
		put(v)
	case int32:
		put(uint32(tInt32))
		put(v)
	case float32:
		put(uint32(tFloat32))
		put(v)
	case uint64:
		put(uint32(tUint64))
		put(v)
	case int64:
		put(uint32(tInt64))
		put(v)
	case float64:
		put(uint32(tFloat64))
		put(v)
	case []string:
		put(uint32(tArray))
		put(uint32(tString))
		put(uint64(len(v)))
		for _, s := range v {
			putString(s)
		}
	case []int32:
		put(uint32(tArray))
		put(uint32(tInt32))
		put(uint64(len(v)))
		put(v)
	case []uint32:
		put(uint32(tArray))
		put(uint32(tUint32))
		put(uint64(len(v)))
		put(v)
	case []float32:
		put(uint32(tArray))
		put(uint32(tFloat32))
		put(uint64(len(v)))
		put(v)
	case []uint8:
		put(uint32(tArray))
		put(uint32(tUint8))
		put(uint64(len(v)))
		put(v)
	case []bool:
		put(uint32(tArray))
		put(uint32(tBool))
		put(uint64(len(v)))
		put(v)
	default:
		return fmt.Errorf("unsupported value type %T", v)
	}
	return cw.err
}

type countWriter struct {
	w   io.Writer
	n   uint64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += uint64(n)
	c.err = err
	return n, err
}

// Encode converts float32 values to a tensor type's bytes.
func Encode(typ Type, v []float32) ([]byte, error) {
	switch typ {
	case F32:
		out := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
		}
		return out, nil
	case F16:
		out := make([]byte, 2*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint16(out[2*i:], Float16(x))
		}
		return out, nil
	case Q8_0:
		if len(v)%32 != 0 {
			return nil, fmt.Errorf("Q8_0 needs a multiple of 32 values, got %d", len(v))
		}
		out := make([]byte, 0, len(v)/32*34)
		for b := 0; b < len(v); b += 32 {
			var amax float32
			for _, x := range v[b : b+32] {
				amax = max(amax, float32(math.Abs(float64(x))))
			}
			d := amax / 127
			var id float32
			if d != 0 {
				id = 1 / d
			}
			out = binary.LittleEndian.AppendUint16(out, Float16(d))
			for _, x := range v[b : b+32] {
				out = append(out, byte(int8(math.Round(float64(x*id)))))
			}
		}
		return out, nil
	case Q4_0:
		return encodeQ4_0(v)
	}
	return nil, fmt.Errorf("cannot encode %s", typ)
}

// encodeQ4_0 is ggml's quantize_row_q4_0_ref: per block of 32, the value
// of largest magnitude maps to -8, d = max/-8 (stored f16), and each
// value is min(15, trunc(x/d + 8.5)); the first 16 values fill the low
// nibbles, the last 16 the high ones.
func encodeQ4_0(v []float32) ([]byte, error) {
	if len(v)%32 != 0 {
		return nil, fmt.Errorf("Q4_0 needs a multiple of 32 values, got %d", len(v))
	}
	out := make([]byte, 0, len(v)/32*18)
	for b := 0; b < len(v); b += 32 {
		blk := v[b : b+32]
		var amax, mx float32
		for _, x := range blk {
			if a := float32(math.Abs(float64(x))); a > amax {
				amax, mx = a, x
			}
		}
		d := mx / -8
		var id float32
		if d != 0 {
			id = 1 / d
		}
		out = binary.LittleEndian.AppendUint16(out, Float16(d))
		for j := range 16 {
			lo := min(15, int8(blk[j]*id+8.5))
			hi := min(15, int8(blk[16+j]*id+8.5))
			out = append(out, byte(lo)|byte(hi)<<4)
		}
	}
	return out, nil
}

// Float16 converts to IEEE half precision, rounding to nearest even.
func Float16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int((b >> 23) & 0xff)
	mant := b & 0x7fffff
	switch {
	case exp == 0xff: // inf or nan
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp-127+15 >= 0x1f: // overflow
		return sign | 0x7c00
	case exp-127+15 <= 0: // subnormal or zero
		if exp-127+15 < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint32(14 - (exp - 127 + 15))
		half := uint32(1) << (shift - 1)
		r := mant >> shift
		rem := mant & ((1 << shift) - 1)
		if rem > half || (rem == half && r&1 == 1) {
			r++
		}
		return sign | uint16(r)
	}
	e := uint16(exp - 127 + 15)
	r := uint16(mant >> 13)
	rem := mant & 0x1fff
	h := sign | e<<10 | r
	if rem > 0x1000 || (rem == 0x1000 && r&1 == 1) {
		h++ // carries into the exponent correctly
	}
	return h
}

// HalfToFloat converts IEEE half precision to float32.
func HalfToFloat(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0:
		for mant&0x400 == 0 {
			mant <<= 1
			exp--
		}
		exp++
		mant &= 0x3ff
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}

// File is a parsed GGUF header.
type File struct {
	Version    uint32
	KV         []KV
	Tensors    []TensorInfo
	Alignment  uint64
	DataOffset uint64
}

// Get returns a metadata value.
func (f *File) Get(key string) (any, bool) {
	for _, kv := range f.KV {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return nil, false
}

// String returns a string metadata value ("" if absent).
func (f *File) String(key string) string {
	v, _ := f.Get(key)
	s, _ := v.(string)
	return s
}

// Uint returns an unsigned integer metadata value of any width.
func (f *File) Uint(key string) (uint64, bool) {
	v, ok := f.Get(key)
	if !ok {
		return 0, false
	}
	switch v := v.(type) {
	case uint8:
		return uint64(v), true
	case uint16:
		return uint64(v), true
	case uint32:
		return uint64(v), true
	case uint64:
		return v, true
	case int32:
		return uint64(v), v >= 0
	case int64:
		return uint64(v), v >= 0
	}
	return 0, false
}

// Tensor finds a tensor by name.
func (f *File) Tensor(name string) (TensorInfo, bool) {
	for _, t := range f.Tensors {
		if t.Name == name {
			return t, true
		}
	}
	return TensorInfo{}, false
}

// Limits against hostile files.
const (
	maxKVs     = 1 << 20
	maxTensors = 1 << 20
	maxString  = 1 << 28
	maxArray   = 1 << 28
	maxDims    = 4
)

// Read parses the header of a GGUF file (metadata and tensor infos).
func Read(r io.Reader) (*File, error) {
	br := &countReader{r: bufio.NewReaderSize(r, 1<<16)}
	le := binary.LittleEndian
	get := func(v any) error { return binary.Read(br, le, v) }
	var magic [4]byte
	if _, err := io.ReadFull(br, magic[:]); err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	if string(magic[:]) != Magic {
		return nil, fmt.Errorf("gguf: not a GGUF file (magic %q)", magic[:])
	}
	f := &File{Alignment: 32}
	if err := get(&f.Version); err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	if f.Version != 2 && f.Version != 3 {
		return nil, fmt.Errorf("gguf: version %d is not supported", f.Version)
	}
	var nT, nKV uint64
	if err := get(&nT); err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	if err := get(&nKV); err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	if nT > maxTensors || nKV > maxKVs {
		return nil, fmt.Errorf("gguf: %d tensors and %d keys is beyond the limits", nT, nKV)
	}
	readString := func() (string, error) {
		var n uint64
		if err := get(&n); err != nil {
			return "", err
		}
		if n > maxString {
			return "", fmt.Errorf("string of %d bytes", n)
		}
		b, err := readBytes(br, n)
		return string(b), err
	}
	for range nKV {
		k, err := readString()
		if err != nil {
			return nil, fmt.Errorf("gguf: key: %w", err)
		}
		var typ uint32
		if err := get(&typ); err != nil {
			return nil, fmt.Errorf("gguf: %s: %w", k, err)
		}
		v, err := readValue(br, typ, readString, get)
		if err != nil {
			return nil, fmt.Errorf("gguf: %s: %w", k, err)
		}
		f.KV = append(f.KV, KV{Key: k, Value: v})
		if k == "general.alignment" {
			if a, ok := v.(uint32); ok && a > 0 && a&(a-1) == 0 {
				f.Alignment = uint64(a)
			}
		}
	}
	for range nT {
		name, err := readString()
		if err != nil {
			return nil, fmt.Errorf("gguf: tensor name: %w", err)
		}
		var nd uint32
		if err := get(&nd); err != nil {
			return nil, fmt.Errorf("gguf: %s: %w", name, err)
		}
		if nd == 0 || nd > maxDims {
			return nil, fmt.Errorf("gguf: %s: %d dimensions", name, nd)
		}
		t := TensorInfo{Name: name, Dims: make([]uint64, nd)}
		if err := get(t.Dims); err != nil {
			return nil, fmt.Errorf("gguf: %s: %w", name, err)
		}
		var typ uint32
		if err := get(&typ); err != nil {
			return nil, fmt.Errorf("gguf: %s: %w", name, err)
		}
		t.Type = Type(typ)
		if err := get(&t.Offset); err != nil {
			return nil, fmt.Errorf("gguf: %s: %w", name, err)
		}
		f.Tensors = append(f.Tensors, t)
	}
	f.DataOffset = br.n + pad(br.n, f.Alignment)
	return f, nil
}

func readValue(br io.Reader, typ uint32, readString func() (string, error), get func(any) error) (any, error) {
	scalar := func(v any) (any, error) {
		err := get(v)
		switch p := v.(type) {
		case *uint8:
			return *p, err
		case *int8:
			return *p, err
		case *uint16:
			return *p, err
		case *int16:
			return *p, err
		case *uint32:
			return *p, err
		case *int32:
			return *p, err
		case *float32:
			return *p, err
		case *bool:
			return *p, err
		case *uint64:
			return *p, err
		case *int64:
			return *p, err
		case *float64:
			return *p, err
		}
		return nil, errors.New("internal")
	}
	switch typ {
	case tUint8:
		return scalar(new(uint8))
	case tInt8:
		return scalar(new(int8))
	case tUint16:
		return scalar(new(uint16))
	case tInt16:
		return scalar(new(int16))
	case tUint32:
		return scalar(new(uint32))
	case tInt32:
		return scalar(new(int32))
	case tFloat32:
		return scalar(new(float32))
	case tBool:
		return scalar(new(bool))
	case tUint64:
		return scalar(new(uint64))
	case tInt64:
		return scalar(new(int64))
	case tFloat64:
		return scalar(new(float64))
	case tString:
		return readString()
	case tArray:
		var et uint32
		var n uint64
		if err := get(&et); err != nil {
			return nil, err
		}
		if err := get(&n); err != nil {
			return nil, err
		}
		if n > maxArray {
			return nil, fmt.Errorf("array of %d items", n)
		}
		switch et {
		case tString:
			out := make([]string, 0, min(n, 1<<16))
			for range n {
				s, err := readString()
				if err != nil {
					return nil, err
				}
				out = append(out, s)
			}
			return out, nil
		case tInt32:
			return readArray[int32](get, n)
		case tUint32:
			return readArray[uint32](get, n)
		case tFloat32:
			return readArray[float32](get, n)
		case tUint8:
			return readArray[uint8](get, n)
		case tInt8:
			return readArray[int8](get, n)
		case tBool:
			return readArray[bool](get, n)
		case tUint64:
			return readArray[uint64](get, n)
		case tInt64:
			return readArray[int64](get, n)
		case tFloat64:
			return readArray[float64](get, n)
		}
		return nil, fmt.Errorf("array of type %d", et)
	}
	return nil, fmt.Errorf("value type %d", typ)
}

// readChunk is the most bytes (or array items) read into memory before
// more arrive: a length a file claims is not allocated until the file
// holds it, so a 30-byte header cannot cost 2 GiB.
const readChunk = 1 << 16

// readBytes reads n bytes, growing the buffer as they arrive.
func readBytes(r io.Reader, n uint64) ([]byte, error) {
	b := make([]byte, 0, min(n, readChunk))
	for uint64(len(b)) < n {
		k := int(min(n-uint64(len(b)), readChunk))
		b = slices.Grow(b, k)
		if _, err := io.ReadFull(r, b[len(b):len(b)+k]); err != nil {
			return nil, err
		}
		b = b[:len(b)+k]
	}
	return b, nil
}

// readArray reads n fixed-size items, growing the slice as they arrive.
func readArray[T any](get func(any) error, n uint64) ([]T, error) {
	out := make([]T, 0, min(n, readChunk))
	for uint64(len(out)) < n {
		k := int(min(n-uint64(len(out)), readChunk))
		out = slices.Grow(out, k)
		if err := get(out[len(out) : len(out)+k]); err != nil {
			return nil, err
		}
		out = out[:len(out)+k]
	}
	return out, nil
}

type countReader struct {
	r io.Reader
	n uint64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += uint64(n)
	return n, err
}

// ReadFile parses the header of the file at path.
func ReadFile(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	defer f.Close()
	return Read(f)
}

// TensorData reads one tensor's bytes from the file at path.
func (f *File) TensorData(path string, t TensorInfo) ([]byte, error) {
	size, err := ByteSize(t.Type, t.Elements())
	if err != nil {
		return nil, err
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	defer fh.Close()
	b := make([]byte, size)
	if _, err := fh.ReadAt(b, int64(f.DataOffset+t.Offset)); err != nil {
		return nil, fmt.Errorf("gguf: %s: %w", t.Name, err)
	}
	return b, nil
}

// Floats reads a float32 array value.
func (f *File) Floats(key string) []float32 {
	v, _ := f.Get(key)
	a, _ := v.([]float32)
	return a
}

// Strings reads a string array value.
func (f *File) Strings(key string) []string {
	v, _ := f.Get(key)
	a, _ := v.([]string)
	return a
}

// SortedKeys lists the metadata keys in order.
func (f *File) SortedKeys() []string {
	keys := make([]string, len(f.KV))
	for i, kv := range f.KV {
		keys[i] = kv.Key
	}
	sort.Strings(keys)
	return keys
}
