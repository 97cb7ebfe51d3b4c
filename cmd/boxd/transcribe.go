package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"boxd/cmd/boxd/cli"
	"boxd/configs"
	"boxd/engine/asr"
	"boxd/engine/asr/frontend"
	"boxd/engine/asr/stream"
	"boxd/engine/asr/tokenizer"
)

func newTranscribe() *cobra.Command {
	var (
		model, vad, lang, task   string
		streamed, asJSON, pace   bool
		noVAD, noFallback, stats bool
		beam, threads, maxTokens int
	)
	cmd := &cobra.Command{
		Use:   "transcribe FILE.wav",
		Short: "Transcribe a 16 kHz mono WAV with the live path's code: sentences, or (--stream) the live event stream",
		Long: `Transcribe a 16 kHz mono 16-bit WAV file with the box's speech model.

The audio is cut into sentences by the VAD and each sentence decoded, as a
live session does. With --stream the file is fed in 100 ms frames through
the live session code and every transcript event is printed: partial
(cumulative text of the sentence in progress) and final.

With --no-vad the whole file is decoded as openai/whisper and whisper.cpp
do without a VAD: 30 s windows, earlier text as the prompt, temperature
fallback (off with --no-fallback), timestamps. --stats prints where the time
went: log-mel, encoder and decoder milliseconds, decoder steps and windows
(with --json one more line, {"stats": {...}}).

The model is --model, else models.asr.path (BOXD_MODELS_ASR_PATH or the
config file); the VAD is --vad, else models.vad.path, else the packaged one.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := configs.Load(cmd.Flags())
			if err != nil {
				return configError{err}
			}
			if model == "" {
				model = cfg.Models.ASR.Path
			}
			if model == "" {
				return configError{errors.New("no speech model: pass --model FILE.gguf or set models.asr.path (BOXD_MODELS_ASR_PATH); boxd models convert makes one from whisper.cpp or Hugging Face files")}
			}
			if !cmd.Flags().Changed("beam") {
				beam = cfg.ASR.BeamSize
			}
			if threads < 0 {
				return configError{fmt.Errorf("--threads is %d: give the CPU threads to use, or 0 for asr.threads (all CPUs when unset)", threads)}
			}
			if threads == 0 {
				threads = cfg.ASR.Threads // the CLI runs alone: all CPUs when unset
			}
			if streamed && noVAD {
				return configError{errors.New("--stream and --no-vad do not go together: the live path always cuts sentences with the VAD")}
			}
			pcm, err := frontend.ReadWAV(args[0])
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			flash, err := asr.ParseFlash(cfg.ASR.FlashAttention)
			if err != nil {
				return configError{err}
			}
			if noVAD {
				return transcribeLongForm(cmd.Context(), out, model, pcm, asr.Options{Threads: threads, GPULayers: cfg.GPU.Layers, Slots: 1, Flash: flash},
					asr.DecodeOptions{Language: lang, Task: task, BeamSize: beam, Timestamps: true, MaxTokens: maxTokens}, noFallback, asJSON, stats)
			}
			if vad == "" {
				vad = cfg.VADPath()
			}
			if vad == "" {
				return configError{fmt.Errorf("no VAD file: pass --vad ggml-silero-v6.2.0.bin or set models.vad.path (the package installs %s), or use --no-vad", configs.PackagedVAD)}
			}
			e, err := stream.Load(cmd.Context(), model, vad, stream.Settings{
				BeamSize: beam, PartialStepMS: cfg.ASR.PartialStepMS, MaxSentenceS: float64(cfg.ASR.MaxSentenceS), GPULayers: cfg.GPU.Layers, Threads: threads,
				Parallel: 1, Flash: flash, // one file: one set of caches
			})
			if err != nil {
				return err
			}
			defer e.Close()
			o, err := e.Options(lang, task)
			if err != nil {
				return err
			}
			if noFallback {
				o.Final.Temperatures = []float64{0}
			}
			if maxTokens > 0 {
				o.Final.MaxTokens = maxTokens
			}
			if streamed {
				if err := transcribeStream(cmd.Context(), out, e, o, pcm, asJSON, pace); err != nil {
					return err
				}
				return printStats(out, e.Model.Stats(), stats, asJSON)
			}
			start := time.Now()
			res, err := stream.Transcribe(cmd.Context(), e.Model, e.VAD, pcm, o)
			if err != nil {
				return err
			}
			if asJSON {
				if err := cli.PrintJSON(out, struct {
					Model string `json:"model"`
					*stream.Result
					DecodeS float64 `json:"decode_s"`
				}{e.Model.Name(), res, time.Since(start).Seconds()}); err != nil {
					return err
				}
				return printStats(out, e.Model.Stats(), stats, true)
			}
			for _, s := range res.Sentences {
				fmt.Fprintf(out, "[%7.2f -> %7.2f] %s\n", s.Start, s.End, s.Text)
			}
			return printStats(out, e.Model.Stats(), stats, false)
		},
	}
	configs.RegisterFileFlags(cmd.Flags())
	f := cmd.Flags()
	f.StringVar(&model, "model", "", "Whisper GGUF (default models.asr.path)")
	f.StringVar(&vad, "vad", "", "Silero VAD file (default models.vad.path)")
	f.StringVar(&lang, "lang", "auto", "spoken language: auto or one of "+fmt.Sprint(tokenizer.SpokenLanguages))
	f.StringVar(&task, "task", asr.TaskTranscribe, "transcribe, or translate (into English)")
	f.IntVar(&beam, "beam", 5, "beam width for finished sentences, 1 greedy (default asr.beam_size)")
	f.BoolVar(&streamed, "stream", false, "feed 100 ms frames through the live session and print every event")
	f.BoolVar(&pace, "realtime", false, "with --stream, feed frames at the speed of speech through the live socket's worker (partials it has no time for are skipped)")
	f.BoolVar(&asJSON, "json", false, "print JSON (with --stream, one transcript event per line)")
	f.BoolVar(&noVAD, "no-vad", false, "decode the whole file in 30 s windows as openai/whisper and whisper.cpp do, without the VAD")
	f.BoolVar(&noFallback, "no-fallback", false, "decode once at temperature 0: no temperature fallback")
	f.IntVar(&threads, "threads", 0, "CPU threads (default asr.threads; all CPUs when unset)")
	f.IntVar(&maxTokens, "max-tokens", 0, "most tokens decoded per window or sentence (default 224)")
	f.BoolVar(&stats, "stats", false, "print where the time went: log-mel, encoder and decoder ms, decoder steps, windows")
	return cmd
}

// Stats is what --stats prints: milliseconds in the log-mel front end, the
// encoder and the decoder (every step and beam reorder), decoder steps and
// encoder windows.
type Stats struct {
	MelMS        float64 `json:"mel_ms"`
	EncoderMS    float64 `json:"encoder_ms"`
	DecoderMS    float64 `json:"decoder_ms"`
	DecoderSteps int64   `json:"decoder_steps"`
	Windows      int64   `json:"windows"`
}

func statsOf(s asr.Stats) Stats {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return Stats{MelMS: ms(s.Mel), EncoderMS: ms(s.Encoder), DecoderMS: ms(s.Decoder), DecoderSteps: s.Steps, Windows: s.Windows}
}

// printStats prints the model's work when want: one JSON line
// {"stats": {...}} with asJSON, else one line of text.
func printStats(out io.Writer, s asr.Stats, want, asJSON bool) error {
	if !want {
		return nil
	}
	st := statsOf(s)
	if asJSON {
		return json.NewEncoder(out).Encode(map[string]Stats{"stats": st})
	}
	perStep := 0.0
	if st.DecoderSteps > 0 {
		perStep = st.DecoderMS / float64(st.DecoderSteps)
	}
	_, err := fmt.Fprintf(out, "stats: log-mel %.1f ms, encoder %.1f ms over %d windows, decoder %.1f ms over %d steps (%.2f ms a step)\n",
		st.MelMS, st.EncoderMS, st.Windows, st.DecoderMS, st.DecoderSteps, perStep)
	return err
}

// transcribeLongForm decodes pcm without the VAD (--no-vad): the model's
// long-form transcription over 30 s windows.
func transcribeLongForm(ctx context.Context, out io.Writer, path string, pcm []float32, lo asr.Options, o asr.DecodeOptions, noFallback, asJSON, stats bool) error {
	m, err := asr.Load(ctx, path, lo)
	if err != nil {
		return err
	}
	defer m.Close()
	if noFallback {
		o.Temperatures = []float64{0}
	}
	start := time.Now()
	tr, err := m.Transcribe(ctx, pcm, o)
	if err != nil {
		return err
	}
	if asJSON {
		type segment struct {
			Start float64 `json:"start"`
			End   float64 `json:"end"`
			Text  string  `json:"text"`
		}
		segs := make([]segment, len(tr.Segments))
		for i, s := range tr.Segments {
			segs[i] = segment{s.Start, s.End, s.Text}
		}
		if err := cli.PrintJSON(out, struct {
			Model    string    `json:"model"`
			Language string    `json:"language"`
			Duration float64   `json:"duration_s"`
			Text     string    `json:"text"`
			Segments []segment `json:"segments"`
			DecodeS  float64   `json:"decode_s"`
		}{m.Name(), tr.Language, tr.Duration, tr.Text(), segs, time.Since(start).Seconds()}); err != nil {
			return err
		}
	} else {
		for _, s := range tr.Segments {
			fmt.Fprintf(out, "[%7.2f -> %7.2f] %s\n", s.Start, s.End, s.Text)
		}
	}
	return printStats(out, m.Stats(), stats, asJSON)
}

// transcribeStream plays pcm through a live session in 100 ms PCM16
// frames and prints each event as the socket would carry it.
func transcribeStream(ctx context.Context, out io.Writer, e *stream.Engine, o stream.Options, pcm []float32, asJSON, pace bool) error {
	began := time.Now()
	var werr error
	emit := func(ev stream.Event) {
		if werr != nil {
			return
		}
		if asJSON {
			werr = json.NewEncoder(out).Encode(struct {
				Type string `json:"type"`
				AtMS int64  `json:"at_ms"`
				stream.Event
			}{"transcript", time.Since(began).Milliseconds(), ev})
			return
		}
		mark := "…"
		if ev.Final {
			mark = "="
		}
		_, werr = fmt.Fprintf(out, "%3d %s [%7.2f] %s\n", ev.I, mark, ev.T, ev.Text)
	}
	frames := func(yield func(end int, frame []byte) bool) {
		frame := make([]byte, 3200)
		for off := 0; off < len(pcm); off += 1600 {
			n := min(1600, len(pcm)-off)
			for i, v := range pcm[off : off+n] {
				s := int16(max(-32768, min(32767, v*32768)))
				frame[2*i], frame[2*i+1] = byte(s), byte(uint16(s)>>8)
			}
			if !yield(off+n, frame[:2*n]) {
				return
			}
		}
	}
	if !pace {
		// As fast as the machine goes, every frame in turn: the events a
		// live session gives when the box keeps up with the speaker.
		s := e.Session(o)
		for _, frame := range frames {
			x, err := frontend.PCM16(frame)
			if err != nil {
				return err
			}
			evs, err := s.Feed(ctx, x, true)
			if err != nil {
				return err
			}
			for _, ev := range evs {
				emit(ev)
			}
		}
		evs, err := s.Flush(ctx)
		for _, ev := range evs {
			emit(ev)
		}
		if err != nil {
			return err
		}
		return werr
	}
	// At the speed of speech through the socket's worker, which skips
	// partial decodes it has no time for.
	st := stream.Start(ctx, e.Session(o), emit)
	for end, frame := range frames {
		if err := st.Write(ctx, frame); err != nil {
			_ = st.Close(ctx)
			return err
		}
		select {
		case <-time.After(time.Until(began.Add(time.Duration(end) * time.Second / frontend.SampleRate))):
		case <-ctx.Done():
			_ = st.Close(context.Background())
			return ctx.Err()
		}
	}
	if err := st.Close(ctx); err != nil {
		return err
	}
	return werr
}
