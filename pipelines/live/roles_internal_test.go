package live

import (
	"reflect"
	"testing"
)

func TestReadRoles(t *testing.T) {
	rs := &Roles{Names: []string{"Doctor", "Patient", "Other"}, Asker: "Doctor", Answerer: "Patient", Rest: "Other"}
	two := []string{"S01", "S02"}
	cases := []struct {
		name     string
		speakers []string
		answer   string
		want     map[string]string
	}{
		{"both sides", two, `{"S01":"Patient","S02":"Doctor"}`, map[string]string{"S01": "Patient", "S02": "Doctor"}},
		{"a third voice", []string{"S01", "S02", "S03"}, `{"S01":"Doctor","S02":"Patient","S03":"Other"}`, map[string]string{"S01": "Doctor", "S02": "Patient", "S03": "Other"}},
		{"two doctors and no patient", two, `{"S01":"Doctor","S02":"Doctor"}`, nil},
		{"no doctor", two, `{"S01":"Patient","S02":"Other"}`, nil},
		{"one speaker alone may be either", []string{"S01"}, `{"S01":"Patient"}`, map[string]string{"S01": "Patient"}},
		{"a role not on the list", two, `{"S01":"Nurse","S02":"Patient"}`, nil},
		{"a speaker left out", two, `{"S01":"Doctor"}`, nil},
		{"not JSON", two, `{"S01":`, nil},
	}
	for _, c := range cases {
		got, ok := readRoles(rs, c.speakers, []byte(c.answer))
		if ok != (c.want != nil) || (ok && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("%s: %v %v, want %v", c.name, got, ok, c.want)
		}
	}
}
