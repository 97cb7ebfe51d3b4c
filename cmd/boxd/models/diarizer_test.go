package models

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"boxd/engine/diarize/diarizetest"
	"boxd/engine/diarize/embnet"
	"boxd/engine/diarize/segnet"
	"boxd/engine/models/torchfile"
)

// TestModelsConvertDiarizer: the two published checkpoints' format
// (random weights of the real shapes, written as torch.save writes them)
// convert to GGUFs the networks load; the command tells them apart and
// says which setting takes each; another PyTorch file is refused.
func TestModelsConvertDiarizer(t *testing.T) {
	dir := t.TempDir()
	segIn, embIn := diarizetest.Checkpoints(t, dir)
	for _, c := range []struct {
		in, arch, setting string
		load              func(string) error
	}{
		{segIn, "pyannote-segmentation", "models.diarizer.path", func(p string) error {
			m, err := segnet.Load(p, segnet.Options{Threads: 1})
			if err == nil {
				m.Close()
			}
			return err
		}},
		{embIn, "wespeaker-resnet34", "models.diarizer.embedding_path", func(p string) error {
			m, err := embnet.Load(p, embnet.Options{Threads: 1})
			if err == nil {
				m.Close()
			}
			return err
		}},
	} {
		out := filepath.Join(dir, c.arch+".gguf")
		code, stdout, errOut := runCLI(t, "models", "convert", c.in, out)
		if code != 0 || !strings.Contains(stdout, c.arch) || !strings.Contains(stdout, "set "+c.setting+": "+out) {
			t.Fatalf("convert %s: %d %q %q", c.in, code, stdout, errOut)
		}
		if err := c.load(out); err != nil {
			t.Errorf("the converted %s does not load: %v", c.arch, err)
		}
	}
	// A PyTorch checkpoint of something else.
	other := filepath.Join(dir, "other.bin")
	if err := torchfile.Write(other, map[string]torchfile.Tensor{"encoder.weight": {Shape: []int{2}, Data: []float32{1, 2}}}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "other.gguf")
	code, _, errOut := runCLI(t, "models", "convert", other, out)
	if code == 0 || !strings.Contains(errOut, "neither pyannote segmentation-3.0") {
		t.Errorf("another checkpoint: %d %q", code, errOut)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused conversion left its output")
	}
	// A segmentation checkpoint with a tensor missing names it.
	sd := diarizetest.Segmentation(1)
	delete(sd, "lstm.weight_hh_l2_reverse")
	broken := filepath.Join(dir, "broken.bin")
	if err := torchfile.Write(broken, sd); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runCLI(t, "models", "convert", broken, filepath.Join(dir, "broken.gguf"))
	if code == 0 || !strings.Contains(errOut, "lstm.weight_hh_l2_reverse") || !strings.Contains(errOut, "not a pyannote segmentation-3.0 checkpoint") {
		t.Errorf("a checkpoint missing a tensor: %d %q", code, errOut)
	}
}
