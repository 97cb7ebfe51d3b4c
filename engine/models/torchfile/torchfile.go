// Package torchfile reads and writes PyTorch checkpoints in the zip-based
// torch.save format (PyTorch >= 1.6): a zip archive whose records sit under
// one folder, <name>/data.pkl (the object, pickled with protocol 2, tensors
// as persistent ids of storages), <name>/data/<key> (the raw storages),
// <name>/version and <name>/byteorder.
//
// Read gives the flat state dict of the two diarization checkpoints
// published as pytorch_model.bin by pyannote: pyannote/segmentation-3.0 and
// pyannote/wespeaker-voxceleb-resnet34-LM, both PyTorch Lightning
// checkpoints whose "state_dict" entry holds the weights. Everything else in
// those files (hyper-parameters, versions, pickled classes of pyannote or
// Lightning) is parsed without running code and ignored. Write makes files of
// the same layout, for tests that need random-weight checkpoints.
package torchfile

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// Tensor is a dense tensor in row-major (C) order, as PyTorch lays out a
// contiguous tensor.
type Tensor struct {
	Shape []int
	Data  []float32
}

// maxFile is the largest checkpoint Read accepts, and the most storage bytes
// it reads from one.
const maxFile = 2 << 30

// Read reads the state dict of the checkpoint at path: the "state_dict"
// entry of the top dict when there is one, else the top dict itself. Every
// dtype is converted to float32, int64 (num_batches_tracked) included.
func Read(path string) (map[string]Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("torchfile: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("torchfile: %w", err)
	}
	sd, err := read(f, fi.Size())
	if err != nil {
		return nil, fmt.Errorf("torchfile: %s: %w", path, err)
	}
	return sd, nil
}

// ReadFrom is Read for a checkpoint of size bytes held by r.
func ReadFrom(r io.ReaderAt, size int64) (map[string]Tensor, error) {
	sd, err := read(r, size)
	if err != nil {
		return nil, fmt.Errorf("torchfile: %w", err)
	}
	return sd, nil
}

func read(r io.ReaderAt, size int64) (map[string]Tensor, error) {
	if size > maxFile {
		return nil, fmt.Errorf("file is %d bytes, over the %d limit", size, int64(maxFile))
	}
	zr, err := zip.NewReader(r, size)
	if err != nil {
		var head [2]byte
		if n, _ := r.ReadAt(head[:], 0); n == 2 && head[0] == 0x80 && head[1] <= 5 {
			return nil, errors.New("not a PyTorch zip checkpoint: legacy (pre-1.6) torch.save format is not supported")
		}
		return nil, fmt.Errorf("not a PyTorch zip checkpoint: %w", err)
	}
	a, err := openArchive(zr, size)
	if err != nil {
		return nil, err
	}
	top, err := unpickle(a.pickle)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.prefix+"/data.pkl", err)
	}
	entries, ok := top.(*dict) // the top dict, or its "state_dict"
	if !ok {
		return nil, fmt.Errorf("top object is %s, not a dict", describe(top))
	}
	if i, ok := entries.str["state_dict"]; ok {
		if entries, ok = entries.vals[i].(*dict); !ok {
			return nil, fmt.Errorf("state_dict is %s, not a dict", describe(entries.vals[i]))
		}
	}
	sd := make(map[string]Tensor, len(entries.keys))
	budget := 2*size + 1<<16 // elements all tensors together may hold
	for i, k := range entries.keys {
		name, ok := k.(string)
		if !ok {
			return nil, fmt.Errorf("state dict key %s is not a string", describe(k))
		}
		ref, ok := entries.vals[i].(*tensorRef)
		if !ok {
			return nil, fmt.Errorf("state dict entry %q is %s, not a tensor", name, describe(entries.vals[i]))
		}
		t, err := a.tensor(ref, &budget)
		if err != nil {
			return nil, fmt.Errorf("tensor %s: %w", name, err)
		}
		sd[name] = t
	}
	return sd, nil
}

func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "None"
	case *object:
		return "an object of " + v.class.String()
	case *global:
		return "the global " + v.String()
	}
	return fmt.Sprintf("a %T", v)
}

