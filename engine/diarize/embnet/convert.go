package embnet

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"boxd/engine/models/gguf"
	"boxd/engine/models/torchfile"
)

// The GGUF's architecture and keys.
const (
	Arch            = "wespeaker-resnet34"
	KeyBlockCount   = Arch + ".block_count" // stem + 16 residual blocks (ggml's layer placement)
	KeyEmbedding    = Arch + ".embedding_length"
	KeyMels         = Arch + ".mel_bins"
	KeyChannels     = Arch + ".channels"       // per stage: 32, 64, 128, 256
	KeyBlocks       = Arch + ".blocks"         // per stage: 3, 4, 6, 3
	KeySampleRate   = Arch + ".sample_rate"    // 16000
	KeyFrameLength  = Arch + ".frame_length"   // samples: 400
	KeyFrameShift   = Arch + ".frame_shift"    // samples: 160
	KeyWindow       = Arch + ".window"         // "hamming"
	KeyPooling      = Arch + ".pooling"        // "tstp"
	KeyBatchNormEps = Arch + ".batch_norm_eps" // the eps folded in
)

// ResNet34's shape as WeSpeaker builds it for 80 mel bins.
const (
	Embedding = 256
	baseCh    = 32
	statsDim  = 2 * (NMels / 8) * baseCh * 8 // 5120: mean and std of 256 channels x 10 bins
	bnEps     = 1e-5
	nBlocks   = 16
)

var (
	stageBlocks   = [4]int{3, 4, 6, 3}
	stageChannels = [4]int{32, 64, 128, 256}
)

// ErrNotResNet34 is returned for a checkpoint or GGUF that is not
// WeSpeaker's ResNet34.
var ErrNotResNet34 = errors.New("not a WeSpeaker ResNet34 checkpoint")

// blockSpec is one BasicBlock: its name in the checkpoint, its input and
// output channels and its stride.
type blockSpec struct {
	name         string // layerN.i
	in, out, str int
}

func (b blockSpec) shortcut() bool { return b.str != 1 || b.in != b.out }

func blockSpecs() []blockSpec {
	var bs []blockSpec
	in := baseCh
	for s, n := range stageBlocks {
		for i := range n {
			str := 1
			if i == 0 && s > 0 {
				str = 2
			}
			bs = append(bs, blockSpec{name: fmt.Sprintf("layer%d.%d", s+1, i), in: in, out: stageChannels[s], str: str})
			in = stageChannels[s]
		}
	}
	return bs
}

// ConvertStateDict builds the GGUF (architecture wespeaker-resnet34) of a
// WeSpeaker ResNet34 state dict: pyannote's names (resnet.conv1.weight,
// resnet.layer1.0.bn1.running_var, ..., resnet.seg_1.bias), as in
// pyannote/wespeaker-voxceleb-resnet34-LM's pytorch_model.bin, or
// WeSpeaker's own without the resnet. prefix. Every tensor is checked for
// presence and shape; the batch norms are folded into the convolutions.
func ConvertStateDict(sd map[string]torchfile.Tensor) (*gguf.Writer, error) {
	return convert(func(name string) ([]int, []float32, bool) {
		t, ok := sd[name]
		return t.Shape, t.Data, ok
	}, "wespeaker-voxceleb-resnet34-LM")
}

// ConvertFile converts the checkpoint at in (pytorch_model.bin) to a GGUF
// at out.
func ConvertFile(in, out string) error {
	sd, err := torchfile.Read(in)
	if err != nil {
		return fmt.Errorf("embnet: %w", err)
	}
	w, err := ConvertStateDict(sd)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if err := w.WriteFile(out); err != nil {
		return fmt.Errorf("embnet: %w", err)
	}
	return nil
}

// lookup finds a state-dict tensor: its shape (row-major, PyTorch's order)
// and values.
type lookup func(name string) (shape []int, data []float32, ok bool)

// converter reads tensors from a state dict, checking each.
type converter struct {
	get    lookup
	prefix string
}

func (c *converter) tensor(name string, shape ...int) ([]float32, error) {
	full := c.prefix + name
	got, data, ok := c.get(full)
	if !ok {
		return nil, fmt.Errorf("embnet: %w: no tensor %s", ErrNotResNet34, full)
	}
	if !slices.Equal(got, shape) {
		return nil, fmt.Errorf("embnet: %w: %s has shape %v, want %v", ErrNotResNet34, full, got, shape)
	}
	n := 1
	for _, d := range shape {
		n *= d
	}
	if len(data) != n {
		return nil, fmt.Errorf("embnet: %s has %d values for shape %v", full, len(data), shape)
	}
	return data, nil
}

// folded is a convolution with its batch norm folded in: weight
// [out, in, k, k] and bias [out].
type folded struct {
	w, b   []float32
	out, k int
	in     int
}

