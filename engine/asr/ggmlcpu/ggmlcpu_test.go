package ggmlcpu

import "testing"

// TestThreadsRefusesWhatItCannotReach: values without the field, or with
// a field of another shape, give nil (the backend keeps its threads).
// asr.TestThreadsFollowTheStep covers a real backend.
func TestThreadsRefusesWhatItCannotReach(t *testing.T) {
	type noField struct{ X int }
	type wrongType struct{ schedBackends []int }
	type nilBackends struct{ schedBackends []*int }
	for name, v := range map[string]any{
		"nil": nil, "not a pointer": noField{}, "no field": &noField{}, "wrong type": &wrongType{schedBackends: []int{1}},
		"no backends": &nilBackends{}, "nil backend": &nilBackends{schedBackends: []*int{nil}},
	} {
		if Threads(v) != nil {
			t.Errorf("%s: got a setter", name)
		}
	}
}
