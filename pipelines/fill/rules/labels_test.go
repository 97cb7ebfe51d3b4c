package rules

import "testing"

// TestFieldSecretLabels: fields that describe a secret in other words
// than its name, in the seven languages the rules read (English, German,
// French, Spanish, Italian, Dutch, Portuguese), are sensitive; their
// decoys (an order's reference, a postcode, "Member since", a count of
// guests, the upload instructions for a photo of one's ID) are not.
func TestFieldSecretLabels(t *testing.T) {
	cases := []struct {
		lang, label string
		want        string
	}{
		// English.
		{"en", "Travel document no.", SecretPassport},
		{"en", "Payment reference (the 16 digits on the front)", SecretCard},
		{"en", "The long number on your card", SecretCard},
		{"en", "Policyholder no.", SecretInsurance},
		{"en", "Subscriber ID", SecretInsurance},
		{"en", "Membership number", SecretInsurance},
		{"en", "ID", SecretNationalID},
		{"en", "ID (for age check)", SecretNationalID},
		{"en", "Photo ID number", SecretNationalID},
		{"en", "Government-issued ID", SecretNationalID},
		{"en", "3-digit code on the back", SecretCardCode},
		{"en", "Memorable word", SecretPassword},
		{"en", "National Insurance number", SecretSSN},
		{"en", "EIN", SecretTax},
		{"en", "Order reference", ""},
		{"en", "Order ID", ""},
		{"en", "Postcode", ""},
		{"en", "Email", ""},
		{"en", "Member since", ""},
		{"en", "Number of guests", ""},
		{"en", "ID photo upload instructions", ""},
		{"en", "Payment reference", ""},
		{"en", "Policyholder name", ""},
		{"en", "Insurance company", ""},
		{"en", "Travel dates", ""},
		{"en", "Cancellation policy", ""},
		// German.
		{"de", "Reisepassnummer", SecretPassport},
		{"de", "Personalausweis-Nr.", SecretNationalID},
		{"de", "Versichertennummer", SecretInsurance},
		{"de", "Sozialversicherungsnummer", SecretSSN},
		{"de", "Steuer-ID", SecretTax},
		{"de", "Führerscheinnummer", SecretLicence},
		{"de", "Kartenprüfnummer", SecretCardCode},
		{"de", "Kennwort", SecretPassword},
		{"de", "Unterschrift", SecretSignature},
		{"de", "Hausnummer", ""},
		{"de", "Kundennummer", ""},
		{"de", "Wählen Sie ein Datum", ""},
		{"de", "Anzahl der Gäste", ""},
		// French.
		{"fr", "Numéro de passeport", SecretPassport},
		{"fr", "Document de voyage", SecretPassport},
		{"fr", "N° de carte d'identité", SecretNationalID},
		{"fr", "Numéro de sécurité sociale", SecretSSN},
		{"fr", "Mot de passe", SecretPassword},
		{"fr", "Numéro d'adhérent", SecretInsurance},
		{"fr", "Cryptogramme visuel", SecretCardCode},
		{"fr", "Numéro de commande", ""},
		{"fr", "Code postal", ""},
		{"fr", "Nombre de personnes", ""},
		// Spanish.
		{"es", "Número de pasaporte", SecretPassport},
		{"es", "DNI / NIE", SecretNationalID},
		{"es", "Número de póliza", SecretInsurance},
		{"es", "Número de la Seguridad Social", SecretSSN},
		{"es", "Contraseña", SecretPassword},
		{"es", "Número de tarjeta", SecretCard},
		{"es", "Número de pedido", ""},
		{"es", "Número de huéspedes", ""},
		// Italian.
		{"it", "Numero di polizza", SecretInsurance},
		{"it", "Codice fiscale", SecretTax},
		{"it", "Carta d'identità", SecretNationalID},
		{"it", "Patente di guida", SecretLicence},
		{"it", "Tessera sanitaria", SecretInsurance},
		{"it", "Numero d'ordine", ""},
		{"it", "Numero di ospiti", ""},
		// Dutch.
		{"nl", "Paspoortnummer", SecretPassport},
		{"nl", "Burgerservicenummer (BSN)", SecretNationalID},
		{"nl", "Polisnummer", SecretInsurance},
		{"nl", "Wachtwoord", SecretPassword},
		{"nl", "Rekeningnummer", SecretBank},
		{"nl", "Rijbewijsnummer", SecretLicence},
		{"nl", "Huisnummer", ""},
		{"nl", "Aantal gasten", ""},
		// Portuguese.
		{"pt", "Número do passaporte", SecretPassport},
		{"pt", "Cartão de cidadão", SecretNationalID},
		{"pt", "Número de contribuinte", SecretTax},
		{"pt", "Número de utente", SecretInsurance},
		{"pt", "Palavra-passe", SecretPassword},
		{"pt", "Número da encomenda", ""},
		{"pt", "Código postal", ""},
	}
	secret, decoy := 0, 0
	langs := map[string]bool{}
	for _, c := range cases {
		langs[c.lang] = true
		if c.want == "" {
			decoy++
		} else {
			secret++
		}
		if got := FieldSecret("text", c.label); got != c.want {
			t.Errorf("%s %q: %q, want %q", c.lang, c.label, got, c.want)
		}
	}
	t.Logf("%d labels (%d secret, %d decoys) in %d languages", len(cases), secret, decoy, len(langs))
}

// TestFieldSecretNames: a field's name or id names a secret in lower
// case ("ein", "ssn"), while a label reads abbreviations only in capitals
// (German "ein" is "a").
func TestFieldSecretNames(t *testing.T) {
	if got := FieldSecret("text", "Employer number", "ein"); got != SecretTax {
		t.Errorf("name ein: %q", got)
	}
	if got := FieldSecret("text", "Geben Sie ein Datum ein", "datum"); got != "" {
		t.Errorf("German 'ein': %q", got)
	}
	if got := FieldSecret("text", "", "travelDocumentNumber"); got != SecretPassport {
		t.Errorf("camelCase travel document: %q", got)
	}
}