// convBN reads convolution conv (no bias) and batch norm bn and folds the
// norm's running statistics into the convolution: w' = w g / sqrt(v + eps),
// b' = beta - mean g / sqrt(v + eps).
func (c *converter) convBN(conv, bn string, out, in, k int) (folded, error) {
	w, err := c.tensor(conv+".weight", out, in, k, k)
	if err != nil {
		return folded{}, err
	}
	var p [4][]float32
	for i, s := range []string{"weight", "bias", "running_mean", "running_var"} {
		if p[i], err = c.tensor(bn+"."+s, out); err != nil {
			return folded{}, err
		}
	}
	f := folded{w: make([]float32, len(w)), b: make([]float32, out), out: out, in: in, k: k}
	per := in * k * k
	for o := range out {
		v := float64(p[3][o])
		if v < 0 || math.IsNaN(v) {
			return folded{}, fmt.Errorf("embnet: %s%s.running_var[%d] is %v", c.prefix, bn, o, v)
		}
		scale := float64(p[0][o]) / math.Sqrt(v+bnEps)
		for i := range per {
			f.w[o*per+i] = float32(float64(w[o*per+i]) * scale)
		}
		f.b[o] = float32(float64(p[1][o]) - float64(p[2][o])*scale)
	}
	return f, nil
}

func addConv(w *gguf.Writer, name string, f folded) error {
	dims := []uint64{uint64(f.k), uint64(f.k), uint64(f.in), uint64(f.out)}
	if err := w.AddFloats(name+".weight", gguf.F32, dims, f.w); err != nil {
		return err
	}
	return w.AddFloats(name+".bias", gguf.F32, []uint64{uint64(f.out)}, f.b)
}

// convert builds the GGUF from a state dict given as a lookup. Names are
// pyannote's (resnet.conv1.weight, ...) or WeSpeaker's own (conv1.weight,
// ...). Tensors: blk.0.conv (the stem), blk.1 to blk.16 (conv1, conv2 and
// shortcut, batch norms folded in), output (seg_1), all F32.
func convert(get lookup, name string) (*gguf.Writer, error) {
	c := &converter{get: get, prefix: "resnet."}
	if _, _, ok := get("resnet.conv1.weight"); !ok {
		if _, _, ok := get("conv1.weight"); ok {
			c.prefix = ""
		}
	}
	for _, extra := range []string{"seg_2.weight", "seg_bn_1.running_mean"} {
		if _, _, ok := get(c.prefix + extra); ok {
			return nil, fmt.Errorf("embnet: the checkpoint has %s%s (two embedding layers); pyannote's ResNet34 has one", c.prefix, extra)
		}
	}
	w := gguf.NewWriter()
	w.Set("general.architecture", Arch)
	w.Set("general.name", name)
	w.Set("general.license", "CC-BY-4.0")
	w.Set(KeyBlockCount, uint32(1+nBlocks))
	w.Set(KeyEmbedding, uint32(Embedding))
	w.Set(KeyMels, uint32(NMels))
	w.Set(KeyChannels, []int32{32, 64, 128, 256})
	w.Set(KeyBlocks, []int32{3, 4, 6, 3})
	w.Set(KeySampleRate, uint32(SampleRate))
	w.Set(KeyFrameLength, uint32(FrameLength))
	w.Set(KeyFrameShift, uint32(FrameShift))
	w.Set(KeyWindow, "hamming")
	w.Set(KeyPooling, "tstp")
	w.Set(KeyBatchNormEps, float32(bnEps))

	stem, err := c.convBN("conv1", "bn1", baseCh, 1, 3)
	if err != nil {
		return nil, err
	}
	if err := addConv(w, "blk.0.conv", stem); err != nil {
		return nil, fmt.Errorf("embnet: %w", err)
	}
	for i, b := range blockSpecs() {
		p := fmt.Sprintf("blk.%d.", i+1)
		c1, err := c.convBN(b.name+".conv1", b.name+".bn1", b.out, b.in, 3)
		if err != nil {
			return nil, err
		}
		c2, err := c.convBN(b.name+".conv2", b.name+".bn2", b.out, b.out, 3)
		if err != nil {
			return nil, err
		}
		if err := addConv(w, p+"conv1", c1); err != nil {
			return nil, fmt.Errorf("embnet: %w", err)
		}
		if err := addConv(w, p+"conv2", c2); err != nil {
			return nil, fmt.Errorf("embnet: %w", err)
		}
		if b.shortcut() {
			sc, err := c.convBN(b.name+".shortcut.0", b.name+".shortcut.1", b.out, b.in, 1)
			if err != nil {
				return nil, err
			}
			if err := addConv(w, p+"shortcut", sc); err != nil {
				return nil, fmt.Errorf("embnet: %w", err)
			}
		}
	}
	sw, err := c.tensor("seg_1.weight", Embedding, statsDim)
	if err != nil {
		return nil, err
	}
	sb, err := c.tensor("seg_1.bias", Embedding)
	if err != nil {
		return nil, err
	}
	if err := w.AddFloats("output.weight", gguf.F32, []uint64{statsDim, Embedding}, sw); err != nil {
		return nil, fmt.Errorf("embnet: %w", err)
	}
	if err := w.AddFloats("output.bias", gguf.F32, []uint64{Embedding}, sb); err != nil {
		return nil, fmt.Errorf("embnet: %w", err)
	}
	return w, nil
}
