package live

// Pass 2's first two steps (contract section 6, "After-visit pass 2"):
// the session's audio, kept in memory only, is diarized when the session
// stops; Whisper's timed sentences are aligned to the speaker turns
// (package speakers); one grammar-bound model call maps the speakers
// S01..Sn to the vertical's roles (roles.go). The aligned, numbered, role-mapped
// lines then replace the session's sentences for the after-stop lanes, so
// that the cited note cites final_transcript's n.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"boxd/engine/diarize"
	"boxd/pipelines/live/speakers"
)

// Diarization is what pass 2 diarizes with: the diarizer (a model or the
// model-free boxd-classical-1), the speaker bounds, and how much audio a
// session keeps for it.
type Diarization struct {
	Diarizer diarize.Diarizer
	Options  diarize.Options
	// MaxAudioS bounds the audio a session keeps (diarize.max_audio_s):
	// 32,000 bytes a second (16 kHz PCM16). 0: an hour.
	MaxAudioS int
}

// maxSamples is the audio a session keeps, in samples.
func (d *Diarization) maxSamples() int {
	s := d.MaxAudioS
	if s <= 0 {
		s = 3600
	}
	return s * diarize.SampleRate
}

// audioBuffer is a session's audio for pass 2: PCM16 samples in memory
// only (never written anywhere), at most max of them. Past max it keeps
// nothing more and remembers that it overflowed: pass 2 then fails
// (a diarization of part of a session would leave lines unattributed).
type audioBuffer struct {
	pcm      []int16
	max      int
	overflow bool
	total    int64 // samples received, kept or not
}

// add appends a PCM16 little-endian frame.
func (b *audioBuffer) add(frame []byte) {
	n := len(frame) / 2
	b.total += int64(n)
	if b.overflow {
		return
	}
	if len(b.pcm)+n > b.max {
		b.overflow = true
		b.pcm = nil // dropped now: it will not be diarized
		return
	}
	for i := range n {
		b.pcm = append(b.pcm, int16(uint16(frame[2*i])|uint16(frame[2*i+1])<<8))
	}
}

// floats is the audio as samples in [-1, 1].
func (b *audioBuffer) floats() []float32 {
	out := make([]float32, len(b.pcm))
	for i, v := range b.pcm {
		out[i] = float32(v) / 32768
	}
	return out
}

// Diarized is pass 2's speaker-attributed transcript, kept in State for
// the after-stop lanes and the summary.
type Diarized struct {
	Transcript FinalTranscript
	// RolesS is how long the role map took.
	RolesS float64
}

// errNoDiarizer: the session has no diarizer (an Opener built without
// one).
var errNoDiarizer = errors.New("no diarizer is configured on this box")

// diarizePass2 runs pass 2's diarization and role map on the session's
// audio, then drops the audio. On success the session's sentences become
// the diarized lines; on failure pass 2 fails (error event, the vertical's
// fallback, summary.pass2's reason) and the live transcript stays.
func (s *Session) diarizePass2(ctx context.Context) {
	s.mu.Lock()
	buf := s.audio
	s.audio = nil // dropped whatever happens next
	sentences := append([]Sentence(nil), s.state.Sentences...)
	audioS := float64(s.audioMS) / 1000
	s.mu.Unlock()

	d := s.cfg.Diarize
	var err error
	switch {
	case d == nil || d.Diarizer == nil:
		err = errNoDiarizer
	case buf == nil:
		err = errors.New("the session kept no audio")
	case buf.overflow:
		err = fmt.Errorf("the session's audio (%.0f s) is longer than the %d s kept in memory for diarization (diarize.max_audio_s)", float64(buf.total)/diarize.SampleRate, d.maxSamples()/diarize.SampleRate)
	}
	if err != nil {
		s.failDiarization(err)
		return
	}
	began := time.Now()
	var res diarize.Result
	if len(sentences) > 0 {
		pcm := buf.floats()
		buf.pcm = nil
		res, err = d.Diarizer.Diarize(ctx, pcm, d.Options)
		if err != nil {
			if e := ctx.Err(); e != nil {
				err = e
			}
			s.failDiarization(fmt.Errorf("%s: %w", d.Diarizer.Name(), err))
			return
		}
	}
	diarizeS := time.Since(began).Seconds()
	spans := make([]speakers.Span, len(sentences))
	for i, se := range sentences {
		spans[i] = speakers.Span{Start: se.T, End: se.End, Text: se.Text}
	}
	lines := speakers.Align(spans, res.Turns)

	began = time.Now()
	roles, source := s.mapRoles(ctx, lines)
	rolesS := time.Since(began).Seconds()
	name := d.Diarizer.Name()
	ft := FinalTranscript{Lines: make([]FinalTranscriptLine, len(lines)), Roles: roles, Model: &name, AudioS: audioS, DiarizeS: &diarizeS, RolesSource: &source}
	for i, l := range lines {
		fl := FinalTranscriptLine{N: l.N, Start: l.Start, End: l.End, Text: l.Text}
		if l.Speaker != "" {
			fl.Speaker = new(l.Speaker)
			if r, ok := roles[l.Speaker]; ok {
				fl.Role = new(r)
			}
		}
		ft.Lines[i] = fl
	}
	s.mu.Lock()
	s.state.Diarized = &Diarized{Transcript: ft, RolesS: rolesS}
	s.state.Sentences = linesAsSentences(ft.Lines)
	s.mu.Unlock()
}

// failDiarization records that pass 2 failed at diarization.
func (s *Session) failDiarization(err error) {
	s.failPass2Why("diarization failed: " + err.Error())
}

// linesAsSentences turns the diarized lines into the sentences the
// after-stop lanes read: sentence i is line i+1, with its speaker's role
// (or label) so that Lines shows who said what.
func linesAsSentences(lines []FinalTranscriptLine) []Sentence {
	out := make([]Sentence, len(lines))
	for i, l := range lines {
		s := Sentence{I: l.N - 1, T: l.Start, Text: l.Text}
		if l.End != nil {
			s.End = *l.End
		}
		if l.Speaker != nil {
			s.Speaker = *l.Speaker
		}
		if l.Role != nil {
			s.Role = *l.Role
		}
		out[i] = s
	}
	return out
}
