package hfwhisper

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
)

// MaxHeader bounds a safetensors JSON header (the reference
// implementation's limit).
const MaxHeader = 100 << 20

// dtypeSize is the element size of the safetensors dtypes (all of them,
// so offsets of any file can be checked; only F32, F16 and BF16 convert).
var dtypeSize = map[string]int64{
	"F64": 8, "F32": 4, "F16": 2, "BF16": 2,
	"I64": 8, "I32": 4, "I16": 2, "I8": 1,
	"U64": 8, "U32": 4, "U16": 2, "U8": 1,
	"BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1,
}

// entry is one tensor of a safetensors file.
type entry struct {
	name  string // the key as stored
	file  string // the file's base name, for messages
	f     *os.File
	dtype string
	shape []int64
	begin int64 // offsets into the data buffer
	end   int64
	base  int64 // file offset of the data buffer
}

// source is the opened safetensors file(s) of a checkpoint.
type source struct {
	files   []*os.File
	tensors map[string]*entry // by stored key
}

func (s *source) close() {
	for _, f := range s.files {
		f.Close()
	}
}

// names is the stored keys, sorted.
func (s *source) names() []string {
	out := make([]string, 0, len(s.tensors))
	for n := range s.tensors {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// openSource opens model.safetensors, or the shards model.safetensors.index.json lists.
func openSource(dir string) (*source, error) {
	s := &source{tensors: map[string]*entry{}}
	single := filepath.Join(dir, SafetensorsFile)
	if isFile(single) {
		f, es, err := openSafetensors(single)
		if err != nil {
			return nil, err
		}
		s.files = append(s.files, f)
		for _, e := range es {
			s.tensors[e.name] = e
		}
		return s, nil
	}
	raw, err := os.ReadFile(filepath.Join(dir, IndexFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("hfwhisper: %s has neither %s nor %s (only safetensors checkpoints convert; re-save pytorch_model.bin ones with safe_serialization=True)", dir, SafetensorsFile, IndexFile)
		}
		return nil, fmt.Errorf("hfwhisper: %w", err)
	}
	var idx struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(raw, &idx); err != nil {
		return nil, fmt.Errorf("hfwhisper: %s: %w", IndexFile, err)
	}
	if len(idx.WeightMap) == 0 {
		return nil, fmt.Errorf("hfwhisper: %s: weight_map is missing or empty", IndexFile)
	}
	var shards []string
	for name, shard := range idx.WeightMap {
		if shard == "" || shard == "." || shard == ".." || filepath.Base(shard) != shard || shard == IndexFile || shard == ConfigFile {
			return nil, fmt.Errorf("hfwhisper: %s: tensor %s is mapped to %q, which is not a shard file name in the checkpoint directory", IndexFile, name, shard)
		}
		if !slices.Contains(shards, shard) {
			shards = append(shards, shard)
		}
	}
	sort.Strings(shards)
	for _, shard := range shards {
		if !isFile(filepath.Join(dir, shard)) {
			return nil, fmt.Errorf("hfwhisper: %s lists shard %s, which is missing from %s", IndexFile, shard, dir)
		}
	}
	ok := false
	defer func() {
		if !ok {
			s.close()
		}
	}()
	for _, shard := range shards {
		f, es, err := openSafetensors(filepath.Join(dir, shard))
		if err != nil {
			return nil, err
		}
		s.files = append(s.files, f)
		for _, e := range es {
			want, listed := idx.WeightMap[e.name]
			switch {
			case !listed:
				return nil, fmt.Errorf("hfwhisper: %s: tensor %s is not in %s's weight_map", shard, e.name, IndexFile)
			case want != shard:
				return nil, fmt.Errorf("hfwhisper: %s: tensor %s is here but %s maps it to %s", shard, e.name, IndexFile, want)
			}
			s.tensors[e.name] = e
		}
	}
	for name, shard := range idx.WeightMap {
		if _, found := s.tensors[name]; !found {
			return nil, fmt.Errorf("hfwhisper: %s maps tensor %s to %s, which does not hold it", IndexFile, name, shard)
		}
	}
	ok = true
	return s, nil
}

// openSafetensors opens one safetensors file and checks its header: the
// header length, dtypes, byte sizes against shapes and that the data
// offsets tile the data buffer exactly.
func openSafetensors(path string) (*os.File, []*entry, error) {
	label := filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("hfwhisper: %w", err)
	}
	es, err := readHeader(f, label)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, es, nil
}

func readHeader(f *os.File, label string) ([]*entry, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("hfwhisper: %s: %w", label, err)
	}
	size := fi.Size()
	if size < 8 {
		return nil, fmt.Errorf("hfwhisper: %s: file of %d bytes is too short for a safetensors header (truncated?)", label, size)
	}
	var lenBuf [8]byte
	if _, err := f.ReadAt(lenBuf[:], 0); err != nil {
		return nil, fmt.Errorf("hfwhisper: %s: %w", label, err)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n > MaxHeader {
		return nil, fmt.Errorf("hfwhisper: %s: header length %d exceeds the 100 MB limit (not a safetensors file?)", label, n)
	}
	if int64(n) > size-8 {
		return nil, fmt.Errorf("hfwhisper: %s: header of %d bytes but the file has only %d after the length (truncated?)", label, n, size-8)
	}
	hdr := make([]byte, n)
	if _, err := f.ReadAt(hdr, 8); err != nil {
		return nil, fmt.Errorf("hfwhisper: %s: header: %w", label, err)
	}
	base := 8 + int64(n)
	es, err := parseHeader(hdr, label)
	if err != nil {
		return nil, err
	}
	if err := checkLayout(es, size-base, label); err != nil {
		return nil, err
	}
	for _, e := range es {
		e.f, e.file, e.base = f, label, base
	}
	return es, nil
}

// parseHeader decodes the JSON header, refusing duplicate keys and
// malformed entries.
func parseHeader(hdr []byte, label string) ([]*entry, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("hfwhisper: %s: header: "+format, append([]any{label}, a...)...)
	}
	dec := json.NewDecoder(bytes.NewReader(hdr))
	tok, err := dec.Token()
	if err != nil {
		return nil, bad("%v (not a safetensors file?)", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, bad("not a JSON object (not a safetensors file?)")
	}
	seen := map[string]bool{}
	var es []*entry
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, bad("%v", err)
		}
		key, _ := tok.(string)
		if seen[key] {
			return nil, bad("key %q appears twice", key)
		}
		seen[key] = true
		if key == "__metadata__" {
			var md map[string]string
			if err := dec.Decode(&md); err != nil {
				return nil, bad("__metadata__ must map strings to strings: %v", err)
			}
			continue
		}
		var v struct {
			Dtype       *string  `json:"dtype"`
			Shape       *[]int64 `json:"shape"`
			DataOffsets *[]int64 `json:"data_offsets"`
		}
		if err := dec.Decode(&v); err != nil {
			return nil, bad("tensor %s: %v", key, err)
		}
		if v.Dtype == nil || v.Shape == nil || v.DataOffsets == nil {
			return nil, bad("tensor %s lacks dtype, shape or data_offsets", key)
		}
		if len(*v.DataOffsets) != 2 {
			return nil, bad("tensor %s: data_offsets %v is not [begin, end]", key, *v.DataOffsets)
		}
		e := &entry{name: key, dtype: *v.Dtype, shape: *v.Shape, begin: (*v.DataOffsets)[0], end: (*v.DataOffsets)[1]}
		es = append(es, e)
	}
	if _, err := dec.Token(); err != nil {
		return nil, bad("%v", err)
	}
	if tok, err := dec.Token(); err != io.EOF {
		if err != nil {
			return nil, bad("after the object: %v", err)
		}
		return nil, bad("unexpected %v after the object", tok)
	}
	return es, nil
}