// archive is an opened torch.save zip.
type archive struct {
	prefix   string
	files    map[string]*zip.File
	pickle   []byte
	order    binary.ByteOrder
	size     int64
	read     int64             // storage bytes read so far
	storages map[string][]byte // raw storages by key, read once
}

func openArchive(zr *zip.Reader, size int64) (*archive, error) {
	a := &archive{files: map[string]*zip.File{}, order: binary.LittleEndian, size: size, storages: map[string][]byte{}}
	for _, f := range zr.File {
		dir, base, ok := strings.Cut(f.Name, "/")
		if a.prefix == "" && ok && base == "data.pkl" {
			a.prefix = dir
		}
		a.files[f.Name] = f
	}
	if a.prefix == "" {
		return nil, errors.New("not a PyTorch zip checkpoint: no <name>/data.pkl record")
	}
	var err error
	if a.pickle, err = a.record("data.pkl", maxPickle); err != nil {
		return nil, err
	}
	if _, ok := a.files[a.prefix+"/byteorder"]; ok {
		b, err := a.record("byteorder", 16)
		if err != nil {
			return nil, err
		}
		switch string(bytes.TrimSpace(b)) {
		case "little":
		case "big":
			a.order = binary.BigEndian
		default:
			return nil, fmt.Errorf("byteorder record %q is neither little nor big", b)
		}
	}
	return a, nil
}

// record reads <prefix>/<name> whole, refusing it past limit bytes.
func (a *archive) record(name string, limit int64) ([]byte, error) {
	full := a.prefix + "/" + name
	f, ok := a.files[full]
	if !ok {
		return nil, fmt.Errorf("record %s missing", full)
	}
	if f.UncompressedSize64 > uint64(limit) {
		return nil, fmt.Errorf("record %s is %d bytes, over the %d limit", full, f.UncompressedSize64, limit)
	}
	return a.readFile(f, int64(f.UncompressedSize64))
}

// readFile reads the first n bytes of f. Stored records of a plausible size
// are read into one buffer; anything else grows as its bytes arrive, so a
// record that claims more than it holds allocates no more than it holds.
func (a *archive) readFile(f *zip.File, n int64) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("record %s: %w", f.Name, err)
	}
	defer rc.Close()
	if f.Method == zip.Store && f.CompressedSize64 <= uint64(a.size) {
		b := make([]byte, n)
		if _, err := io.ReadFull(rc, b); err != nil {
			return nil, fmt.Errorf("record %s: %w", f.Name, err)
		}
		return b, nil
	}
	b, err := io.ReadAll(io.LimitReader(rc, n))
	if err != nil {
		return nil, fmt.Errorf("record %s: %w", f.Name, err)
	}
	if int64(len(b)) != n {
		return nil, fmt.Errorf("record %s: truncated at %d of %d bytes", f.Name, len(b), n)
	}
	return b, nil
}

// dtype is an element type of a storage: its width and its decoder.
type dtype struct {
	width  int
	decode func(b []byte, o binary.ByteOrder) float32
}

var dtypes = map[string]dtype{
	"FloatStorage":    {4, func(b []byte, o binary.ByteOrder) float32 { return math.Float32frombits(o.Uint32(b)) }},
	"DoubleStorage":   {8, func(b []byte, o binary.ByteOrder) float32 { return float32(math.Float64frombits(o.Uint64(b))) }},
	"HalfStorage":     {2, func(b []byte, o binary.ByteOrder) float32 { return halfToFloat(o.Uint16(b)) }},
	"BFloat16Storage": {2, func(b []byte, o binary.ByteOrder) float32 { return math.Float32frombits(uint32(o.Uint16(b)) << 16) }},
	"LongStorage":     {8, func(b []byte, o binary.ByteOrder) float32 { return float32(int64(o.Uint64(b))) }},
	"IntStorage":      {4, func(b []byte, o binary.ByteOrder) float32 { return float32(int32(o.Uint32(b))) }},
	"ShortStorage":    {2, func(b []byte, o binary.ByteOrder) float32 { return float32(int16(o.Uint16(b))) }},
	"CharStorage":     {1, func(b []byte, _ binary.ByteOrder) float32 { return float32(int8(b[0])) }},
	"ByteStorage":     {1, func(b []byte, _ binary.ByteOrder) float32 { return float32(b[0]) }},
	"BoolStorage":     {1, func(b []byte, _ binary.ByteOrder) float32 { return float32(min(b[0], 1)) }},
}

