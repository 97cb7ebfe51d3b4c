package cpuenc

// #include <stdlib.h>
// #include "dec.h"
// #cgo LDFLAGS: -lpthread
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// Decoder is Whisper's decoder on the CPU, weights and caches in C memory:
// a step (or a prompt) runs every layer in one call, split over a pool of
// threads that meet at barriers instead of a graph of hundreds of small
// operations each handed to ggml's threads. Weights stay F16 when the file
// stores them so (half the bytes a step reads) or F32; the caches hold
// what the weights hold. Rounding follows ggml's CPU products (dec.c), so
// greedy text stays whisper.cpp's. Its methods must not run concurrently;
// Close frees it.
type Decoder struct {
	d     *C.boxd_dec
	cfg   DecoderConfig
	audio []int // per slot, the positions of its window (0: none yet)
}

// DecoderConfig are a decoder's dimensions, caches and threads.
type DecoderConfig struct {
	State, Heads, Layers int // width S, heads (S/Heads a multiple of 16), blocks
	Vocab, TextCtx       int // vocabulary, text positions
	AudioCtx             int // the most audio positions a window has
	Slots, Beams         int // transcriptions at once, sequences each
	F16                  bool
	Eps                  float32
	Threads              int
}

// Projections of a decoder layer, for SetLinear.
const (
	DecQ      = C.BOXD_DEC_Q
	DecK      = C.BOXD_DEC_K
	DecV      = C.BOXD_DEC_V
	DecO      = C.BOXD_DEC_O
	DecCrossQ = C.BOXD_DEC_CQ
	DecCrossO = C.BOXD_DEC_CO
	DecFC1    = C.BOXD_DEC_FC1
	DecFC2    = C.BOXD_DEC_FC2
)

// Norms of a decoder layer, for SetNorm (layer -1: the final norm).
const (
	DecAttnLN  = C.BOXD_DEC_LN_ATTN
	DecCrossLN = C.BOXD_DEC_LN_CROSS
	DecMLPLN   = C.BOXD_DEC_LN_MLP
)

var errDecoderShape = errors.New("cpuenc: a decoder's weights do not fit its shape")

// NewDecoder makes a decoder with zero weights and caches.
func NewDecoder(c DecoderConfig) (*Decoder, error) {
	if c.State <= 0 || c.Heads <= 0 || c.State%c.Heads != 0 || !Supported(c.State/c.Heads) || c.Layers <= 0 || c.Vocab <= 0 ||
		c.TextCtx <= 0 || c.AudioCtx <= 0 || c.Slots <= 0 || c.Beams <= 0 {
		return nil, fmt.Errorf("cpuenc: a decoder of %+v", c)
	}
	f16 := 0
	if c.F16 {
		f16 = 1
	}
	d := C.boxd_dec_new(C.int(c.State), C.int(c.Heads), C.int(c.Layers), C.int(c.Vocab), C.int(c.TextCtx), C.int(c.AudioCtx),
		C.int(c.Slots), C.int(c.Beams), C.int(f16), C.float(c.Eps), C.int(max(1, c.Threads)))
	if d == nil {
		return nil, fmt.Errorf("cpuenc: no memory for a decoder of %+v", c)
	}
	return &Decoder{d: d, cfg: c, audio: make([]int, c.Slots)}, nil
}

// Config is the decoder's configuration.
func (d *Decoder) Config() DecoderConfig { return d.cfg }

func fptr(x []float32) *C.float {
	if len(x) == 0 {
		return nil
	}
	return (*C.float)(unsafe.Pointer(&x[0]))
}

func iptr(x []int32) *C.int32_t {
	if len(x) == 0 {
		return nil
	}
	return (*C.int32_t)(unsafe.Pointer(&x[0]))
}

// SetLinear sets projection which of a layer: w [N × K] (output major),
// bias N values or nil.
func (d *Decoder) SetLinear(layer, which int, w, bias []float32, N, K int) error {
	if len(w) != N*K || (bias != nil && len(bias) != N) {
		return errDecoderShape
	}
	if C.boxd_dec_set_linear(d.d, C.int(layer), C.int(which), fptr(w), fptr(bias), C.int(N), C.int(K)) != 0 {
		return fmt.Errorf("%w: layer %d projection %d is %d × %d", errDecoderShape, layer, which, N, K)
	}
	return nil
}

// SetNorm sets norm which of a layer (layer -1: the final norm).
func (d *Decoder) SetNorm(layer, which int, g, b []float32) error {
	if len(g) != d.cfg.State || len(b) != d.cfg.State {
		return errDecoderShape
	}
	if C.boxd_dec_set_norm(d.d, C.int(layer), C.int(which), fptr(g), fptr(b)) != 0 {
		return fmt.Errorf("%w: layer %d norm %d", errDecoderShape, layer, which)
	}
	return nil
}

