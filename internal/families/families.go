// Package families holds the one table of the service's route families:
// the demo-session verticals of contract document 1 section 1 (every id a
// POST /demo/session accepts, in the order messages list them), which of
// them take live audio on /ws/live, and the extra /ws/live query
// parameters each accepts (translate: lang and target). The platform's
// vertical checks, the live socket's vertical and parameter checks and
// their messages read this table; it imports nothing of boxd.
package families

import "strings"

// Kind is what a family serves (the kinds of contract document 1 section 1).
type Kind string

// Kinds of family.
const (
	KindLive   Kind = "live"   // live audio (document 1 section 6)
	KindChat   Kind = "chat"   // chat completions
	KindStudio Kind = "studio" // media generation
	KindTool   Kind = "tool"   // tool routes (documents 2 and 3)
)

// Family is one route family: a demo-session vertical id.
type Family struct {
	ID   string
	Kind Kind
	// Live: /ws/live serves it (and its sessions count against the live
	// cap).
	Live bool
	// LiveParams are the /ws/live query parameters it accepts besides
	// vertical and token.
	LiveParams []string
	// Doc is the contract document that describes it ("1", "2" or "3").
	Doc string
	// Pending: the contract names it, so sessions and keys accept it, but
	// this build serves none of its routes yet. Messages that offer ids
	// name it apart, so nobody is sent to a family that answers nothing.
	Pending bool
}

// AcceptsLiveParam reports whether /ws/live accepts the query parameter
// for this family.
func (f Family) AcceptsLiveParam(param string) bool {
	for _, p := range f.LiveParams {
		if p == param {
			return true
		}
	}
	return false
}

// table is the families in the order of contract document 1 section 1
// (then the site-check verticals of document 3). Messages list ids in this
// order.
//
// oral-assessment's live lanes (/ws/live?vertical=oral-assessment&rubric=)
// are not served yet: when they are, mark it Live with LiveParams rubric.
var table = []Family{
	{ID: "clinical", Kind: KindLive, Live: true, Doc: "1"},
	{ID: "sales", Kind: KindLive, Live: true, Doc: "1"},
	{ID: "field", Kind: KindLive, Live: true, Doc: "1"},
	{ID: "translate", Kind: KindLive, Live: true, LiveParams: []string{"lang", "target"}, Doc: "1"},
	{ID: "code", Kind: KindChat, Doc: "1"},
	{ID: "studio", Kind: KindStudio, Doc: "1"},
	{ID: "auditor", Kind: KindTool, Doc: "2"},
	{ID: "walkthrough-to-quote", Kind: KindTool, Doc: "2", Pending: true},
	{ID: "expert-to-sop", Kind: KindTool, Doc: "2", Pending: true},
	{ID: "storefront-accessibility-pass", Kind: KindTool, Doc: "2"},
	{ID: "fill-and-stop", Kind: KindTool, Doc: "2"},
	{ID: "oral-assessment", Kind: KindTool, Doc: "3"},
	{ID: "virtual-staging", Kind: KindTool, Doc: "3", Pending: true},
	{ID: "migration-check", Kind: KindTool, Doc: "3"},
	{ID: "geo-audit", Kind: KindTool, Doc: "3"},
	{ID: "review-reply", Kind: KindTool, Doc: "3"},
}

// All returns every family, in table order (a copy).
func All() []Family {
	out := make([]Family, len(table))
	for i, f := range table {
		f.LiveParams = append([]string(nil), f.LiveParams...)
		out[i] = f
	}
	return out
}

// IDs returns every family id (the accepted demo-session verticals), in
// table order.
func IDs() []string {
	out := make([]string, len(table))
	for i, f := range table {
		out[i] = f.ID
	}
	return out
}

// ServedIDs returns the ids of the families this build serves, in table
// order.
func ServedIDs() []string {
	var out []string
	for _, f := range table {
		if !f.Pending {
			out = append(out, f.ID)
		}
	}
	return out
}

// Choices is what a message offers for a vertical: the served ids, then
// the accepted ones this build does not serve yet, named as such.
func Choices() string {
	var pending []string
	for _, f := range table {
		if f.Pending {
			pending = append(pending, f.ID)
		}
	}
	out := strings.Join(ServedIDs(), ", ")
	if len(pending) > 0 {
		out += " (the contract's " + strings.Join(pending, ", ") + " are accepted too, but this build serves none of their routes yet)"
	}
	return out
}

// Lookup returns the family of id.
func Lookup(id string) (Family, bool) {
	for _, f := range table {
		if f.ID == id {
			f.LiveParams = append([]string(nil), f.LiveParams...)
			return f, true
		}
	}
	return Family{}, false
}

// Known reports whether id is a family id.
func Known(id string) bool { _, ok := Lookup(id); return ok }

// IsLive reports whether /ws/live serves id.
func IsLive(id string) bool { f, ok := Lookup(id); return ok && f.Live }

// LiveIDs returns the ids /ws/live serves, in table order.
func LiveIDs() []string {
	var out []string
	for _, f := range table {
		if f.Live {
			out = append(out, f.ID)
		}
	}
	return out
}

// AcceptsLiveParam reports whether /ws/live accepts the query parameter
// for the family id (false for an unknown id).
func AcceptsLiveParam(id, param string) bool {
	f, ok := Lookup(id)
	return ok && f.AcceptsLiveParam(param)
}

// WithLiveParam returns the ids of the families that accept the /ws/live
// query parameter, in table order.
func WithLiveParam(param string) []string {
	var out []string
	for _, f := range table {
		if f.AcceptsLiveParam(param) {
			out = append(out, f.ID)
		}
	}
	return out
}
