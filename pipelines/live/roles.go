package live

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"boxd/pipelines/live/speakers"
)

// Roles is a vertical's speaker roles for pass 2's role map (step 2):
// clinical Doctor, Patient and Other; sales Seller and Buyer. A vertical
// with Roles keeps its sessions' audio and diarizes it on stop.
type Roles struct {
	// Names are the roles a speaker may be given.
	Names []string
	// Setting describes the conversation and each role for the model.
	Setting string
	// The fallback when the model call fails or no token is left: the
	// speaker who asks the most questions is Asker, the one of the others
	// who speaks most is Answerer, any other speaker is Rest.
	Asker, Answerer, Rest string
}

// Where the role map came from: roles_source in final_transcript.
const (
	RolesFromModel    = "model"
	RolesFromFallback = "fallback"
)

// rolesMaxLines bounds the lines the role-map prompt shows (the opening
// of a conversation is where people introduce themselves; each line cut
// to rolesLineChars).
const (
	rolesMaxLines  = 80
	rolesLineChars = 200
)

// mapRoles maps the speakers of lines to the vertical's roles: one
// grammar-bound, receipted model call, or the fallback rule when it
// cannot be made, fails, or gives two or more speakers a map without both
// sides (no Doctor or no Patient; no Seller or no Buyer). It returns the
// map and roles_source.
func (s *Session) mapRoles(ctx context.Context, lines []speakers.Line) (map[string]string, string) {
	rs := s.cfg.Vertical.Roles
	who := speakers.Speakers(lines)
	if rs == nil || len(who) == 0 {
		return map[string]string{}, RolesFromFallback
	}
	fallback := func() (map[string]string, string) {
		return speakers.ByQuestions(lines, rs.Asker, rs.Answerer, rs.Rest), RolesFromFallback
	}
	if s.cfg.Chat == nil || s.cfg.Chat.Engine == nil {
		return fallback()
	}
	if left, err := s.cfg.Budget.TokensLeft(ctx); err != nil || left <= 0 {
		return fallback()
	}
	schema, system, user := rolesPrompt(rs, lines, who)
	answer, err := s.call(ctx, "roles", schema, 12*len(who)+16, system, user, true, true)
	if err != nil {
		return fallback()
	}
	out, ok := readRoles(rs, who, answer)
	if !ok {
		return fallback()
	}
	return out, RolesFromModel
}

// readRoles reads the role map's answer: every speaker given one of the
// role names, and with two or more speakers both sides present (a map
// without a Doctor or a Patient, a Seller or a Buyer, is not one the rule
// would give: the rule decides instead).
func readRoles(rs *Roles, speakers []string, answer []byte) (map[string]string, bool) {
	var got map[string]string
	if json.Unmarshal(answer, &got) != nil {
		return nil, false
	}
	out := map[string]string{}
	used := map[string]bool{}
	for _, sp := range speakers {
		r, ok := got[sp]
		if !ok || !contains(rs.Names, r) {
			return nil, false
		}
		out[sp] = r
		used[r] = true
	}
	if len(speakers) >= 2 && (!used[rs.Asker] || !used[rs.Answerer]) {
		return nil, false
	}
	return out, true
}

// rolesPrompt is the role map's schema (every speaker required, each one
// of the role names: the grammar allows nothing else) and messages.
func rolesPrompt(rs *Roles, lines []speakers.Line, who []string) (json.RawMessage, string, string) {
	props := map[string]any{}
	for _, sp := range who {
		props[sp] = map[string]any{"type": "string", "enum": rs.Names}
	}
	schema, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": who, "additionalProperties": false})
	system := "You label the speakers of a diarized transcript. " + rs.Setting +
		" Answer with a JSON object mapping every speaker label to one role (" + strings.Join(rs.Names, ", ") + ")."
	var b strings.Builder
	fmt.Fprintf(&b, "Speakers: %s.\n\nTranscript:\n", strings.Join(who, ", "))
	for i, l := range lines {
		if i == rolesMaxLines {
			fmt.Fprintf(&b, "(%d more lines)\n", len(lines)-i)
			break
		}
		sp := l.Speaker
		if sp == "" {
			sp = "?"
		}
		text := l.Text
		if r := []rune(text); len(r) > rolesLineChars {
			text = string(r[:rolesLineChars]) + "…"
		}
		fmt.Fprintf(&b, "%s: %s\n", sp, text)
	}
	return schema, system, b.String()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