// SetEmbedding sets the token embedding [Vocab × State] (also the output
// projection) and the positional embedding [TextCtx × State].
func (d *Decoder) SetEmbedding(emb, pos []float32) error {
	if len(emb) != d.cfg.Vocab*d.cfg.State || len(pos) != d.cfg.TextCtx*d.cfg.State {
		return errDecoderShape
	}
	if C.boxd_dec_set_embedding(d.d, fptr(emb), fptr(pos)) != 0 {
		return errors.New("cpuenc: no memory for the decoder's embedding")
	}
	return nil
}

// SetCross stores a layer's cross-attention keys and values for a slot's
// window, k and v [A × State] (position major).
func (d *Decoder) SetCross(slot, layer int, k, v []float32, A int) error {
	if slot < 0 || slot >= d.cfg.Slots || layer < 0 || layer >= d.cfg.Layers || A <= 0 || A > d.cfg.AudioCtx ||
		len(k) < A*d.cfg.State || len(v) < A*d.cfg.State {
		return fmt.Errorf("cpuenc: cross keys of slot %d layer %d, %d positions", slot, layer, A)
	}
	C.boxd_dec_set_cross(d.d, C.int(slot), C.int(layer), fptr(k), fptr(v), C.int(A))
	d.audio[slot] = A
	return nil
}

// Reorder makes sequence i of a slot a copy of sequence parents[i]'s
// self-attention caches, first past positions (beam search).
func (d *Decoder) Reorder(slot int, parents []int32, past int) error {
	if slot < 0 || slot >= d.cfg.Slots || len(parents) > d.cfg.Beams || past < 0 || past > d.cfg.TextCtx {
		return fmt.Errorf("cpuenc: reorder %d sequences of slot %d at %d", len(parents), slot, past)
	}
	for _, p := range parents {
		if p < 0 || int(p) >= d.cfg.Beams {
			return fmt.Errorf("cpuenc: reorder from sequence %d", p)
		}
	}
	if len(parents) == 0 {
		return nil
	}
	if C.boxd_dec_reorder(d.d, C.int(slot), iptr(parents), C.int(len(parents)), C.int(past)) != 0 {
		return errors.New("cpuenc: no memory to reorder beams")
	}
	return nil
}

// Tokens are the rows of one Forward: row r is token Tok[r] of sequence
// Seq[r] of slot Slot[r] at position Pos[r].
type Tokens struct {
	Tok, Slot, Seq, Pos []int32
}

// Forward runs the decoder over rows (each writes its keys and values into
// its sequence's caches, then attends to its positions up to its own) and
// writes the logits of rows want, in order, to out [len(want) × Vocab].
func (d *Decoder) Forward(rows Tokens, want []int32, out []float32) error {
	c := d.cfg
	M := len(rows.Tok)
	if M == 0 || len(rows.Slot) != M || len(rows.Seq) != M || len(rows.Pos) != M || len(want) == 0 || len(out) < len(want)*c.Vocab {
		return fmt.Errorf("cpuenc: %d rows, %d wanted, %d logits", M, len(want), len(out))
	}
	for r := range M {
		if rows.Tok[r] < 0 || int(rows.Tok[r]) >= c.Vocab || rows.Slot[r] < 0 || int(rows.Slot[r]) >= c.Slots ||
			rows.Seq[r] < 0 || int(rows.Seq[r]) >= c.Beams || rows.Pos[r] < 0 || int(rows.Pos[r]) >= c.TextCtx {
			return fmt.Errorf("cpuenc: row %d (token %d, slot %d, sequence %d, position %d) out of range", r, rows.Tok[r], rows.Slot[r], rows.Seq[r], rows.Pos[r])
		}
		if d.audio[rows.Slot[r]] == 0 {
			return fmt.Errorf("cpuenc: slot %d has no audio window (SetCross)", rows.Slot[r])
		}
	}
	for _, w := range want {
		if w < 0 || int(w) >= M {
			return fmt.Errorf("cpuenc: want row %d of %d", w, M)
		}
	}
	switch C.boxd_dec_forward(d.d, C.int(M), iptr(rows.Tok), iptr(rows.Slot), iptr(rows.Seq), iptr(rows.Pos), C.int(len(want)), iptr(want), fptr(out)) {
	case 0:
	case -2:
		return errors.New("cpuenc: the decoder's weights are not all set (SetLinear, SetNorm, SetEmbedding)")
	default:
		return fmt.Errorf("cpuenc: no memory for %d rows", M)
	}
	return nil
}

// Close frees the decoder and stops its threads.
func (d *Decoder) Close() {
	if d.d != nil {
		C.boxd_dec_free(d.d)
		d.d = nil
	}
}
