package form

import (
	"regexp"
	"strings"

	"boxd/pipelines/fill/rules"
)

// Kinds of field: what a form asks for.
const (
	KindGivenName  = "given name"
	KindFamilyName = "family name"
	KindFullName   = "full name"
	KindEmail      = "email"
	KindPhone      = "phone"
	KindStreet     = "street address"
	KindCity       = "city"
	KindPostalCode = "postal code"
	KindRegion     = "region"
	KindCountry    = "country"
	KindBirthDate  = "date of birth"
	KindDate       = "date"
	KindTime       = "time"
	KindAmount     = "amount"
	KindQuantity   = "quantity"
	KindCompany    = "organisation"
	KindJobTitle   = "job title"
	KindURL        = "web address"
	KindSex        = "sex or gender"
	KindMedication = "medication"
	KindAllergy    = "allergies"
	KindCondition  = "condition"
	KindChoice     = "choice" // a select, radio or check box not otherwise known
	KindText       = "text"   // anything else
	KindSecret     = "secret" // see Field.Secret
)

// autocompleteKinds map the HTML autocomplete tokens a form may state.
var autocompleteKinds = map[string]string{
	"given-name": KindGivenName, "family-name": KindFamilyName, "name": KindFullName, "email": KindEmail,
	"tel": KindPhone, "tel-national": KindPhone, "street-address": KindStreet, "address-line1": KindStreet, "address-line2": KindStreet,
	"address-level2": KindCity, "address-level1": KindRegion, "postal-code": KindPostalCode, "country": KindCountry, "country-name": KindCountry,
	"bday": KindBirthDate, "organization": KindCompany, "organization-title": KindJobTitle, "url": KindURL, "sex": KindSex,
}

// labelKinds read a field's words, first match wins (order matters:
// "date of birth" before "date", "family name" before "name").
var labelKinds = []struct {
	kind string
	re   *regexp.Regexp
}{
	{KindBirthDate, regexp.MustCompile(`(?i)\b(date of birth|birth ?date|birthday|dob|d\.o\.b\.?|geburtsdatum|date de naissance|fecha de nacimiento)\b`)},
	{KindEmail, regexp.MustCompile(`(?i)\be-?mail\b`)},
	{KindPhone, regexp.MustCompile(`(?i)\b(phone|telephone|tel\.?|mobile|cell|telefon|téléphone|teléfono)\b`)},
	{KindGivenName, regexp.MustCompile(`(?i)\b(first|given|fore) ?name\b|\bvorname\b|\bprénom\b|\bnombre\b`)},
	{KindFamilyName, regexp.MustCompile(`(?i)\b(last|family|sur) ?name\b|\bsurname\b|\bnachname\b|\bnom de famille\b|\bapellidos?\b`)},
	{KindFullName, regexp.MustCompile(`(?i)\b(full )?name\b|\bnom\b`)},
	{KindStreet, regexp.MustCompile(`(?i)\b(street|address( line)?|adresse|dirección|straße|strasse)\b`)},
	{KindCity, regexp.MustCompile(`(?i)\b(city|town|ort|ville|ciudad|stadt)\b`)},
	{KindPostalCode, regexp.MustCompile(`(?i)\b(post ?code|postal ?code|zip( ?code)?|plz|code postal|código postal)\b`)},
	{KindRegion, regexp.MustCompile(`(?i)\b(state|province|region|county)\b`)},
	{KindCountry, regexp.MustCompile(`(?i)\b(country|land|pays|país)\b`)},
	{KindCompany, regexp.MustCompile(`(?i)\b(company|organi[sz]ation|employer|firma|entreprise|empresa)\b`)},
	{KindJobTitle, regexp.MustCompile(`(?i)\b(job title|position|occupation|role)\b`)},
	{KindURL, regexp.MustCompile(`(?i)\b(website|web ?site|url|homepage)\b`)},
	{KindSex, regexp.MustCompile(`(?i)\b(sex|gender)\b`)},
	{KindMedication, regexp.MustCompile(`(?i)\b(medications?|medicines?|prescriptions?|drugs)\b`)},
	{KindAllergy, regexp.MustCompile(`(?i)\ballerg(y|ies|ic)\b`)},
	{KindCondition, regexp.MustCompile(`(?i)\b(conditions?|diagnos[ie]s|medical history|symptoms?|reason for (visit|appointment))\b`)},
	{KindAmount, regexp.MustCompile(`(?i)\b(amount|total|price|cost|fee|salary|income|payment of)\b`)},
	{KindQuantity, regexp.MustCompile(`(?i)\b(quantity|qty|number of|how many)\b`)},
	{KindDate, regexp.MustCompile(`(?i)\b(date|day|datum)\b`)},
	{KindTime, regexp.MustCompile(`(?i)\b(time|hour|uhrzeit|heure)\b`)},
}

// Kind says what a field asks for: a secret first (never typed), then the
// form's own autocomplete token, the input type, and the field's words.
func Kind(f Field) string {
	if f.Secret != "" {
		return KindSecret
	}
	for _, tok := range strings.Fields(strings.ToLower(f.Autocomplete)) {
		if k, ok := autocompleteKinds[tok]; ok {
			return k
		}
	}
	switch f.Type {
	case "email":
		return KindEmail
	case "tel":
		return KindPhone
	case "url":
		return KindURL
	case "time":
		return KindTime
	}
	words := rules.SplitName(strings.Join([]string{f.Label, f.Name, f.ID}, " "))
	for _, k := range labelKinds {
		if k.re.MatchString(words) {
			if k.kind == KindDate && f.Type != "date" && f.Type != "text" && f.Type != "" {
				continue
			}
			return k.kind
		}
	}
	switch f.Type {
	case "date", "datetime-local", "month":
		return KindDate
	case "number":
		return KindQuantity
	case "select", "radio", "checkbox", "select-one", "select-multiple":
		return KindChoice
	}
	return KindText
}
