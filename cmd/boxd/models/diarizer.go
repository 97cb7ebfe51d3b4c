package models

import (
	"fmt"
	"io"
	"os"

	"boxd/engine/diarize/embnet"
	"boxd/engine/diarize/segnet"
	"boxd/engine/models/gguf"
	"boxd/engine/models/torchfile"
)

// convertDiarizer converts one of the diarizer's two published PyTorch
// checkpoints, told apart by their tensors: pyannote segmentation-3.0
// (sincnet.*, lstm.*) or WeSpeaker ResNet34 (resnet.* or conv1.*,
// layer1.*).
func convertDiarizer(w io.Writer, in, out string) error {
	sd, err := torchfile.Read(in)
	if err != nil {
		return err
	}
	has := func(k string) bool { _, ok := sd[k]; return ok }
	var setting string
	switch {
	case has("sincnet.conv1d.0.filterbank.low_hz_") || has("lstm.weight_ih_l0"):
		setting = "models.diarizer.path"
		err = segnet.ConvertFile(in, out)
	case has("resnet.conv1.weight") || has("conv1.weight"):
		setting = "models.diarizer.embedding_path"
		err = embnet.ConvertFile(in, out)
	default:
		return fmt.Errorf("%s: a PyTorch checkpoint, but neither pyannote segmentation-3.0 (sincnet.*, lstm.* tensors) nor WeSpeaker ResNet34 (resnet.conv1.weight)", in)
	}
	if err != nil {
		os.Remove(out)
		return err
	}
	f, err := gguf.ReadFile(out)
	if err != nil {
		return err
	}
	st, err := os.Stat(out)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: %s, %d tensors, %d bytes\n  set %s: %s\n", out, f.String("general.architecture"), len(f.Tensors), st.Size(), setting, out)
	return nil
}
