package torchfile

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
)

// Write writes sd as torch.save (protocol 2, zip layout) would write
// {"state_dict": OrderedDict(sd), "pyannote.audio": {"versions": {...}}}:
// keys in sorted order, one contiguous float32 little-endian storage a
// tensor, records under archive/ aligned to 64 bytes as torch aligns them.
func Write(path string, sd map[string]Tensor) error {
	var buf bytes.Buffer
	if err := write(&buf, sd); err != nil {
		return fmt.Errorf("torchfile: %s: %w", path, err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("torchfile: %w", err)
	}
	return nil
}

func write(w io.Writer, sd map[string]Tensor) error {
	keys := slices.Sorted(maps.Keys(sd))
	for _, k := range keys {
		t := sd[k]
		n := 1
		for _, d := range t.Shape {
			if d < 0 {
				return fmt.Errorf("tensor %s: negative dimension in %v", k, t.Shape)
			}
			n *= d
		}
		if n != len(t.Data) {
			return fmt.Errorf("tensor %s: shape %v holds %d elements, data has %d", k, t.Shape, n, len(t.Data))
		}
	}
	z := &zipWriter{zw: zip.NewWriter(w)}
	z.add("data.pkl", pickleStateDict(keys, sd))
	z.add("byteorder", []byte("little"))
	for i, k := range keys { // storage i holds tensor keys[i]
		data := sd[k].Data
		b := make([]byte, 4*len(data))
		for j, v := range data {
			binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(v))
		}
		z.add("data/"+strconv.Itoa(i), b)
	}
	z.add("version", []byte("3\n"))
	if z.err != nil {
		return z.err
	}
	return z.zw.Close()
}

// zipWriter writes stored records whose data start on 64-byte boundaries,
// padded with an extra field "FB" of 'Z's as PyTorch's writer pads them.
type zipWriter struct {
	zw     *zip.Writer
	offset int
	err    error
}

func (z *zipWriter) add(name string, data []byte) {
	if z.err != nil {
		return
	}
	name = "archive/" + name
	start := z.offset + 30 + len(name) + 4
	pad := (64 - start%64) % 64
	extra := make([]byte, 4+pad)
	copy(extra, "FB")
	binary.LittleEndian.PutUint16(extra[2:], uint16(pad))
	for i := 4; i < len(extra); i++ {
		extra[i] = 'Z'
	}
	fh := &zip.FileHeader{
		Name:               name,
		Method:             zip.Store,
		CRC32:              crc32.ChecksumIEEE(data),
		CompressedSize64:   uint64(len(data)),
		UncompressedSize64: uint64(len(data)),
		Extra:              extra,
	}
	fw, err := z.zw.CreateRaw(fh)
	if err == nil {
		_, err = fw.Write(data)
	}
	if err != nil {
		z.err = fmt.Errorf("zip record %s: %w", name, err)
		return
	}
	z.offset = start + pad + len(data)
}

// pickler emits the protocol 2 opcodes Python's pickler would for the
// checkpoint dict, memoising globals as it does.
type pickler struct {
	b    bytes.Buffer
	memo map[string]int
}

func (p *pickler) op(b ...byte) { p.b.Write(b) }

func (p *pickler) str(ss ...string) {
	for _, s := range ss {
		p.op('X')
		p.b.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(s))))
		p.b.WriteString(s)
	}
}

func (p *pickler) int(n int) {
	switch {
	case n >= 0 && n < 1<<8:
		p.op('K', byte(n))
	case n >= math.MinInt32 && n <= math.MaxInt32:
		p.op('J')
		p.b.Write(binary.LittleEndian.AppendUint32(nil, uint32(int32(n))))
	default:
		p.op(0x8a, 8)
		p.b.Write(binary.LittleEndian.AppendUint64(nil, uint64(n)))
	}
}

// global writes GLOBAL module.name the first time and BINGET after.
func (p *pickler) global(module, name string) {
	key := module + "\n" + name + "\n"
	if i, ok := p.memo[key]; ok {
		p.op('h', byte(i))
		return
	}
	i := len(p.memo)
	p.memo[key] = i
	p.op('c')
	p.b.WriteString(key)
	p.op('q', byte(i))
}

func (p *pickler) ints(v []int) {
	if len(v) == 0 {
		p.op(')')
		return
	}
	if len(v) > 3 {
		p.op('(')
	}
	for _, n := range v {
		p.int(n)
	}
	if len(v) > 3 {
		p.op('t')
	} else {
		p.op(0x84 + byte(len(v)))
	}
}

func (p *pickler) orderedDict() {
	p.global("collections", "OrderedDict")
	p.op(')', 'R')
}

func pickleStateDict(keys []string, sd map[string]Tensor) []byte {
	p := &pickler{memo: map[string]int{}}
	p.op(0x80, 2, '}', '(')
	p.str("state_dict")
	p.orderedDict()
	for i, k := range keys {
		if i%1000 == 0 {
			p.op('(')
		}
		t := sd[k]
		p.str(k)
		p.global("torch._utils", "_rebuild_tensor_v2")
		p.op('(', '(')
		p.str("storage")
		p.global("torch", "FloatStorage")
		p.str(strconv.Itoa(i), "cpu")
		p.int(len(t.Data))
		p.op('t', 'Q')
		p.int(0)
		p.ints(t.Shape)
		stride := make([]int, len(t.Shape))
		n := 1
		for d := len(t.Shape) - 1; d >= 0; d-- {
			stride[d] = n
			n *= t.Shape[d]
		}
		p.ints(stride)
		p.op(0x89) // requires_grad False
		p.orderedDict()
		p.op('t', 'R')
		if i%1000 == 999 || i == len(keys)-1 {
			p.op('u')
		}
	}
	p.str("pyannote.audio")
	p.op('}', '(')
	p.str("versions")
	p.op('}', '(')
	p.str("torch", "2.1.0", "pyannote.audio", "3.1.0")
	p.op('u', 'u', 'u', '.')
	return p.b.Bytes()
}
