package rules

import "testing"

// TestSupports: the fill rule's check. A value is typed only when its line
// holds it, or the same date, time, phone number or amount written
// another way; near misses are refused.
func TestSupports(t *testing.T) {
	for _, c := range []struct {
		line, value string
		h           Hints
		how         string // "" refused
	}{
		{"Name: Ana  SILVA", "Ana Silva", Hints{}, ByLiteral},
		{"Name: Ana Silva", "Ana Silvia", Hints{}, ""},
		{"Favourite fruit: banana", "Ana", Hints{}, ""},
		{"Answer: yes", "ES", Hints{}, ""},
		{"Country: ES (Spain)", "ES", Hints{}, ByLiteral},
		{"e-mail ana@example.com.", "ana@example.com", Hints{}, ByLiteral},
		{"Born 4 March 1987 in Porto", "1987-03-04", Hints{}, ByDate},
		{"Born March 4th, 1987", "1987-03-04", Hints{}, ByDate},
		{"Born 1987-03-04", "4 Mar 1987", Hints{}, ByDate},
		{"Born 4 March 1987", "04/03/1987", Hints{DateOrder: "dmy"}, ByDate},
		{"Born 4 March 1987", "03/04/1987", Hints{DateOrder: "mdy"}, ByDate},
		{"Born 4 March 1987", "03/04/1987", Hints{}, ""}, // day and month could swap: not without the form's order
		{"Born 4 March 1987", "04.03.1988", Hints{DateOrder: "dmy"}, ""},
		{"Visit on 25/12/2026", "2026-12-25", Hints{}, ByDate}, // a day over 12 is not ambiguous
		{"Appointment at 2:30 PM", "14:30", Hints{}, ByTime},
		{"Appointment at 14.30", "2:30pm", Hints{}, ByTime},
		{"Appointment at 2:30 PM", "15:30", Hints{}, ""},
		{"Phone: +44 20 7946 0958", "020 7946 0958", Hints{}, ByPhone},
		{"Tel. (415) 555-0100", "+1 415 555 0100", Hints{}, ByPhone},
		{"Tel. (415) 555-0100", "415 555 0101", Hints{}, ""},
		{"Total due: €1.234,50", "1234.50", Hints{}, ByAmount},
		{"Total due: EUR 1,234.5", "€1234.50", Hints{}, ByAmount},
		{"Total due: $1,234.50", "€1234.50", Hints{}, ""}, // another currency
		{"Total due: $1,234.50", "1234.05", Hints{}, ""},
		{"Deposit 500", "500.00", Hints{}, ByAmount},
		{"", "x", Hints{}, ""},
		{"anything", "   ", Hints{}, ""},
	} {
		ok, how := Supports(c.line, c.value, c.h)
		if how != c.how || ok != (c.how != "") {
			t.Errorf("%q for %q: %v %q, want %q", c.value, c.line, ok, how, c.how)
		}
	}
}
