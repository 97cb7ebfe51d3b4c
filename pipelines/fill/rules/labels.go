package rules

import (
	"regexp"
	"strings"
)

// The words that name a secret, for a field's label and for the label
// before a value in a document's line. They read folded text (lower
// case, no accents: "numéro" is "numero", "Führerschein" is
// "fuhrerschein"), in English, German, French, Spanish, Italian, Dutch
// and Portuguese; a field's description in other words ("Travel document
// no.", "the 16 digits on the front", "Policyholder no.", "ID (for age
// check)") names the same secret. First match wins, so the order
// matters: an identity card's number before a card's, a travel
// document's before any document's.
type secretRule struct {
	kind string
	re   *regexp.Regexp
	// line: the words also label a value in a document's line ("Passport
	// No: X1234567"); a signature's or a declaration's words do not.
	line bool
}

var secretRules = []secretRule{
	{SecretPassword, numberRE(`\b(pass ?(word|wd|phrase|code)s?|pwd|pins?( ?(code|number|no\.?|nr))?|one[- ]time (code|password|pin)|otp|security (answer|question answer)|secret answer|memorable (word|information)|` +
		`passwort|kennwort|geheimzahl|geheimcode|geheimnummer|mot de passe|mdp|code (secret|confidentiel|d'acces)|contrasena|clave( de acceso| secreta| personal)?|codigo pin|parola d'ordine|codice (segreto|d'accesso)|wachtwoord|pincode|toegangscode|senha|palavra[- ]passe|codigo secreto|current-password|new-password)\b`), true},
	{SecretCardCode, numberRE(`\b(cvv2?|cvc2?|csc|cvn|security code|card code|card verification( (code|value|number))?|(3|4|three|four)[- ]digit (security |verification )?code|(3|4|three|four) digits on the back|` +
		`kartenprufnummer|prufnummer|prufziffer|sicherheitscode|cryptogramme( visuel)?|code (de securite|de verification|cvv)|codigo (de seguridad|de verificacion|cvv)|codice (di sicurezza|di verifica|cvv)|beveiligingscode|controlecode|codigo de seguranca|cc-csc)\b`), true},
	{SecretPassport, numberRE(`\b(pass(port)? ?(number|no\.?|nr|#)|passports?|travel doc(ument)?s?( (number|no\.?|nr))?|reisepass(nummer)?|pass[- ]?(nr\.?|nummer)|passnummer|reisedokument|` +
		`passeport|document de voyage|titre de voyage|pasaporte|documento de viaje|passaporto|documento di viaggio|paspoort(nummer)?|reisdocument|passaporte)\b`), true},
	{SecretNationalID, numberRE(`\b(national ?id( (number|no\.?|card))?|id[- ]?card( (number|no\.?|nr))?|identity ?(card|number|document|no\.?)|identification (number|no\.?|document|card)|(government|gov't|govt|state|photo)[- ](issued )?id|document (number|no\.?|nr)|proof of identity|` +
		`personalausweis(nummer)?|ausweis(nummer|nr\.?|-nr\.?|dokument)?|ausweis ?nr\.?|identitatskarte|id-nummer|idnummer|` +
		`carte (nationale )?d'identite|(numero|no|n°) d'identite|piece d'identite|d'identite|` +
		`documento (nacional )?de identidad|numero de (identificacion|documento|identidad)|cedula( de identidad)?|` +
		`documento d'identita|carta d'identita|numero (del )?documento|documento di riconoscimento|numero (di )?identificazione|` +
		`burgerservicenummer|identiteitskaart|identiteitsbewijs|id-?kaart|legitimatie(bewijs)?|documentnummer|` +
		`cartao de cidadao|bilhete de identidade|numero de identificacao|documento de identificacao)\b`), true},
	{SecretCard, numberRE(`\b(card ?(number|no\.?|nr|#)|(credit|debit|bank|payment|cheque|check|charge) ?card|cc[ -]?num(ber)?|long number on (the|your) card|(1[5-9]|fifteen|sixteen) digits|digits on the front|number on the front( of (the|your) card)?|` +
		`kartennummer|kreditkarte(nnummer)?|debitkarte|ec-karte|girocard|numero de (la )?carte|carte (bancaire|de credit|bleue)|` +
		`numero de (la )?tarjeta|tarjeta de (credito|debito)|numero (della )?carta|carta di (credito|debito)|kaartnummer|creditcard(nummer)?|bankpas|pinpas|` +
		`numero do cartao|cartao de (credito|debito)|cardnumber|cc-number)\b`), true},
	{SecretIBAN, numberRE(`\biban\b`), true},
	{SecretRouting, numberRE(`\b(routing( (number|no\.?))?|aba( (number|no\.?))?|sort ?code|bsb|transit number|swift( code)?|bic|blz|bankleitzahl|code (banque|guichet))\b`), true},
	{SecretBank, numberRE(`\b(account ?(number|no\.?|nr|#)|bank ?account|acct( (number|no\.?))?|kontonummer|konto ?nr\.?|bankverbindung|numero de compte|compte bancaire|rib|` +
		`numero de (la )?cuenta|cuenta bancaria|numero (di )?conto|conto corrente|rekeningnummer|bankrekening( ?nummer)?|rekening ?nr\.?|numero da conta|conta bancaria)\b`), true},
	{SecretSSN, numberRE(`\b(ssn|social ?security( (number|no\.?))?|sozialversicherungs?(nummer)?|rentenversicherungs?(nummer)?|ahv(-nummer)?|national insurance( (number|no\.?))?|nino|social insurance number|` +
		`securite sociale|numero de secu|seguridad social|numero de afiliacion|previdenza sociale|sofi ?-?nummer|` +
		`seguranca social|niss)\b`), true},
	{SecretTax, numberRE(`\b(tax ?(id|number|no\.?|identification( number)?|code|file number|reference|payer id)|taxpayer (id|number)|vat ?(id|number|no\.?|reg(istration)?( number)?)|` +
		`steuer[ -]?(id|nr\.?|nummer|identifikationsnummer)|steuernummer|steueridentifikationsnummer|ust-?id(-?nr\.?)?|umsatzsteuer-?id(entifikationsnummer)?|` +
		`numero fiscal|(numero d'identification|identifiant|numero) fiscal|numero de (identificacion fiscal|contribuyente)|codice fiscale|partita iva|` +
		`fiscaal (nummer|id)|btw[ -]?(nummer|id)|numero de contribuinte|numero de identificacao fiscal)\b`), true},
	{SecretLicence, numberRE(`\b((driver'?s?|driving) ?licen[cs]e|licen[cs]e ?(number|no\.?|nr|#)|fuhrerschein(nummer)?|permis de conduire|numero de permis|licencia de conducir|` +
		`carne de conducir|permiso de conducir|patente( di guida)?|rijbewijs(nummer)?|carta de conducao)\b`), true},
	{SecretInsurance, numberRE(`\b((health|medical|dental) ?insurance( (number|no\.?|id|card))?|insurance ?(id|number|no\.?|#|nr|card)|(member|membership|policy|policyholder|policy holder|subscriber|insured|beneficiary) ?(id|number|no\.?|#|nr|num)|` +
		`medicare|medicaid|nhs ?(number|no\.?)|ehic|` +
		`versicherten ?(nr\.?|nummer|id)|versichertennummer|versicherungsnummer|versicherungsschein ?(nr\.?|nummer)|mitgliedsnummer|mitglieds-?nr\.?|policennummer|polizzennummer|krankenversicherungsnummer|krankenversichertennummer|` +
		`carte vitale|numero d'(adherent|assure|affiliation)|numero de (police|contrat)|numero de (poliza|afiliado|socio|asegurado)|tarjeta sanitaria|` +
		`numero (di )?(polizza|tessera|socio)|tessera sanitaria|polisnummer|lidnummer|lidmaatschapsnummer|verzekerdennummer|verzekeringsnummer|zorgpas|` +
		`numero de utente|numero da apolice|cartao de utente)\b`), true},
	{SecretSignature, numberRE(`\b(signature|sign here|signed by|e-?sign(ature)?|unterschrift|unterschreiben|firma (del|de la|dell'|della|qui|aqui)|firme aqui|handtekening|ondertekening|assinatura)\b`), false},
	{SecretDeclaration, numberRE(`\b(i (hereby )?(declare|certify|confirm|attest|agree|consent)|declaration|under penalty of perjury|i accept the terms|` +
		`(ich|hiermit) (erklare|bestatige|versichere|akzeptiere|willige)|ich stimme|erklarung|` +
		`je (declare|certifie|confirme|atteste|accepte)|declaration sur l'honneur|` +
		`(yo )?(declaro|certifico|confirmo|acepto)|declaracion (jurada|responsable)|` +
		`(io )?(dichiaro|certifico|confermo|accetto)|dichiarazione|ik (verklaar|bevestig|ga akkoord)|verklaring|` +
		`(eu )?(declaro|confirmo|aceito)|declaracao)\b`), false},
}

