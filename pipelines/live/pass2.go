package live

// Pass-2 plumbing the verticals share: final_transcript (the diarized,
// role-mapped transcript of diarized.go, or the live transcript without
// speakers where diarization did not run), summary.pass2 of a vertical
// whose pass 2 does not run, and summary.pass2_timing.

import (
	"encoding/json"
	"fmt"
	"strings"
)

// FinalTranscriptLine is one line of final_transcript (contract section
// 2). Diarized, each line is one speaker's (align.go); without
// diarization the lines are the live transcript's: speaker and role null.
// Start and end come from the VAD's span of each sentence (end null only
// where a transcriber did not say).
type FinalTranscriptLine struct {
	N       int      `json:"n"`
	Speaker *string  `json:"speaker"`
	Role    *string  `json:"role"`
	Start   float64  `json:"start"`
	End     *float64 `json:"end"`
	Text    string   `json:"text"`
}

// FinalTranscript is the final_transcript lane's data and summary entry:
// {lines, roles, model, audio_s, diarize_s} and roles_source (model: the
// role-map call decided; fallback: the questions rule did; null without
// diarization). Without diarization roles is {} (no speaker to map),
// model and diarize_s null.
type FinalTranscript struct {
	Lines       []FinalTranscriptLine `json:"lines"`
	Roles       map[string]string     `json:"roles"`
	Model       *string               `json:"model"`
	AudioS      float64               `json:"audio_s"`
	DiarizeS    *float64              `json:"diarize_s"`
	RolesSource *string               `json:"roles_source"`
}

// Final is final_transcript of a stopped session: the diarized one when
// pass 2 diarized, else the live transcript without speakers.
func Final(st *State) FinalTranscript {
	if st.Diarized != nil {
		return st.Diarized.Transcript
	}
	return LiveFinalTranscript(st)
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
// call): Final as its data, the numbered lines with their start times
// and speakers as its body.
func FinalTranscriptLane() *LaneSpec {
	return &LaneSpec{
		ID: "final_transcript", Title: "Final transcript", Local: true,
		Finish: func(st *State, _ int, _ json.RawMessage) (string, any, error) {
			ft := Final(st)
			var b strings.Builder
			if ft.Model == nil {
				b.WriteString("_The live transcript: speakers are not identified (pass 2's diarization did not run)._\n\n")
			} else {
				fmt.Fprintf(&b, "_Speakers by %s; roles by the %s._\n\n", *ft.Model, map[bool]string{true: "language model", false: "questions rule (the model call did not decide)"}[ft.RolesSource != nil && *ft.RolesSource == RolesFromModel])
			}
			if len(ft.Lines) == 0 {
				b.WriteString("_Nothing was transcribed._\n")
			}
			for _, l := range ft.Lines {
				who := ""
				switch {
				case l.Role != nil:
					who = fmt.Sprintf("**%s** (%s): ", *l.Role, *l.Speaker)
				case l.Speaker != nil:
					who = fmt.Sprintf("**%s**: ", *l.Speaker)
				}
				fmt.Fprintf(&b, "- [%d] %s %s%s\n", l.N, clock(l.Start), who, l.Text)
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

// Pass2Timing is summary.pass2_timing: seconds each step took (diarize_s
// and roles_s measured by diarized.go; note_s and verifier_s their lanes'
// latency), null for the steps that did not run (a step that failed or
// that the vertical does not have); total_s is the steps that ran of the
// contract's four (the final_transcript lane is not one).
func Pass2Timing(st *State) map[string]any {
	total := 0.0
	var diarizeS, rolesS *float64
	if d := st.Diarized; d != nil {
		diarizeS, rolesS = d.Transcript.DiarizeS, &d.RolesS
		total += *diarizeS + *rolesS
	}
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
	return map[string]any{"diarize_s": diarizeS, "roles_s": rolesS, "note_s": note, "verifier_s": check, "total_s": total}
}
