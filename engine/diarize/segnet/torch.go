package segnet

import (
	"fmt"

	"boxd/engine/models/gguf"
	"boxd/engine/models/torchfile"
)

// ConvertStateDict builds the GGUF of a segmentation-3.0 state dict (as
// torchfile.Read returns pytorch_model.bin's). Every tensor's presence and
// shape is checked; an error names the tensor and wraps
// ErrNotSegmentation.
func ConvertStateDict(sd map[string]torchfile.Tensor) (*gguf.Writer, error) {
	in := make(map[string]tensor, len(sd))
	for k, t := range sd {
		in[k] = tensor{Shape: t.Shape, Data: t.Data}
	}
	return convert(in)
}

// ConvertFile converts the checkpoint at in (pyannote/segmentation-3.0's
// pytorch_model.bin) into a GGUF at out.
func ConvertFile(in, out string) error {
	sd, err := torchfile.Read(in)
	if err != nil {
		return fmt.Errorf("segnet: %s: %w", in, err)
	}
	w, err := ConvertStateDict(sd)
	if err != nil {
		return fmt.Errorf("%w (%s)", err, in)
	}
	if err := w.WriteFile(out); err != nil {
		return fmt.Errorf("segnet: %s: %w", out, err)
	}
	return nil
}