// halfToFloat converts an IEEE 754 binary16 value to float32.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // inf, NaN
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+112)<<23 | frac<<13)
	case frac == 0:
		return math.Float32frombits(sign)
	}
	v := float32(frac) / (1 << 24) // subnormal: frac × 2^-24
	if sign != 0 {
		v = -v
	}
	return v
}

// storage returns the raw bytes of a storage, read once, checked against the
// size the pickle gives it.
func (a *archive) storage(s *storageRef, dt dtype) ([]byte, error) {
	if b, ok := a.storages[s.key]; ok {
		if int64(len(b)) != s.numel*int64(dt.width) {
			return nil, fmt.Errorf("storage %s used with two sizes", s.key)
		}
		return b, nil
	}
	name := a.prefix + "/data/" + s.key
	f, ok := a.files[name]
	if !ok {
		return nil, fmt.Errorf("storage %s missing (no record %s)", s.key, name)
	}
	if s.numel > maxFile/int64(dt.width) {
		return nil, fmt.Errorf("storage %s: %d elements, over the limit", s.key, s.numel)
	}
	n := s.numel * int64(dt.width)
	if f.UncompressedSize64 < uint64(n) {
		return nil, fmt.Errorf("storage %s truncated: record has %d bytes, %d elements of %d bytes need %d",
			s.key, f.UncompressedSize64, s.numel, dt.width, n)
	}
	if a.read += n; a.read > maxFile {
		return nil, fmt.Errorf("storages over %d bytes in all", int64(maxFile))
	}
	b, err := a.readFile(f, n)
	if err != nil {
		return nil, fmt.Errorf("storage %s: %w", s.key, err)
	}
	a.storages[s.key] = b
	return b, nil
}

// tensor materialises a view of a storage: offset and strides honoured,
// elements converted to float32, laid out row-major. budget is what the
// tensors of the file may still hold, in elements.
func (a *archive) tensor(t *tensorRef, budget *int64) (Tensor, error) {
	s := t.storage
	if s.class.module != "torch" {
		return Tensor{}, fmt.Errorf("storage type %s unsupported", s.class)
	}
	dt, ok := dtypes[s.class.name]
	if !ok {
		return Tensor{}, fmt.Errorf("storage type %s unsupported (dtype not convertible to float32)", s.class)
	}
	numel := int64(1)
	last := t.offset // the furthest element the view reaches
	for i, n := range t.size {
		if n != 0 && numel > math.MaxInt64/n {
			return Tensor{}, errors.New("shape overflows")
		}
		numel *= n
		if n > 0 {
			if t.stride[i] != 0 && n-1 > (math.MaxInt64-last)/t.stride[i] {
				return Tensor{}, errors.New("strides overflow")
			}
			last += (n - 1) * t.stride[i]
		}
	}
	shape := make([]int, len(t.size))
	for i, n := range t.size {
		shape[i] = int(n)
	}
	if numel == 0 {
		return Tensor{Shape: shape, Data: []float32{}}, nil
	}
	if numel > s.numel {
		return Tensor{}, fmt.Errorf("%d elements exceed storage %s of %d", numel, s.key, s.numel)
	}
	if last >= s.numel {
		return Tensor{}, fmt.Errorf("view reaches element %d of storage %s, which has %d", last, s.key, s.numel)
	}
	if *budget -= numel; *budget < 0 {
		return Tensor{}, errors.New("tensors hold more elements than the file can back")
	}
	raw, err := a.storage(s, dt)
	if err != nil {
		return Tensor{}, err
	}
	data := make([]float32, numel)
	w := int64(dt.width)
	idx := make([]int64, len(t.size))
	at := t.offset
	for i := range data {
		data[i] = dt.decode(raw[at*w:], a.order)
		for d := len(idx) - 1; d >= 0; d-- { // next index, odometer-style
			idx[d]++
			at += t.stride[d]
			if idx[d] < t.size[d] {
				break
			}
			at -= idx[d] * t.stride[d]
			idx[d] = 0
		}
	}
	return Tensor{Shape: shape, Data: data}, nil
}
