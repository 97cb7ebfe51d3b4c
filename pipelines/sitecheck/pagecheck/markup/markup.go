package markup

import (
	"errors"
	"regexp"
	"strconv"
	"strings"

	"boxd/pipelines/sitecheck/pagecheck/jsonld"
	"boxd/pipelines/sitecheck/pagecheck/schema"
	"boxd/pipelines/sitecheck/pagecheck/text"
)

// Facts are what GenerateMarkup knows about a business. Strings are trimmed
// of ASCII whitespace; an empty string means "not given".
type Facts struct {
	Name         string   `json:"name"`
	Type         string   `json:"type"`
	URL          string   `json:"url"`
	Telephone    string   `json:"telephone"`
	Email        string   `json:"email"`
	Street       string   `json:"street"`
	City         string   `json:"city"`
	Region       string   `json:"region"`
	PostalCode   string   `json:"postal_code"`
	Country      string   `json:"country"`
	OpeningHours []string `json:"opening_hours"`
	PriceRange   string   `json:"price_range"`
	SameAs       []string `json:"same_as"`
	Description  string   `json:"description"`
	Logo         string   `json:"logo"`
	Latitude     string   `json:"latitude"`
	Longitude    string   `json:"longitude"`
}

var (
	reEmail     = regexp.MustCompile(`^[^@ \t\n\v\f\r]+@[^@ \t\n\v\f\r]+\.[^@ \t\n\v\f\r]+$`)
	rePhoneChar = regexp.MustCompile(`^[0-9+ ().-]+$`)
	reDecimal   = regexp.MustCompile(`^-?[0-9]+(?:\.[0-9]+)?$`)
)

