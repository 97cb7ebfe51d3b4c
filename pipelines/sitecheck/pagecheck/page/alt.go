package page

import (
	"regexp"
	"slices"
	"strings"
	"unicode"

	"boxd/pipelines/sitecheck/pagecheck/text"
)

// genericAltWords are alt texts (after normalisation and token filtering)
// that say nothing about the image.
var genericAltWords = []string{
	"alt", "alt image", "alt tag", "alt text", "avatar", "background", "banner", "bg",
	"blank", "click here", "default", "description", "dummy", "featured image", "figure",
	"graphic", "header image", "hero", "hero image", "icon", "image", "image alt",
	"image description", "images", "img", "insert alt text", "logo", "my image", "n a",
	"none", "null", "photo", "photograph", "photos", "pic", "picture", "pictures",
	"placeholder", "sample", "screenshot", "spacer", "stock photo", "tbd", "test",
	"thumb", "thumbnail", "todo", "undefined", "untitled",
}

// droppedAltTokens are removed before the generic comparison.
var droppedAltTokens = []string{
	"a", "an", "the", "of",
	"jpg", "jpeg", "png", "gif", "webp", "svg", "avif", "bmp", "tif", "tiff", "heic",
}

var (
	reCameraToken  = regexp.MustCompile(`^(?:img|dsc|dscn|dscf|pxl|mvimg|gopr|dji|pict|wp|wa|screenshot)[0-9]+$`)
	reCameraPrefix = regexp.MustCompile(`^(?:img|dsc|dscn|dscf|pxl|mvimg|gopr|dji|pict|wp|wa|screenshot)$`)
	reDigitsToken  = regexp.MustCompile(`^[0-9]+$`)
	reFileName     = regexp.MustCompile(`^[^ /]+\.(?:jpe?g|png|gif|webp|svg|avif|bmp|tiff?|heic|ico)$`)
)

// normAlnum lowers ASCII letters, turns every character other than a-z and
// 0-9 into a space, collapses spaces and trims.
func normAlnum(s string) string {
	b := []byte(text.ASCIILower(s))
	for i, c := range b {
		if !((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
			b[i] = ' '
		}
	}
	return strings.Join(strings.FieldsFunc(string(b), func(r rune) bool { return r == ' ' }), " ")
}

// MeaningfulAlt reports whether an image's alt text describes it. alt nil
// means the attribute is missing; src (may be "") is the image URL. The
// rules, in order (the first that applies decides):
//
//  1. missing alt: false;
//  2. t = alt with collapsed whitespace, trimmed; "" : false;
//  3. t shorter than 2 code points: false;
//  4. t without any Unicode letter (only digits, punctuation, symbols):
//     false;
//  5. t starting (ASCII case-insensitively) with "http://", "https://",
//     "www." or "data:": false;
//  6. t a file name (no space or "/", ending in .jpg .jpeg .png .gif .webp
//     .svg .avif .bmp .tif .tiff .heic .ico, any case): false;
//  7. with a src: its file name is the part after the last "/" of src cut at
//     the first "?" or "#"; t equal to it (ASCII case-insensitively), or
//     normAlnum(t) non-empty and equal to normAlnum of the file name without
//     its last ".extension": false;
//  8. n = normAlnum(t) non-empty: its space-separated tokens without
//     digit-only tokens, camera tokens and droppedAltTokens; none left, or
//     the rest joined by spaces in genericAltWords: false. A camera token is
//     a camera prefix (img, dsc, dscn, dscf, pxl, mvimg, gopr, dji, pict, wp,
//     wa or screenshot) followed by digits ("dsc01234"), or a camera prefix
//     alone when the next token is digit-only ("DSC_0042" gives "dsc 0042");
//  9. t holds placeholder text (text.FindPlaceholder): false;
//  10. otherwise true.
func MeaningfulAlt(alt *string, src string) bool {
	if alt == nil {
		return false
	}
	t := text.CollapseSpace(*alt)
	if t == "" || text.RuneCount(t) < 2 {
		return false
	}
	hasLetter := false
	for _, r := range t {
		if unicode.IsLetter(r) {
			hasLetter = true
			break
		}
	}
	if !hasLetter {
		return false
	}
	lt := text.ASCIILower(t)
	for _, p := range []string{"http://", "https://", "www.", "data:"} {
		if strings.HasPrefix(lt, p) {
			return false
		}
	}
	if reFileName.MatchString(lt) {
		return false
	}
	n := normAlnum(t)
	if src != "" {
		file := src
		if i := strings.IndexAny(file, "?#"); i >= 0 {
			file = file[:i]
		}
		file = file[strings.LastIndexByte(file, '/')+1:]
		stem := file
		if i := strings.LastIndexByte(stem, '.'); i >= 0 {
			stem = stem[:i]
		}
		if lt == text.ASCIILower(file) || (n != "" && n == normAlnum(stem)) {
			return false
		}
	}
	if n != "" {
		var kept []string
		toks := strings.Split(n, " ")
		for i, tok := range toks {
			camera := reCameraToken.MatchString(tok) ||
				(reCameraPrefix.MatchString(tok) && i+1 < len(toks) && reDigitsToken.MatchString(toks[i+1]))
			if camera || reDigitsToken.MatchString(tok) || slices.Contains(droppedAltTokens, tok) {
				continue
			}
			kept = append(kept, tok)
		}
		if len(kept) == 0 || slices.Contains(genericAltWords, strings.Join(kept, " ")) {
			return false
		}
	}
	if _, ok := text.FindPlaceholder(t); ok {
		return false
	}
	return true
}
