package main

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"boxd/configs"
	"boxd/engine/asr/frontend"
	"boxd/engine/diarize"
	"boxd/engine/diarize/embnet"
	"boxd/engine/diarize/neural"
	"boxd/engine/diarize/score"
	"boxd/engine/diarize/segnet"
	box "boxd/internal/daemon"
	"boxd/pipelines/live"
)

// diarization is pass 2's diarizer: the neural pipeline when
// models.diarizer.path and models.diarizer.embedding_path are set (both
// networks loaded now, so that a wrong file stops the start with the
// setting named), else the model-free boxd-classical-1. close frees the
// networks.
func diarization(cfg *configs.Config, log *slog.Logger) (d *live.Diarization, closeFn func(), err error) {
	if cfg.Models.Diarizer.Path == "" {
		d = box.ClassicalDiarization(cfg)
		log.Info("diarizer", "model", d.Diarizer.Name(), "min_speakers", d.Options.MinSpeakers, "max_speakers", d.Options.MaxSpeakers)
		return d, func() {}, nil
	}
	gpu := cfg.GPU.Layers != 0
	seg, err := segnet.Load(cfg.Models.Diarizer.Path, segnet.Options{GPU: gpu})
	if err != nil {
		return nil, nil, fmt.Errorf("models.diarizer.path (%s): %w", cfg.Source("models.diarizer.path"), err)
	}
	emb, err := embnet.Load(cfg.Models.DiarizerEmbedding.Path, embnet.Options{GPU: gpu})
	if err != nil {
		seg.Close()
		return nil, nil, fmt.Errorf("models.diarizer.embedding_path (%s): %w", cfg.Source("models.diarizer.embedding_path"), err)
	}
	n := neural.New(seg, emb, embnet.Fbank, neural.Config{})
	d = &live.Diarization{Diarizer: n, Options: box.DiarizeOptions(cfg), MaxAudioS: cfg.Diarize.MaxAudioS}
	log.Info("diarizer", "model", n.Name(), "segmentation", cfg.Models.Diarizer.Path, "embedding", cfg.Models.DiarizerEmbedding.Path,
		"min_speakers", d.Options.MinSpeakers, "max_speakers", d.Options.MaxSpeakers)
	return d, func() { seg.Close(); emb.Close() }, nil
}

func newDiarize() *cobra.Command {
	var minSpeakers, maxSpeakers int
	var file string
	cmd := &cobra.Command{
		Use:   "diarize FILE.wav",
		Short: "Say who spoke when in a 16 kHz mono WAV with pass 2's diarizer, as RTTM",
		Long: `Diarize a 16 kHz 16-bit WAV file (mono; stereo is mixed down) with the diarizer pass 2 uses: the
neural pipeline when models.diarizer.path and models.diarizer.embedding_path
are set, else the model-free boxd-classical-1. Prints one RTTM SPEAKER line
per turn (speakers S01, S02, ... in order of first appearance), the form
dscore and pyannote.metrics read. The file name (without .wav) is the RTTM
file id unless --file-id is given.

--min-speakers and --max-speakers default to diarize.min_speakers and
diarize.max_speakers.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := configs.Load(cmd.Flags())
			if err != nil {
				return configError{err}
			}
			if strings.ContainsFunc(file, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
				return configError{fmt.Errorf("--file-id %q: an RTTM file id has no spaces or control characters", file)}
			}
			if cmd.Flags().Changed("min-speakers") {
				cfg.Diarize.MinSpeakers = minSpeakers
			}
			if cmd.Flags().Changed("max-speakers") {
				cfg.Diarize.MaxSpeakers = maxSpeakers
			}
			d, closeFn, err := diarization(cfg, slog.New(slog.DiscardHandler))
			if err != nil {
				return configError{err}
			}
			defer closeFn()
			if err := d.Options.Check(); err != nil {
				return configError{fmt.Errorf("--min-speakers/--max-speakers: %w", err)}
			}
			pcm, err := frontend.ReadWAV(args[0])
			if err != nil {
				return fmt.Errorf("%s: %w; give a 16 kHz mono 16-bit WAV (sox in.wav -r 16000 -c 1 -b 16 out.wav)", args[0], err)
			}
			began := time.Now()
			res, err := d.Diarizer.Diarize(cmd.Context(), pcm, d.Options)
			if err != nil {
				return err
			}
			if file == "" {
				file = strings.TrimSuffix(filepath.Base(args[0]), filepath.Ext(args[0]))
			}
			if err := score.WriteRTTM(cmd.OutOrStdout(), score.FromResult(file, res)); err != nil {
				return err
			}
			audio, took := float64(len(pcm))/diarize.SampleRate, time.Since(began).Seconds()
			rtf := ""
			if audio >= 1 {
				rtf = fmt.Sprintf(" (real-time factor %.4f)", took/audio)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: %d speakers, %d turns, %.1f s of audio in %.2f s%s\n",
				d.Diarizer.Name(), res.Speakers, len(res.Turns), audio, took, rtf)
			return nil
		},
	}
	cmd.Flags().IntVar(&minSpeakers, "min-speakers", 1, "fewest speakers to find (default diarize.min_speakers)")
	cmd.Flags().IntVar(&maxSpeakers, "max-speakers", 4, "most speakers to find (default diarize.max_speakers)")
	cmd.Flags().StringVar(&file, "file-id", "", "RTTM file id (default the file's name)")
	configs.RegisterFileFlags(cmd.Flags())
	return cmd
}