// lineLabels are words that label a secret in a document's line, though
// as a field's whole label they are too vague ("Account: 55510072",
// "Policy 88812-A", "Licence: D1234567").
var lineLabels = []secretRule{
	{SecretBank, numberRE(`\baccount\b`), true},
	{SecretInsurance, numberRE(`\b(policy|policyholder|member|membership|subscriber|insurance)\b`), true},
	{SecretLicence, numberRE(`\blicen[cs]e\b`), true},
	// "ID: 12345678" at the line's start or after a stop ("Order ID" is
	// not one).
	{SecretNationalID, numberRE(`(^|[\n;,(|]\s*)(id|i\.d\.)( ?(no\.?|nr\.?|number|#))?\s*[:#]`), true},
}

// abbreviations name secrets in capitals ("SSN", "EIN", "DNI"): read
// case-sensitively in a label or a line (German "ein" is "a"), and as
// whole words in a field's name or id ("ein", "ssn").
var abbreviations = map[string]string{
	"SSN": SecretSSN, "SIN": SecretSSN, "NIR": SecretSSN, "NISS": SecretSSN, "NINO": SecretSSN, "AHV": SecretSSN,
	"TIN": SecretTax, "EIN": SecretTax, "ITIN": SecretTax, "NIF": SecretTax, "UTR": SecretTax, "TFN": SecretTax, "PAN": SecretTax, "CIF": SecretTax,
	"NIE": SecretNationalID, "DNI": SecretNationalID, "BSN": SecretNationalID, "CNI": SecretNationalID, "PESEL": SecretNationalID, "CPR": SecretNationalID,
	"CURP": SecretNationalID, "CID": SecretCardCode, "CVV": SecretCardCode, "CVC": SecretCardCode, "PIN": SecretPassword, "NHS": SecretInsurance,
}

