package schema

import (
	"regexp"
	"strconv"
	"strings"

	"boxd/pipelines/sitecheck/pagecheck/text"
)

// The value syntaxes: URLs, dates, numbers, prices, currencies, times and
// opening hours. Like every regular expression of pagecheck, these use only
// syntax that RE2, JavaScript and Python treat alike (see package text).
var (
	reAbsURL     = regexp.MustCompile(`^[Hh][Tt][Tt][Pp][Ss]?://[^ \t\n\v\f\r/?#]+(?:[/?#][^ \t\n\v\f\r]*)?$`)
	reScheme     = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
	reHostPath   = regexp.MustCompile(`^[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/`)
	reURLParts   = regexp.MustCompile(`^([Hh][Tt][Tt][Pp][Ss]?)://([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?$`)
	reDate       = regexp.MustCompile(`^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:T([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.[0-9]+)?)?(Z|[+-][0-9]{2}(?::?[0-9]{2})?)?)?$`)
	reNumber     = regexp.MustCompile(`^-?[0-9]+(?:\.[0-9]+)?$`)
	rePrice      = regexp.MustCompile(`^[0-9]+(?:\.[0-9]+)?$`)
	reCurrency   = regexp.MustCompile(`^[A-Z]{3}$`)
	reTime       = regexp.MustCompile(`^(?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9])?$`)
	reOpeningHrs = regexp.MustCompile(`^(?:Mo|Tu|We|Th|Fr|Sa|Su)(?:-(?:Mo|Tu|We|Th|Fr|Sa|Su))?(?:,(?:Mo|Tu|We|Th|Fr|Sa|Su)(?:-(?:Mo|Tu|We|Th|Fr|Sa|Su))?)*(?: (?:(?:[01][0-9]|2[0-3]):[0-5][0-9]|24:00)-(?:(?:[01][0-9]|2[0-3]):[0-5][0-9]|24:00))?$`)
)

// IsAbsoluteURL reports whether s is an absolute http or https URL with a
// host: scheme (any letter case) "://", a host of one or more characters
// other than ASCII whitespace, "/", "?" and "#", then optionally a path,
// query or fragment without ASCII whitespace. s is not trimmed.
func IsAbsoluteURL(s string) bool { return reAbsURL.MatchString(s) }

// IsOpeningHours reports whether s follows the schema.org openingHours text
// format: two-letter days, ranges and lists of them ("Mo-Fr", "Mo,We,Fr-Sa"),
// optionally followed by one 24-hour time range ("Mo-Fr 09:00-17:00").
func IsOpeningHours(s string) bool { return reOpeningHrs.MatchString(s) }

// urlProblem classifies a trimmed URL value: "" (absolute http(s)),
// "bad_url" (it has a scheme but is not an absolute http(s) URL) or
// "relative_url" (no scheme).
func urlProblem(s string) string {
	switch {
	case IsAbsoluteURL(s):
		return ""
	case reScheme.MatchString(s):
		return "bad_url"
	}
	return "relative_url"
}

// resolveURL makes a suggestion for a relative reference ref against the
// page URL base: "www." references and references that start with a host
// name and "/" ("facebook.com/page": labels of letters, digits and "-",
// the last one of two or more letters) get "https://", "//" references get the
// base scheme, "/" references the base origin, "?" and "#" references the
// base origin and path, others the base origin and the base path up to its
// last "/". There is no dot-segment removal. Without an absolute http(s)
// base the origin is "https://<your-domain>" and the path "/".
func resolveURL(base, ref string) string {
	scheme, origin, path := "https", "https://<your-domain>", "/"
	if m := reURLParts.FindStringSubmatch(base); m != nil && IsAbsoluteURL(base) {
		scheme = text.ASCIILower(m[1])
		origin = scheme + "://" + m[2]
		path = m[3]
		if path == "" {
			path = "/"
		}
	}
	switch {
	case strings.HasPrefix(text.ASCIILower(ref), "www.") || reHostPath.MatchString(ref):
		return "https://" + ref
	case strings.HasPrefix(ref, "//"):
		return scheme + ":" + ref
	case strings.HasPrefix(ref, "/"):
		return origin + ref
	case strings.HasPrefix(ref, "?") || strings.HasPrefix(ref, "#"):
		return origin + path + ref
	}
	return origin + path[:strings.LastIndexByte(path, '/')+1] + ref
}

// NormalizeURL lowers the scheme and host, drops the default port (":80"
// for http, ":443" for https) and the fragment, and makes an empty path "/".
// u is returned as it is when it does not split into those parts (when it
// does not start with "http://" or "https://" in any letter case, say).
func NormalizeURL(u string) string {
	m := reURLParts.FindStringSubmatch(u)
	if m == nil {
		return u
	}
	scheme := text.ASCIILower(m[1])
	host := text.ASCIILower(m[2])
	if (scheme == "http" && strings.HasSuffix(host, ":80")) || (scheme == "https" && strings.HasSuffix(host, ":443")) {
		host = host[:strings.LastIndexByte(host, ':')]
	}
	path := m[3]
	if path == "" {
		path = "/"
	}
	return scheme + "://" + host + path + m[4]
}

// dateProblem classifies a trimmed date value: "" (valid), "bad_date" or
// "missing_timezone" (valid, with a time but no offset). Valid values are
// YYYY-MM-DD, optionally followed by Thh:mm, Thh:mm:ss or Thh:mm:ss.fraction
// and an optional Z, ±hh, ±hhmm or ±hh:mm; fields must be in range (month
// 01-12, day within the month with Gregorian leap years, hour 00-23, minute
// and second 00-59, offset hour 00-23 and minute 00-59).
func dateProblem(s string) string {
	m := reDate.FindStringSubmatch(s)
	if m == nil {
		return "bad_date"
	}
	year, _ := strconv.Atoi(m[1])
	month, _ := strconv.Atoi(m[2])
	day, _ := strconv.Atoi(m[3])
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) {
		return "bad_date"
	}
	if m[4] == "" {
		return ""
	}
	hour, _ := strconv.Atoi(m[4])
	minute, _ := strconv.Atoi(m[5])
	second := 0
	if m[6] != "" {
		second, _ = strconv.Atoi(m[6])
	}
	if hour > 23 || minute > 59 || second > 59 {
		return "bad_date"
	}
	tz := m[7]
	if tz == "" {
		return "missing_timezone"
	}
	if tz != "Z" {
		digits := strings.ReplaceAll(tz[1:], ":", "")
		th, _ := strconv.Atoi(digits[:2])
		tm := 0
		if len(digits) == 4 {
			tm, _ = strconv.Atoi(digits[2:])
		}
		if th > 23 || tm > 59 {
			return "bad_date"
		}
	}
	return ""
}

func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// IsISODate reports whether s is a valid date or date-time per dateProblem
// (a date-time without timezone counts as valid).
func IsISODate(s string) bool { return dateProblem(s) != "bad_date" }
