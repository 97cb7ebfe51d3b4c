package inject

import (
	"sort"
	"strings"
)

// verbs are an instruction's verbs about a form, by language (folded:
// no accents), as imperatives and, after "please" or "veuillez", as
// infinitives.
var verbs = map[string]string{
	"en": `fill|fill in|fill out|enter|type|input|select|choose|pick|tick|check|uncheck|untick|submit|send|click|press|write|put|set|leave|mark|answer|use|add|include|copy|paste|change|update|opt in|opt out|sign|agree|accept|subscribe|insert|provide|complete|skip|ignore|disregard|forget|reply|respond|approve|confirm|book|buy|purchase|upload|forward|email|post|share|reveal|apply|redeem|enable|disable|activate|deactivate|order|rate|grant|allow|authorize|authorise|do not|don't|never|always`,
	"de": `wahle|wahlen sie|trage|tragen sie|gib|geben sie|kreuze|kreuzen sie|setze|setzen sie|fulle|fullen sie|klicke|klicken sie|schreibe|schreiben sie|aktiviere|aktivieren sie|markiere|markieren sie|akzeptiere|akzeptieren sie|sende|senden sie|schicke|schicken sie|abonniere|ignoriere|ignorieren sie|vergiss|lass|lassen sie|nimm|nehmen sie|bestatige|bestatigen sie|buche|buchen sie|wahlen|eintragen|ankreuzen|auswahlen|ausfullen|angeben`,
	"fr": `remplis|remplissez|saisis|saisissez|entrez|tape|tapez|selectionne|selectionnez|choisis|choisissez|coche|cochez|decoche|decochez|indique|indiquez|mets|mettez|clique|cliquez|ecris|ecrivez|envoie|envoyez|accepte|acceptez|inscris|inscrivez|renseigne|renseignez|ignore|ignorez|oublie|oubliez|ne tiens pas|ne tenez pas|laisse|laissez|confirme|confirmez|reponds|repondez|donne|donnez|ajoute|ajoutez|copiez|remplir|saisir|selectionner|choisir|cocher|decocher|indiquer|cliquer|ecrire|envoyer|accepter|renseigner|laisser|mettre`,
	"es": `rellena|rellene|completa|complete|escribe|escriba|introduce|introduzca|ingresa|ingrese|selecciona|seleccione|elige|elija|escoge|escoja|marque|desmarca|desmarque|pon|ponga|haz clic|haga clic|pulsa|envia|envie|acepta|acepte|suscribe|suscriba|indique|ignora|ignore|olvida|olvide|deja|deje|confirma|confirme|responde|responda|anade|anada|no informes|no digas`,
	"it": `compila|compilate|compili|inserisci|inserite|inserisca|scrivi|scrivete|scriva|seleziona|selezionate|selezioni|scegli|scegliete|scelga|spunta|spuntate|spunti|metti|mettete|metta|clicca|cliccate|clicchi|invia|inviate|invii|accetta|accettate|accetti|indicate|indichi|ignora|ignorate|ignori|dimentica|dimenticate|lascia|lasciate|lasci|conferma|confermate|rispondi|aggiungi`,
	"nl": `vul|kies|selecteer|vink|klik|typ|schrijf|zet|verstuur|stuur|accepteer|geef|negeer|vergeet|laat|bevestig|voeg|kopieer`,
	"pt": `preencha|preenche|escreva|escreve|selecione|seleciona|escolha|escolhe|marque|marca|clique|clica|envie|envia|aceite|aceita|insira|insere|indique|ignore|ignora|esqueca|esquece|deixe|deixa|confirme|confirma|responda|adicione|coloque|ponha`,
}

// skipAfterVerb are the words that, right after an instruction's verb,
// make it a form's message to the person ("Select a country", "Add to
// cart") rather than an instruction with a chosen answer ("Select
// Spain", "Select the Gold plan"), by language: "a" is English's
// indefinite article but Portuguese's definite one.
var skipAfterVerb = map[string]string{
	"en": `a an one any some to for of in on at with by from here below above now more up out down back again`,
	"de": `ein eine einen einem einer zu um fur mit hier`,
	"fr": `un une des du pour de ici a`,
	"es": `un una unos unas para por con de aqui a`,
	"it": `un una uno un' per di da con qui a`,
	"nl": `een om naar voor met hier`,
	"pt": `um uma uns umas para por com de aqui`,
}

var (
	// verb is any language's verb, longest first.
	verb = func() string {
		seen := map[string]bool{}
		var all []string
		for _, ws := range verbs {
			for _, w := range strings.Split(ws, "|") {
				if !seen[w] {
					seen[w] = true
					all = append(all, w)
				}
			}
		}
		sort.Slice(all, func(i, j int) bool { return len(all[i]) > len(all[j]) || len(all[i]) == len(all[j]) && all[i] < all[j] })
		return `(?:` + strings.Join(all, "|") + `)`
	}()
	// verbLangs are the languages each verb belongs to.
	verbLangs = func() map[string][]string {
		m := map[string][]string{}
		for lang, ws := range verbs {
			for _, w := range strings.Split(ws, "|") {
				m[w] = append(m[w], lang)
			}
		}
		return m
	}()
	skipWords = func() map[string]map[string]bool {
		m := map[string]map[string]bool{}
		for lang, ws := range skipAfterVerb {
			m[lang] = map[string]bool{}
			for _, w := range strings.Fields(ws) {
				m[lang][w] = true
			}
		}
		return m
	}()
)

// indefinites are the indefinite articles, by language: after a verb
// that chooses by itself ("Accept a date"), a form's message.
var indefinites = map[string]map[string]bool{
	"en": {"a": true, "an": true, "one": true}, "de": {"ein": true, "eine": true, "einen": true}, "fr": {"un": true, "une": true},
	"es": {"un": true, "una": true}, "it": {"un": true, "una": true, "uno": true, "un'": true}, "nl": {"een": true}, "pt": {"um": true, "uma": true},
}

// articles are the articles and short words of every language, which
// after "you must select" say nothing chosen.
var articles = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields("the der die das den dem des le la les l' el los las il lo i gli de het o a os as") {
		m[w] = true
	}
	for _, ws := range skipWords {
		for w := range ws {
			m[w] = true
		}
	}
	return m
}()

// articleAfter says whether word, right after verb, is one of words'
// (by language) in every language the verb may be in.
func articleAfter(words map[string]map[string]bool, verb, word string) bool {
	langs := verbLangs[verb]
	if len(langs) == 0 {
		return false
	}
	for _, l := range langs {
		if !words[l][word] {
			return false
		}
	}
	return true
}
