// Package models is `boxd models`: the commands that list the model files
// the configuration names and the catalogue's models, pull them by name or
// URL, point the configuration at them (use), hash them in full (verify),
// describe them (inspect), convert speech models to GGUF, and write the
// tiny test models.
package models

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"boxd/cmd/boxd/cli"
	"boxd/engine/llm"
	"boxd/engine/models"
	"boxd/engine/models/convert"
	"boxd/engine/models/hfwhisper"
	"boxd/engine/models/testmodels"
)

// New is the `boxd models` command with its subcommands.
func New() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List, pull by name, configure, verify, inspect and convert model files",
	}
	cmd.AddCommand(newModelsList(), newModelsCatalogue(), newModelsPull(), newModelsUse(), newModelsVerify(), newModelsInspect(), newModelsConvert(), newModelsMakeTest())
	return cmd
}

func newModelsMakeTest() *cobra.Command {
	var bench, large bool
	var vocab string
	cmd := &cobra.Command{
		Use:   "make-test-models DIR",
		Short: "Write tiny random-weight GGUF models (chat, embedder, reranker; Whisper with --whisper-vocab) for tests and the quick start, deterministic from fixed seeds",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			paths, err := testmodels.MakeAll(args[0], bench)
			if err != nil {
				return err
			}
			if vocab != "" {
				p := filepath.Join(args[0], testmodels.WhisperMicroGGUF)
				if err := testmodels.WriteWhisper(vocab, "", p, testmodels.Whisper{Name: "boxd-micro-whisper", Seed: 13, Micro: true}); err != nil {
					return fmt.Errorf("the speech test model (--whisper-vocab %s): %w", vocab, err)
				}
				paths = append(paths, p)
			}
			if large {
				p := filepath.Join(args[0], testmodels.LargeFile)
				if err := testmodels.WriteLLM(p, testmodels.LargeChat()); err != nil {
					return err
				}
				paths = append(paths, p)
			}
			for _, p := range paths {
				fmt.Fprintln(cmd.OutOrStdout(), p)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&bench, "bench", false, "also write the 110M-parameter Q8_0 benchmark model")
	cmd.Flags().StringVar(&vocab, "whisper-vocab", "", "also write a micro Whisper (micro-whisper.gguf) with this whisper.cpp file's vocabulary and mel filters (e.g. ../shared/models/whisper-vocab-tiny.bin)")
	cmd.Flags().BoolVar(&large, "large", false, "also write the 27B-class Q4_K_M benchmark model for GPUs (about 16.5 GB of random weights)")
	return cmd
}

func newModelsConvert() *cobra.Command {
	var (
		name       string
		f32, force bool
	)
	cmd := &cobra.Command{
		Use:   "convert IN OUT.gguf",
		Short: "Convert a whisper.cpp model (ggml-*.bin), a Silero VAD (ggml-silero-*.bin), a Hugging Face openai/whisper-* checkpoint directory or a diarizer network (pyannote segmentation-3.0, WeSpeaker ResNet34 pytorch_model.bin) to GGUF",
		Long: `Convert speech model files to the GGUF files boxd loads.

  whisper.cpp ggml-*.bin          tensors copied bit for bit; hyper-parameters,
                                  mel filters and vocabulary carried over
  whisper.cpp ggml-silero-*.bin   Silero VAD, widened to F32
  Hugging Face checkpoint dir     config.json, model.safetensors (or shards),
                                  vocab.json and added_tokens.json / tokenizer.json;
                                  matrices F16 (whisper.cpp's layout) unless --f32
  pyannote/segmentation-3.0       pytorch_model.bin: the diarizer's segmentation
                                  network (models.diarizer.path); sinc filters
                                  computed in float64, weights F32
  pyannote/wespeaker-voxceleb-    pytorch_model.bin: the speaker embeddings
    resnet34-LM                   (models.diarizer.embedding_path); batch norms
                                  folded into the convolutions, weights F32

Every size from tiny to large-v3-turbo converts the same way.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, out := args[0], args[1]
			if !force {
				if _, err := os.Stat(out); err == nil {
					return fmt.Errorf("%s exists: pass --force to replace it", out)
				}
			}
			var err error
			switch format, serr := convert.Sniff(in); {
			case hfwhisper.IsCheckpoint(in):
				err = convertHF(in, out, name, !f32)
			case serr != nil:
				return serr
			case format == convert.FormatWhisperBin:
				err = convert.WhisperBinFile(in, out, name)
			case format == convert.FormatSileroBin:
				err = convert.SileroFile(in, out)
			case format == convert.FormatTorchZip:
				return convertDiarizer(cmd.OutOrStdout(), in, out)
			case format == convert.FormatGGUF:
				return fmt.Errorf("%s is already GGUF: boxd models inspect %s", in, in)
			default:
				return fmt.Errorf("%s: not a whisper.cpp model or VAD file, a Hugging Face checkpoint directory (config.json with model.safetensors) nor a PyTorch checkpoint (pytorch_model.bin)", in)
			}
			if err != nil {
				return err
			}
			info, err := convert.Describe(out)
			if err != nil {
				return err
			}
			return printSpeechInfo(cmd.OutOrStdout(), info, false)
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "general.name to record (default from the input's name)")
	cmd.Flags().BoolVar(&f32, "f32", false, "Hugging Face input: keep every tensor F32 instead of whisper.cpp's F16 matrices")
	cmd.Flags().BoolVar(&force, "force", false, "replace OUT if it exists")
	return cmd
}

// convertHF converts a Hugging Face checkpoint directory.
func convertHF(in, out, name string, f16 bool) error {
	m, err := hfwhisper.Read(in, hfwhisper.Options{F16: f16})
	if err != nil {
		return err
	}
	if name == "" {
		dir := in
		if st, err := os.Stat(in); err == nil && !st.IsDir() {
			dir = filepath.Dir(in)
		}
		name = filepath.Base(filepath.Clean(dir))
	}
	w, err := convert.WhisperGGUF(m, name)
	if err != nil {
		return err
	}
	return w.WriteFile(out)
}

func newModelsInspect() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "inspect FILE.gguf",
		Short: "Print what a GGUF model holds (language models through llama.cpp's loader; Whisper and Silero VAD from the header) and its weights root",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format, err := convert.Sniff(args[0]); err == nil && format != convert.FormatGGUF && format != convert.FormatUnknown {
				return fmt.Errorf("%s is a %s file: convert it first (boxd models convert %s OUT.gguf)", args[0], format, args[0])
			}
			if speech, err := convert.Describe(args[0]); err == nil {
				return printSpeechInfo(cmd.OutOrStdout(), speech, asJSON)
			}
			info, err := llm.Inspect(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return cli.PrintJSON(out, info)
			}
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			name := info.Name
			if name == "" {
				name = "-"
			}
			fmt.Fprintf(tw, "file\t%s\n", info.Path)
			fmt.Fprintf(tw, "name\t%s\n", name)
			fmt.Fprintf(tw, "architecture\t%s\n", info.Architecture)
			fmt.Fprintf(tw, "parameters\t%s (%d)\n", humanCount(info.Parameters), info.Parameters)
			fmt.Fprintf(tw, "context length\t%d\n", info.ContextLength)
			fmt.Fprintf(tw, "layers\t%d\n", info.Layers)
			fmt.Fprintf(tw, "embedding size\t%d\n", info.EmbeddingSize)
			fmt.Fprintf(tw, "quantisation\t%s\n", info.Quantisation)
			fmt.Fprintf(tw, "chat template\t%s\n", info.ChatTemplate)
			fmt.Fprintf(tw, "size\t%d bytes\n", info.SizeBytes)
			fmt.Fprintf(tw, "weights root\t%s\n", info.WeightsRoot)
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// printSpeechInfo prints a Whisper or Silero VAD GGUF's description with
// its weights root.
func printSpeechInfo(out io.Writer, info *convert.Info, asJSON bool) error {
	root, err := models.WeightsRootOf(info.Path)
	if err != nil {
		return err
	}
	info.WeightsRoot = root.Root
	if asJSON {
		return cli.PrintJSON(out, info)
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "file\t%s\n", info.Path)
	fmt.Fprintf(tw, "name\t%s\n", cmp.Or(info.Name, "-"))
	fmt.Fprintf(tw, "architecture\t%s\n", info.Architecture)
	fmt.Fprintf(tw, "parameters\t%s (%d)\n", humanCount(info.Parameters), info.Parameters)
	fmt.Fprintf(tw, "tensors\t%d (%s)\n", info.Tensors, info.Types)
	if w := info.Whisper; w != nil {
		langs := "English only"
		if w.Multilingual {
			langs = fmt.Sprintf("multilingual, %d languages", w.Languages)
		}
		fmt.Fprintf(tw, "size\t%s (%s)\n", w.Size, langs)
		fmt.Fprintf(tw, "layers\t%d encoder, %d decoder\n", w.AudioLayers, w.TextLayers)
		fmt.Fprintf(tw, "width / heads\t%d / %d\n", w.Width, w.AudioHeads)
		fmt.Fprintf(tw, "mel bins\t%d\n", w.Mels)
		fmt.Fprintf(tw, "vocabulary\t%d (%d regular tokens)\n", w.Vocab, w.Tokens)
		fmt.Fprintf(tw, "context\t%d audio frames, %d text tokens\n", w.AudioCtx, w.TextCtx)
	}
	if v := info.Silero; v != nil {
		fmt.Fprintf(tw, "version\t%s\n", v.Version)
		fmt.Fprintf(tw, "window\t%d samples (+%d context) at 16 kHz\n", v.Window, v.Context)
	}
	fmt.Fprintf(tw, "file size\t%d bytes\n", info.SizeBytes)
	fmt.Fprintf(tw, "weights root\t%s\n", info.WeightsRoot)
	return tw.Flush()
}

// humanCount writes n as 260K, 1.2M, 27.0B.
func humanCount(n uint64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.0fK", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}