// GenerateMarkup builds JSON-LD for a business. The result passes
// schema.Validate without errors. Invalid facts give an error and no
// markup; the package documentation lists the checks and their order.
func GenerateMarkup(f Facts) (jsonld.Object, error) {
	tr := text.TrimASCII
	f.Name, f.Type, f.URL, f.Telephone, f.Email = tr(f.Name), tr(f.Type), tr(f.URL), tr(f.Telephone), tr(f.Email)
	f.Street, f.City, f.Region, f.PostalCode, f.Country = tr(f.Street), tr(f.City), tr(f.Region), tr(f.PostalCode), tr(f.Country)
	f.PriceRange, f.Description, f.Logo, f.Latitude, f.Longitude = tr(f.PriceRange), tr(f.Description), tr(f.Logo), tr(f.Latitude), tr(f.Longitude)
	hours := trimList(f.OpeningHours)
	same := trimList(f.SameAs)

	fail := func(msg string) (jsonld.Object, error) { return nil, errors.New(msg) }
	ph := func(field, v string) error {
		if label, ok := text.FindPlaceholder(v); ok {
			return errors.New("facts." + field + ` contains placeholder text ("` + label + `")`)
		}
		return nil
	}
	absURL := func(field, v string) error {
		if err := ph(field, v); err != nil {
			return err
		}
		if !schema.IsAbsoluteURL(v) {
			return errors.New("facts." + field + " must be an absolute http(s) URL")
		}
		return nil
	}

	if f.Name == "" {
		return fail("facts.name is required")
	}
	if err := ph("name", f.Name); err != nil {
		return nil, err
	}
	typ := ""
	if f.Type != "" {
		if text.ASCIILower(f.Type) == "organization" {
			typ = "Organization"
		}
		for _, t := range schema.LocalBusinessTypes {
			if text.ASCIILower(t) == text.ASCIILower(f.Type) {
				typ = t
			}
		}
		if typ == "" {
			return fail(`facts.type "` + f.Type + `" is not Organization, LocalBusiness or a supported LocalBusiness subtype`)
		}
	}
	if f.URL != "" {
		if err := absURL("url", f.URL); err != nil {
			return nil, err
		}
	}
	if f.Telephone != "" {
		if err := ph("telephone", f.Telephone); err != nil {
			return nil, err
		}
		digits := 0
		for _, c := range f.Telephone {
			if c >= '0' && c <= '9' {
				digits++
			}
		}
		if !rePhoneChar.MatchString(f.Telephone) || digits < 7 {
			return fail("facts.telephone must hold at least 7 digits and only digits, spaces and + ( ) . -")
		}
	}
	if f.Email != "" {
		if err := ph("email", f.Email); err != nil {
			return nil, err
		}
		if !reEmail.MatchString(f.Email) {
			return fail("facts.email must be an email address")
		}
	}
	for _, kv := range [][2]string{{"street", f.Street}, {"city", f.City}, {"region", f.Region}, {"postal_code", f.PostalCode}, {"country", f.Country}} {
		if err := ph(kv[0], kv[1]); err != nil {
			return nil, err
		}
	}
	for i, h := range hours {
		field := "opening_hours[" + strconv.Itoa(i) + "]"
		if err := ph(field, h); err != nil {
			return nil, err
		}
		if !schema.IsOpeningHours(h) {
			return fail("facts." + field + ` must look like "Mo-Fr 09:00-17:00"`)
		}
	}
	if f.PriceRange != "" {
		if err := ph("price_range", f.PriceRange); err != nil {
			return nil, err
		}
		if text.RuneCount(f.PriceRange) > 100 {
			return fail("facts.price_range must be at most 100 characters")
		}
	}
	for i, s := range same {
		if err := absURL("same_as["+strconv.Itoa(i)+"]", s); err != nil {
			return nil, err
		}
	}
	if err := ph("description", f.Description); err != nil {
		return nil, err
	}
	if f.Logo != "" {
		if err := absURL("logo", f.Logo); err != nil {
			return nil, err
		}
	}
	if (f.Latitude == "") != (f.Longitude == "") {
		return fail("facts.latitude and facts.longitude must be given together")
	}
	if f.Latitude != "" {
		if !coordOK(f.Latitude, 90) {
			return fail("facts.latitude must be a decimal number from -90 to 90")
		}
		if !coordOK(f.Longitude, 180) {
			return fail("facts.longitude must be a decimal number from -180 to 180")
		}
	}
	hasAddress := f.Street != "" || f.City != "" || f.Region != "" || f.PostalCode != "" || f.Country != ""
	local := len(hours) > 0 || f.PriceRange != "" || f.Latitude != ""
	switch {
	case typ == "" && hasAddress:
		typ = "LocalBusiness"
	case typ == "":
		typ = "Organization"
	}
	if typ != "Organization" && !hasAddress {
		return fail("facts.type " + typ + " needs an address (facts.street, facts.city, ...)")
	}
	if typ == "Organization" && local {
		return fail("facts.opening_hours, facts.price_range, facts.latitude and facts.longitude need a LocalBusiness: give an address")
	}

	o := jsonld.Obj("@context", "https://schema.org", "@type", typ, "name", f.Name)
	set := func(k, v string) {
		if v != "" {
			o = append(o, jsonld.Member{Key: k, Value: v})
		}
	}
	set("description", f.Description)
	set("url", f.URL)
	set("logo", f.Logo)
	set("telephone", f.Telephone)
	set("email", f.Email)
	if hasAddress {
		addr := jsonld.Obj("@type", "PostalAddress")
		for _, kv := range [][2]string{{"streetAddress", f.Street}, {"addressLocality", f.City}, {"addressRegion", f.Region}, {"postalCode", f.PostalCode}, {"addressCountry", f.Country}} {
			if kv[1] != "" {
				addr = append(addr, jsonld.Member{Key: kv[0], Value: kv[1]})
			}
		}
		o = append(o, jsonld.Member{Key: "address", Value: addr})
	}
	if f.Latitude != "" {
		o = append(o, jsonld.Member{Key: "geo", Value: jsonld.Obj("@type", "GeoCoordinates", "latitude", f.Latitude, "longitude", f.Longitude)})
	}
	if len(hours) > 0 {
		o = append(o, jsonld.Member{Key: "openingHours", Value: hours})
	}
	set("priceRange", f.PriceRange)
	if len(same) > 0 {
		o = append(o, jsonld.Member{Key: "sameAs", Value: same})
	}
	return o, nil
}

// coordOK: a decimal number from -max to max, compared on its digits (the
// integer part below max, or equal to max with an all-zero fraction).
func coordOK(s string, max int) bool {
	if !reDecimal.MatchString(s) {
		return false
	}
	ip, frac, _ := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	ip = strings.TrimLeft(ip, "0")
	if len(ip) > 3 {
		return false
	}
	n, _ := strconv.Atoi("0" + ip)
	return n < max || (n == max && strings.Trim(frac, "0") == "")
}

// trimList trims every entry and drops empty ones.
func trimList(in []string) []string {
	out := []string{}
	for _, s := range in {
		if s = text.TrimASCII(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
