// Package text holds the string-level building blocks of the page checks
// (the TypeScript kit's pagecheck-text.ts): a small forgiving HTML scanner
// (Scan), HTML character references (DecodeEntities), the page text an AI
// crawler without JavaScript sees (ExtractText), placeholder detection
// (FindPlaceholder) and the ASCII-only string helpers every port mirrors
// (ASCIILower, TrimASCII, CollapseSpace, RuneCount, TruncateRunes).
//
// Every regular expression of pagecheck and its sub-packages uses only
// syntax that RE2, the JavaScript RegExp (without flags) and Python's re
// treat alike: ASCII character classes spelled out ([0-9], never \d or \s),
// no look-around, no inline flags, no backreferences.
//
// Scan's rules, at each "<" (anything else, a "<" followed by other
// characters included, is text):
//
//   - "<!--" starts a comment that ends at the first "-->" ("<!-->" and
//     "<!--->" are empty comments; without "-->" it runs to the end);
//   - "<!", "<?" and "</" not followed by an ASCII letter start bogus
//     markup up to the next ">" (or the end);
//   - "</" and a letter is an end tag: the name runs to HTML whitespace,
//     "/" or ">" and is lowered; the tag ends at the next ">";
//   - "<" and a letter is a start tag: the name as for end tags, then
//     attributes separated by HTML whitespace or "/": a lowered name up to
//     whitespace, "/", ">" or "=" (a leading "=" is skipped), and optionally
//     "=" and a value in '...' or "..." or unquoted up to whitespace or ">";
//     values are entity-decoded, the first of duplicate names is kept;
//   - after the start tag of script, style, textarea or title, its content
//     is raw text up to the first "</" and the name (any letter case)
//     followed by HTML whitespace, "/", ">" or the end of the input (all
//     the rest when there is none), then that end tag up to its ">" or the
//     end of the input.
//
// When the input ends inside a start tag (a quoted value included) or an
// end tag outside raw text, the rest of the input is dropped.
package text
