package frontend

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

// TestDecodeWAVHugeChunk: an unknown chunk that claims 0xFFFFFFFF bytes
// is skipped as that many (plus its pad byte), so a file that ends first
// is refused; the size plus the pad wrapped to 0 in 32 bits, and the
// chunk's own bytes were read as the next chunks.
func TestDecodeWAVHugeChunk(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("RIFF")
	_ = binary.Write(&b, binary.LittleEndian, uint32(0))
	b.WriteString("WAVE")
	fmtChunk := make([]byte, 16)
	binary.LittleEndian.PutUint16(fmtChunk[0:], 1)
	binary.LittleEndian.PutUint16(fmtChunk[2:], 1)
	binary.LittleEndian.PutUint32(fmtChunk[4:], SampleRate)
	binary.LittleEndian.PutUint16(fmtChunk[14:], 16)
	b.WriteString("fmt ")
	_ = binary.Write(&b, binary.LittleEndian, uint32(16))
	b.Write(fmtChunk)
	b.WriteString("junk")
	_ = binary.Write(&b, binary.LittleEndian, uint32(0xFFFFFFFF))
	// What follows is the junk chunk's content, which happens to look like
	// a data chunk: it must not be read as one.
	b.WriteString("data")
	_ = binary.Write(&b, binary.LittleEndian, uint32(4))
	b.Write([]byte{1, 0, 2, 0})
	out, err := DecodeWAV(&b)
	if err == nil || !strings.Contains(err.Error(), "EOF") {
		t.Fatalf("a 4 GiB chunk in a short file: %d samples, %v; want the file refused", len(out), err)
	}
}