// numWord is the word "number" as the Romance languages abbreviate it
// ("numéro", "núm.", "nº", "n°", "nr."), put for "numero" in the rules.
const numWord = `(?:numero|num\.?|no\.?|n°|nr\.?)`

func numberRE(s string) *regexp.Regexp {
	return regexp.MustCompile(strings.ReplaceAll(s, "numero", numWord))
}

var abbrevRE = func() *regexp.Regexp {
	var ws []string
	for w := range abbreviations {
		ws = append(ws, w)
	}
	return regexp.MustCompile(`\b(` + strings.Join(ws, "|") + `)\b`)
}()

// bareID is a label that is "ID" and no more, but for a number's words
// or a note in brackets: "ID", "ID no.", "Photo ID", "ID (for age
// check)", "ID for age verification"; "Order ID" and "ID photo upload"
// are not.
var bareID = regexp.MustCompile(`^(your |photo |valid |official |a )?(id|i\.d\.)( ?(no\.?|nr\.?|number|#|card|document|doc))?( ?\(.*\))?( (for|to|used for) .*)?\s*[:*]?\s*$`)

// FieldSecret names the secret a field asks for, from what describes it
// (label, name, id, placeholder, autocomplete; its type: a password
// input is one whatever its label). "" when it asks for none.
func FieldSecret(typ string, describe ...string) string {
	if strings.EqualFold(typ, "password") {
		return SecretPassword
	}
	var parts []string
	for i, d := range describe {
		if strings.TrimSpace(d) == "" {
			continue
		}
		f := foldLabel(d)
		parts = append(parts, f)
		if bareID.MatchString(f) {
			return SecretNationalID
		}
		split := SplitName(d)
		if m := abbrevRE.FindString(split); m != "" {
			return abbreviations[m]
		}
		if i > 0 { // a name or an id: "ein", "ssn" in lower case
			for _, w := range strings.Fields(strings.ToUpper(split)) {
				if k, ok := abbreviations[w]; ok {
					return k
				}
			}
		}
	}
	text := strings.Join(parts, " ")
	for _, r := range secretRules {
		if r.re.MatchString(text) {
			return r.kind
		}
	}
	return ""
}
