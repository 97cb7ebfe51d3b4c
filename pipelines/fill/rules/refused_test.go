package rules

import (
	"testing"
)

// TestRefusedFormDisguised: the refused-form rule (immigration forms,
// court filings, customs entries) finds its words however the markup
// writes them: plainly, split by a comment, with an entity for a letter,
// with a Cyrillic or Greek look-alike letter, with an invisible character
// inside the word (zero-width space, joiner, soft hyphen, word joiner, a
// bidirectional mark, a combining mark, a variation selector), split by
// empty tags, in fullwidth or mathematical letters, accented, with odd
// spacing. Each disguise was a bypass before: the rule read the raw
// markup. Ordinary forms are not refused.
func TestRefusedFormDisguised(t *testing.T) {
	for _, c := range []struct{ name, html, what string }{
		{"plain", `<h1>Immigration status</h1><input>`, "an immigration form"},
		{"a comment inside the word", `<h1>Imm<!-- x -->igration</h1><input>`, "an immigration form"},
		{"an empty comment", `<label>Plain<!---->tiff <input></label>`, "a court filing"},
		{"an unterminated comment after", `<label>Cou<!--rt</label><input>`, ""},
		{"a decimal entity", `<h1>Imm&#105;gration</h1><input>`, "an immigration form"},
		{"a hex entity", `<h1>Asyl&#x75;m</h1><input>`, "an immigration form"},
		{"a named entity", `<h1>Customs&nbsp;declaration</h1><input>`, "a customs entry"},
		{"an entity for the space", `<h1>Visa&#32;application</h1><input>`, "an immigration form"},
		{"a Cyrillic i", "<h1>\u0456mmigration</h1><input>", "an immigration form"},
		{"a Cyrillic o", "<label>C\u043eurt <input></label>", "a court filing"},
		{"Cyrillic capitals", "<label>\u0421\u041eURT <input></label>", "a court filing"},
		{"a Greek omicron", "<label>Ass\u03bfciate d\u03bfcket <input></label>", "a court filing"},
		{"a Greek capital eta", "<label>\u0397ARMONIZED SYSTEM CODE <input></label>", "a customs entry"},
		{"a zero-width space", "<h1>Imm\u200bigration</h1><input>", "an immigration form"},
		{"a zero-width joiner", "<label>Sub\u200dpoena <input></label>", "a court filing"},
		{"a soft hyphen", "<label>Affi\u00addavit <input></label>", "a court filing"},
		{"a word joiner", "<label>Def\u2060endant <input></label>", "a court filing"},
		{"a right-to-left mark", "<label>Doc\u200fket <input></label>", "a court filing"},
		{"a byte order mark", "<label>Sum\ufeffmons <input></label>", "a court filing"},
		{"a combining mark", "<label>Co\u0301urt <input></label>", "a court filing"},
		{"a variation selector", "<label>Cou\ufe0frt <input></label>", "a court filing"},
		{"a Hangul filler", "<label>Cou\u3164rt <input></label>", "a court filing"},
		{"an entity for a zero-width space", `<h1>Imm&#8203;igration</h1><input>`, "an immigration form"},
		{"empty tags inside the word", `<h1>Imm<b></b>igra<span>tion</span></h1><input>`, "an immigration form"},
		{"fullwidth letters", "<h1>\uff29\uff4d\uff4d\uff49\uff47\uff52\uff41\uff54\uff49\uff4f\uff4e</h1><input>", "an immigration form"},
		{"mathematical letters", "<h1>\U0001d41c\U0001d428\U0001d42e\U0001d42b\U0001d42d</h1><input>", "a court filing"},
		{"accents", "<h1>Naturalizatión</h1><input>", "an immigration form"},
		{"a line break between the words", "<label>Case\n   number <input></label>", "a court filing"},
		{"a no-break space", "<label>Green\u00a0card <input></label>", "an immigration form"},
		{"an attribute", `<input name="x" placeholder="Tariff code">`, "a customs entry"},
		{"a form number", `<h1>Form I-130</h1><input>`, "an immigration form"},
		{"an ordinary form", `<h1>Library card</h1><label>Name <input></label><label>Courtesy title <input></label>`, ""},
		{"an ordinary form in Russian", "<h1>\u0417\u0430\u044f\u0432\u043a\u0430</h1><label>\u0418\u043c\u044f <input></label>", ""},
		{"words inside longer words", `<label>Courtyard view <input></label><label>Summonsed? no: Docketed <input></label>`, ""},
	} {
		what, word, refused := RefusedForm(c.html)
		if refused != (c.what != "") || what != c.what {
			t.Errorf("%s: refused %v as %q (%q), want %q", c.name, refused, what, word, c.what)
		}
	}
}
