package live

// Pass-2 plumbing the verticals share: final_transcript (the live
// transcript in the contract's diarized-transcript shape, this box having
// no diarization model), summary.pass2 of a vertical whose pass 2 does not
// run, and summary.pass2_timing.

import (
	"encoding/json"
	"fmt"
	"strings"
)

// FinalTranscriptLine is one line of final_transcript (contract section
// 2). Without diarization the lines are the live transcript's: speaker and
// role null; start and end from the VAD's span of each sentence (end null
// only where a transcriber did not say).
type FinalTranscriptLine struct {
	N       int      `json:"n"`
	Speaker *string  `json:"speaker"`
	Role    *string  `json:"role"`
	Start   float64  `json:"start"`
	End     *float64 `json:"end"`
	Text    string   `json:"text"`
}

// FinalTranscript is the final_transcript lane's data and summary entry:
// {lines, roles, model, audio_s, diarize_s}. Without a diarization model
// roles is {} (no speaker to map), model and diarize_s null.
type FinalTranscript struct {
	Lines    []FinalTranscriptLine `json:"lines"`
	Roles    map[string]string     `json:"roles"`
	Model    *string               `json:"model"`
	AudioS   float64               `json:"audio_s"`
	DiarizeS *float64              `json:"diarize_s"`
}

// LiveFinalTranscript is final_transcript built from the live transcript.
func LiveFinalTranscript(st *State) FinalTranscript {
	lines := make([]FinalTranscriptLine, 0, len(st.Sentences))
	for _, s := range st.Sentences {
		l := FinalTranscriptLine{N: s.I + 1, Start: s.T, Text: s.Text}
		if s.End > 0 {
			end := s.End
			l.End = &end
		}
		lines = append(lines, l)
	}
	return FinalTranscript{Lines: lines, Roles: map[string]string{}, AudioS: st.AudioS}
}

// FinalTranscriptLane is the after-stop final_transcript lane (no model
// call): LiveFinalTranscript as its data, the numbered lines with their
// start times as its body.
func FinalTranscriptLane() *LaneSpec {
	return &LaneSpec{
		ID: "final_transcript", Title: "Final transcript", Local: true,
		Finish: func(st *State, _ int, _ json.RawMessage) (string, any, error) {
			ft := LiveFinalTranscript(st)
			var b strings.Builder
			b.WriteString("_The live transcript: speakers are not identified (no diarization model on this box)._\n\n")
			if len(ft.Lines) == 0 {
				b.WriteString("_Nothing was transcribed._\n")
			}
			for _, l := range ft.Lines {
				fmt.Fprintf(&b, "- [%d] %s %s\n", l.N, clock(l.Start), l.Text)
			}
			return b.String(), ft, nil
		},
	}
}

// clock is seconds as m:ss.
func clock(t float64) string {
	s := max(0, int(t))
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// Pass2NotRun is summary.pass2 of a vertical whose pass 2 does not run
// here (sales: diarization and roles only; field): {ran: false, reason}.
func Pass2NotRun(reason string) map[string]any {
	return map[string]any{"ran": false, "reason": reason}
}

// Pass2Timing is summary.pass2_timing: seconds each step took (its lane's
// latency: final_note for note_s, verifier for verifier_s), null for the
// steps that did not run (diarization and roles on this box, and a step
// that failed or that the vertical does not have); total_s is the steps
// that ran of the contract's four (the final_transcript lane is not one).
func Pass2Timing(st *State) map[string]any {
	total := 0.0
	sec := func(id string) *float64 {
		lb, ok := st.Lanes[id]
		if !ok {
			return nil
		}
		v := float64(lb.LatencyMS) / 1000
		total += v
		return &v
	}
	note, check := sec("final_note"), sec("verifier")
	return map[string]any{"diarize_s": nil, "roles_s": nil, "note_s": note, "verifier_s": check, "total_s": total}
}
