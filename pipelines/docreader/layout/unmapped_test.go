package layout

import "testing"

// TestDigitsAsRead: in words read from pixels, an O, o, l or I inside a
// number is the digit Tesseract took it for; other words stay as read.
func TestDigitsAsRead(t *testing.T) {
	for in, want := range map[string]string{
		"day 1O by nurse":   "day 10 by nurse",
		"2O24-11-29":        "2024-11-29",
		"(l5 mg)":           "(15 mg)",
		"1O.5%":             "10.5%",
		"Vitamin B12 250":   "Vitamin B12 250",
		"IO port, Oslo 12":  "IO port, Oslo 12",
		"room 4O1, bed I2.": "room 401, bed 12.",
		"l":                 "l",
	} {
		if got := digitsAsRead(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