// checkLayout checks every tensor's byte size and that the offsets,
// sorted, start at 0, are contiguous and end at the buffer's end.
func checkLayout(es []*entry, bufLen int64, label string) error {
	for _, e := range es {
		size, known := dtypeSize[e.dtype]
		if !known {
			return fmt.Errorf("hfwhisper: %s: tensor %s has unknown dtype %q", label, e.name, e.dtype)
		}
		n := int64(1)
		for _, d := range e.shape {
			if d < 0 {
				return fmt.Errorf("hfwhisper: %s: tensor %s: negative dimension in shape %v", label, e.name, e.shape)
			}
			if d != 0 && n > (1<<56)/d {
				return fmt.Errorf("hfwhisper: %s: tensor %s: shape %v is too large", label, e.name, e.shape)
			}
			n *= d
		}
		if e.begin < 0 || e.end < e.begin {
			return fmt.Errorf("hfwhisper: %s: tensor %s: data_offsets [%d %d] are not an ascending range", label, e.name, e.begin, e.end)
		}
		if e.end > bufLen {
			return fmt.Errorf("hfwhisper: %s: tensor %s: data_offsets [%d %d] are out of range: the data buffer has %d bytes (truncated?)", label, e.name, e.begin, e.end, bufLen)
		}
		if got := e.end - e.begin; got != n*size {
			return fmt.Errorf("hfwhisper: %s: tensor %s: %d bytes for shape %v of %s (want %d)", label, e.name, got, e.shape, e.dtype, n*size)
		}
	}
	sorted := slices.Clone(es)
	slices.SortFunc(sorted, func(a, b *entry) int {
		if a.begin != b.begin {
			return int(min(max(a.begin-b.begin, -1), 1))
		}
		return int(min(max(a.end-b.end, -1), 1))
	})
	pos := int64(0)
	var prev *entry
	for _, e := range sorted {
		switch {
		case e.begin < pos:
			return fmt.Errorf("hfwhisper: %s: tensor %s: data_offsets [%d %d] overlap tensor %s [%d %d]", label, e.name, e.begin, e.end, prev.name, prev.begin, prev.end)
		case e.begin > pos:
			return fmt.Errorf("hfwhisper: %s: tensor %s: data_offsets [%d %d] leave a gap of %d bytes at %d", label, e.name, e.begin, e.end, e.begin-pos, pos)
		}
		pos, prev = e.end, e
	}
	if pos != bufLen {
		return fmt.Errorf("hfwhisper: %s: the tensors cover %d bytes of a %d-byte data buffer (trailing bytes)", label, pos, bufLen)
	}
	return nil
}

// read returns the tensor's bytes.
func (e *entry) read() ([]byte, error) {
	b := make([]byte, e.end-e.begin)
	n, err := e.f.ReadAt(b, e.base+e.begin)
	if n == len(b) {
		return b, nil
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return nil, fmt.Errorf("hfwhisper: %s: tensor %s: %w", e.file, e.name, err)
}
