package llm

/*
#include <stdlib.h>
#include "bridge.h"
*/
import "C"

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"
)

// ImageMarker marks where a picture goes in the text given to
// TokenizeImages: one marker per picture, in order.
const ImageMarker = "<__media__>"

// legacyMarker is the older marker mtmd still turns into ImageMarker.
const legacyMarker = "<__image__>"

// HasMarker says whether text holds an image marker. Text from a caller
// must not: it would claim a picture's place.
func HasMarker(text string) bool {
	return strings.Contains(text, ImageMarker) || strings.Contains(text, legacyMarker)
}

// ErrProjector wraps the failures of loading Options.Projector.
var ErrProjector = errors.New("llm: vision projector")

// ErrNoVision: the engine was opened without a vision projector.
var ErrNoVision = errors.New("llm: this model has no vision projector (models.llm.projector)")

// Picture is an image for the model: 8-bit RGB pixels, row by row.
type Picture struct {
	Width, Height int
	RGB           []byte
}

// Sum is the picture's SHA-256: of its width and height (4 bytes each,
// little-endian), then its RGB bytes. Receipts name pictures by it.
func (p Picture) Sum() [32]byte {
	h := sha256.New()
	var dims [8]byte
	binary.LittleEndian.PutUint32(dims[:4], uint32(p.Width))
	binary.LittleEndian.PutUint32(dims[4:], uint32(p.Height))
	h.Write(dims[:])
	h.Write(p.RGB)
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// ImageEmbedding is a picture as the model reads it: Tokens embeddings of
// the model's input width, decoded before Prompt[At].
type ImageEmbedding struct {
	At      int
	Tokens  int
	Vectors []float32
	// Key names the picture (its pixels' hash): a sequence that already
	// holds the same picture at the same place reuses it.
	Key uint64
}

// vision is the loaded projector (llama.cpp's mtmd).
type vision struct {
	mu        sync.Mutex // the encoder's output buffer belongs to the context
	ctx       *C.mtmd_context
	nonCausal bool // the image's tokens attend both ways (Gemma 3)
	tokens    int  // embeddings one image became at load (the warm-up)
}

// openVision loads the projector at path beside model.
func openVision(model *C.struct_llama_model, path string, gpu bool, threads int) (*vision, error) {
	p := C.mtmd_context_params_default()
	p.use_gpu = C.bool(gpu)
	p.print_timings = false
	p.n_threads = C.int(threads)
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	c := C.mtmd_init_from_file(cpath, model, p)
	if c == nil {
		return nil, fmt.Errorf("%w: %s did not load: not an mmproj file, or made for a model of another width (boxd's log has llama.cpp's reason)", ErrProjector, path)
	}
	if !bool(C.mtmd_support_vision(c)) {
		C.mtmd_free(c)
		return nil, fmt.Errorf("%w: %s has no vision encoder", ErrProjector, path)
	}
	if bool(C.mtmd_decode_use_mrope(c)) {
		C.mtmd_free(c)
		return nil, fmt.Errorf("%w: %s places image tokens in two dimensions (M-RoPE, Qwen-VL); boxd reads projectors with one-dimensional positions (Gemma 3, LLaVA, SigLIP)", ErrProjector, path)
	}
	return &vision{ctx: c, nonCausal: bool(C.mtmd_decode_use_non_causal(c))}, nil
}

func (v *vision) close() {
	if v != nil && v.ctx != nil {
		C.mtmd_free(v.ctx)
		v.ctx = nil
	}
}

// Vision says whether the engine reads images.
func (e *Engine) Vision() bool { return e.vis != nil }

// TokenizeImages tokenizes text holding one ImageMarker per picture and
// encodes each picture with the projector. It returns the text's tokens
// and each picture's embeddings placed among them, ready for a Request.
// The encoder runs here, on the caller's goroutine (one picture at a
// time on the engine's projector); ctx is checked between pictures.
func (e *Engine) TokenizeImages(ctx context.Context, text string, pics []Picture, addSpecial, parseSpecial bool) ([]int32, []ImageEmbedding, error) {
	if e.vis == nil {
		return nil, nil, ErrNoVision
	}
	if n := strings.Count(text, ImageMarker) + strings.Count(text, legacyMarker); n != len(pics) {
		return nil, nil, fmt.Errorf("llm: %d image markers for %d pictures", n, len(pics))
	}
	bitmaps := make([]*C.mtmd_bitmap, len(pics))
	keys := make([]uint64, len(pics))
	defer func() {
		for _, b := range bitmaps {
			if b != nil {
				C.mtmd_bitmap_free(b)
			}
		}
	}()
	for i, p := range pics {
		if p.Width <= 0 || p.Height <= 0 || len(p.RGB) != p.Width*p.Height*3 {
			return nil, nil, fmt.Errorf("llm: picture %d: %d bytes for %d × %d RGB pixels", i, len(p.RGB), p.Width, p.Height)
		}
		sum := p.Sum()
		keys[i] = binary.LittleEndian.Uint64(sum[:])
		bitmaps[i] = C.mtmd_bitmap_init(C.uint32_t(p.Width), C.uint32_t(p.Height), (*C.uchar)(unsafe.Pointer(&p.RGB[0])))
		if bitmaps[i] == nil {
			return nil, nil, fmt.Errorf("llm: picture %d: out of memory", i)
		}
		id := C.CString(hex.EncodeToString(sum[:16]))
		C.mtmd_bitmap_set_id(bitmaps[i], id)
		C.free(unsafe.Pointer(id))
	}
	ctext := C.CString(text)
	defer C.free(unsafe.Pointer(ctext))

	e.vis.mu.Lock()
	defer e.vis.mu.Unlock()
	chunks := C.mtmd_input_chunks_init()
	defer C.mtmd_input_chunks_free(chunks)
	var bp **C.mtmd_bitmap
	if len(bitmaps) > 0 {
		// A C array: cgo forbids passing Go memory that holds C pointers
		// only when the pointers are Go pointers; these are C's.
		arr := C.malloc(C.size_t(len(bitmaps)) * C.size_t(unsafe.Sizeof(uintptr(0))))
		defer C.free(arr)
		s := unsafe.Slice((**C.mtmd_bitmap)(arr), len(bitmaps))
		copy(s, bitmaps)
		bp = (**C.mtmd_bitmap)(arr)
	}
	if rc := C.boxd_mtmd_tokenize(e.vis.ctx, chunks, ctext, C.bool(addSpecial), C.bool(parseSpecial), bp, C.size_t(len(bitmaps))); rc != 0 {
		return nil, nil, fmt.Errorf("llm: tokenizing the pictures failed (mtmd_tokenize returned %d)", int(rc))
	}
	nEmbd := int(C.llama_model_n_embd_inp(e.model))
	var tokens []int32
	var images []ImageEmbedding
	n := int(C.mtmd_input_chunks_size(chunks))
	for i := range n {
		ch := C.mtmd_input_chunks_get(chunks, C.size_t(i))
		switch C.mtmd_input_chunk_get_type(ch) {
		case C.MTMD_INPUT_CHUNK_TYPE_TEXT:
			var nt C.size_t
			p := C.mtmd_input_chunk_get_tokens_text(ch, &nt)
			if nt > 0 {
				for _, t := range unsafe.Slice(p, int(nt)) {
					tokens = append(tokens, int32(t))
				}
			}
		case C.MTMD_INPUT_CHUNK_TYPE_IMAGE:
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			nt := int(C.mtmd_input_chunk_get_n_tokens(ch))
			if rc := C.mtmd_encode_chunk(e.vis.ctx, ch); rc != 0 {
				return nil, nil, fmt.Errorf("llm: encoding picture %d failed (mtmd_encode_chunk returned %d)", len(images), int(rc))
			}
			out := C.mtmd_get_output_embd(e.vis.ctx)
			if out == nil || nt <= 0 {
				return nil, nil, fmt.Errorf("llm: picture %d gave no embeddings", len(images))
			}
			vec := make([]float32, nt*nEmbd)
			copy(vec, unsafe.Slice((*float32)(unsafe.Pointer(out)), nt*nEmbd))
			images = append(images, ImageEmbedding{At: len(tokens), Tokens: nt, Vectors: vec, Key: keys[len(images)]})
		default:
			return nil, nil, errors.New("llm: the projector gave an audio chunk")
		}
	}
	if len(images) != len(pics) {
		return nil, nil, fmt.Errorf("llm: %d pictures became %d images", len(pics), len(images))
	}
	return tokens, images, nil
}

// placeholder is the cache's stand-in for every token of an image: a
// negative id no vocabulary token has, from the picture's key, so that a
// sequence's cached prefix matches only the same picture.
func placeholder(key uint64) int32 { return -1 - int32(key&0x3fffffff) }

// withImages is the request's prompt with each image's tokens as
// placeholders, and the images by where they start in it.
func (e *Engine) withImages(r Request) ([]int32, map[int]ImageEmbedding, error) {
	if len(r.Images) == 0 {
		return r.Prompt, nil, nil
	}
	if e.vis == nil {
		return nil, nil, ErrNoVision
	}
	nEmbd := int(C.llama_model_n_embd_inp(e.model))
	prompt := make([]int32, 0, len(r.Prompt)+len(r.Images)*r.Images[0].Tokens)
	at := map[int]ImageEmbedding{}
	next := 0
	for i, im := range r.Images {
		switch {
		case im.At < next || im.At > len(r.Prompt):
			return nil, nil, fmt.Errorf("llm: image %d placed at token %d, out of order or past the prompt's %d", i, im.At, len(r.Prompt))
		case im.At == len(r.Prompt):
			return nil, nil, fmt.Errorf("llm: image %d ends the prompt; text must follow it (the answer starts from a token's logits)", i)
		case im.Tokens <= 0 || len(im.Vectors) != im.Tokens*nEmbd:
			return nil, nil, fmt.Errorf("llm: image %d has %d values for %d embeddings of %d", i, len(im.Vectors), im.Tokens, nEmbd)
		case e.vis.nonCausal && im.Tokens > e.nUbatch:
			return nil, nil, fmt.Errorf("llm: image %d is %d tokens, more than one micro-batch (%d) holds", i, im.Tokens, e.nUbatch)
		}
		prompt = append(prompt, r.Prompt[next:im.At]...)
		at[len(prompt)] = im
		ph := placeholder(im.Key)
		for range im.Tokens {
			prompt = append(prompt, ph)
		}
		next = im.At
	}
	prompt = append(prompt, r.Prompt[next:]...)
	return prompt, at, nil
}

// decodeImage reads the image starting at the slot's next pending token
// into its sequence, on its own (embeddings cannot share a batch with
// tokens).
func (e *Engine) decodeImage(s *slot, im ImageEmbedding) error {
	rc := C.boxd_decode_embd(e.lctx, (*C.float)(unsafe.Pointer(&im.Vectors[0])), C.int32_t(im.Tokens),
		C.int32_t(len(im.Vectors)/im.Tokens), C.llama_pos(len(s.cached)), C.llama_seq_id(s.seq), C.bool(e.vis.nonCausal))
	if rc != 0 {
		return fmt.Errorf("llm: decoding an image failed (llama_decode returned %d)", int(rc))
	}
	s.cached = append(s.cached, s.pending[:im.Tokens]...)
	s.pending = s.pending[im.Tokens:]
	e.stats.promptEval.Add(int64(im.Tokens))
	return nil
}
