package chunker

import (
	"unicode"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// units step through a document by what no cut may split: a code point
// (boxd-chunker-1 and -2) or an extended grapheme cluster (UAX #29, as
// github.com/rivo/uniseg computes it: boxd-chunker-3). Offsets are bytes
// of the whole document; every offset a cut uses is a unit boundary.
type units struct {
	text string
	// bounds is the set of grapheme cluster boundaries, one bit per byte
	// offset 0..len(text); nil when units are code points.
	bounds []uint64
}

// newUnits steps through text by code points, or by grapheme clusters
// when graphemes is true (the clusters found in one pass over text).
func newUnits(text string, graphemes bool) *units {
	u := &units{text: text}
	if !graphemes {
		return u
	}
	u.bounds = make([]uint64, len(text)/64+1)
	u.mark(0)
	rest, state := text, -1
	for len(rest) > 0 {
		_, rest, _, state = uniseg.FirstGraphemeClusterInString(rest, state)
		u.mark(len(text) - len(rest))
	}
	return u
}

func (u *units) mark(i int) { u.bounds[i/64] |= 1 << (i % 64) }

// at reports whether a unit starts (or the text ends) at byte i.
func (u *units) at(i int) bool {
	if u.bounds == nil {
		return i == len(u.text) || utf8.RuneStart(u.text[i])
	}
	return u.bounds[i/64]&(1<<(i%64)) != 0
}

// next is the end of the unit starting at i, at most end (i < end).
func (u *units) next(i, end int) int {
	if u.bounds == nil {
		_, w := utf8.DecodeRuneInString(u.text[i:end])
		return i + w
	}
	j := i + 1
	for j < end && !u.at(j) {
		j++
	}
	return j
}

// prev is the start of the unit ending at i, at least start (start < i).
func (u *units) prev(start, i int) int {
	if u.bounds == nil {
		_, w := utf8.DecodeLastRuneInString(u.text[start:i])
		return i - w
	}
	j := i - 1
	for j > start && !u.at(j) {
		j--
	}
	return j
}

// floor is the start of the unit holding byte i (i itself at a boundary).
func (u *units) floor(i int) int {
	for i > 0 && !u.at(i) {
		i--
	}
	return i
}

// ceil is the end of the unit holding byte i (i itself at a boundary).
func (u *units) ceil(i int) int {
	for i < len(u.text) && !u.at(i) {
		i++
	}
	return i
}

// space reports whether text[i:j] (one unit) is white space: every code
// point in it is. A space that carries a combining mark is not.
func (u *units) space(i, j int) bool {
	for _, r := range u.text[i:j] {
		if !unicode.IsSpace(r) {
			return false
		}
	}
	return true
}
