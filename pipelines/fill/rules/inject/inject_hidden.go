package inject

import (
	"regexp"
	"strings"
)

// hiddenRules flag text only where the person cannot see it (hidden
// text, attributes, comments): an instruction about the form there is
// aimed at whatever reads the page's code, not at the person.
var hiddenRules = []agentRule{
	{WhyInHidden, hiddenInstruction},
}

var (
	// imperativeRE is a verb at a clause's start, and the words after it.
	imperativeRE = regexp.MustCompile(`(?:^|[.!?;:\n]\s*|,\s*(?:then |and |now |also )?|\b(?:and|then|also|now|please|kindly|bitte|veuillez|merci de|s'il vous plait|por favor|per favore|alsjeblieft|graag|when (?:filling|completing|submitting) (?:in |out )?(?:this|the) form,?)\s+)(` + verb + `)\b([^.!?;\n]*)`)
	// modalRE is "you must", "always", "make sure" and, within the
	// clause, a verb of the form or the state it leaves a field in;
	// strong: "always", "never", "instead" (a form's own message says
	// "you must select a country", not "always").
	modalRE = regexp.MustCompile(`\b(?:(always|never|instead|immer|niemals|stattdessen|toujours|jamais|plutot|siempre|nunca|en su lugar|sempre|mai|invece|altijd|nooit|in plaats daarvan|em vez disso)|you must|you should|you need to|you have to|you are to|make sure|be sure to|du musst|sie mussen|du sollst|sie sollten|stelle sicher|stellen sie sicher|vous devez|tu dois|il faut|assurez-vous|debes|debe|hay que|asegurate|asegurese|devi|deve|bisogna|assicurati|je moet|u moet|zorg dat|zorg ervoor|voce deve|tem de|tem que|certifique-se)\b([^.!?;\n]{0,50})\b(?:` + verb + `|(selected|ticked|checked|filled|chosen|empty|blank|unchecked|unticked|ausgewahlt|angekreuzt|selectionnee?s?|cochee?s?|seleccionad[oa]s?|marcad[oa]s?|selezionat[oa]|spuntat[oa]|geselecteerd|aangevinkt|selecionad[oa]s?))\b([^.!?;\n]*)`)
	// valueRE is what makes an instruction's object a chosen answer: a
	// quoted text, a number, yes or no, "every", the most or the least
	// of something, the first, a field named as the target ("into the
	// referral field"), a state ("unticked").
	valueRE = regexp.MustCompile(`["'«»“”‘’]|\d|\b(?:yes|no|true|false|oui|non|si|ja|nein|nee|sim|nao|approved|verified|ok|every|all|each|always|immer|toujours|siempre|sempre|altijd|tous|toutes|tout|chaque|alle|jede[nrs]?|todos?|todas?|cada|ogni|tutti|tutte|elke|iedere|` +
		`most expensive|highest|maximum|max|premium|gold|platinum|deluxe|vip|first|cheapest|lowest|minimum|annual|yearly|teuerste[nr]?|hochste[nr]?|maximale?[nr]?|erste[nr]?|billigste[nr]?|plus chere?s?|plus eleve|premiere?|mas car[oa]|maxim[oa]|primer[oa]?|piu costos[oa]|piu car[oa]|massim[oa]|prim[oa]|duurste|hoogste|eerste|goedkoopste|mais car[oa]|primeir[oa]|oro|` +
		`unticked|unchecked|ticked|checked|selected|empty|blank)\b|\b(?:in|into|to|dans|en|nel|nella|im|in het|no|na) (?:the |le |la |el |il |das |het |o |a )?[\w'-]+ (?:field|box|dropdown|menu|champ|feld|campo|veld|casilla|case|kastchen|vakje)\b`)
	// choiceVerbRE are verbs that make a choice by themselves: tick,
	// accept, subscribe, submit.
	choiceVerbRE = regexp.MustCompile(`^(?:tick|check|uncheck|untick|subscribe|accept|agree|opt in|opt out|sign|submit|buy|order|book|purchase|approve|confirm|apply|redeem|grant|allow|authorize|authorise|kreuze|kreuzen sie|akzeptiere|akzeptieren sie|abonniere|ankreuzen|coche|cochez|decoche|decochez|cocher|accepte|acceptez|accepter|inscris|inscrivez|marque|desmarque|desmarca|acepta|acepte|suscribe|suscriba|spunta|spuntate|spunti|accetta|accettate|accetti|vink|accepteer|aceite|aceita|marca)$`)
	// answerRE states the answer a field should get.
	answerRE = regexp.MustCompile(`\bthe (?:correct|right|best|expected|preferred|default|only (?:valid|acceptable)) (?:answer|value|option|choice|selection|plan|entry|response)s? (?:is|are|for|=|:)|\b\w+ (?:field|box|checkbox|option|dropdown) (?:should|must|needs to|has to) (?:be|contain|say|read|stay|remain|show)\b|\bset (?:the )?[\w' -]{1,30}? (?:to|=) \S|` +
		`\bdie (?:richtige|korrekte) (?:antwort|option|auswahl) (?:ist|fur)\b|\bla (?:bonne|meilleure) (?:reponse|option|valeur) (?:est|pour)\b|\bla (?:respuesta|opcion) correcta (?:es|para)\b|\bla (?:risposta|opzione) (?:corretta|giusta) (?:e|per)\b|\bhet (?:juiste|correcte) antwoord (?:is|voor)\b|\ba (?:resposta|opcao) correta (?:e|para)\b`)
	// personRE is a form's own message to the person: a validation
	// message, a skip link, a honeypot's "leave this blank", a cookie
	// banner.
	personRE = regexp.MustCompile(`\b(?:valid|invalid|required|is required|are required|must match|do not match|don't match|at least \d+|characters|format|cookies?|` +
		`(?:accept|agree to|akzeptieren sie|acceptez|acepte|accetta|accepteer|aceite) (?:the |die |les |los |i |de |os )?(?:terms|conditions|privacy|agb|datenschutz|conditions|condiciones|termini|voorwaarden|termos)|` +
		`gultige?[nrs]?|ungultige?[nrs]?|erforderlich|pflichtfeld(?:er)?|pflichtangaben?|valides?|invalides?|obligatoires?|requis|valid[oa]s?|invalid[oa]s?|obligatori[oa]s?|requerid[oa]s?|obbligatori[oaie]?|richiest[oaie]|geldige?|ongeldige?|verplichte?|obrigatori[oa]s?|` +
		`skip to|skip navigation|jump to|click (?:here|to (?:open|close|expand|collapse|show|hide|view|see))|press enter|tap to|opens? in a new (?:window|tab)|close (?:menu|dialog)|toggle|zum inhalt|aller au contenu|ir al contenido|vai al contenuto|naar de inhoud|ir para o conteudo|` +
		`fill (?:in|out) this field|complete this field|remplir ce champ|renseigner ce champ|dieses feld (?:aus)?fullen|fullen sie dieses feld aus|rellene este campo|completa este campo|compila questo campo|vul dit veld in|preencha este campo|` +
		`if (?:not )?applicable|leave (?:it |this )?(?:empty|blank) if|` +
		`leave (?:this|the) (?:field )?(?:empty|blank)|do not fill|don't fill|if you are (?:a )?human|lassen sie dieses feld leer|laissez ce champ vide|deja este campo vacio|lascia (?:questo campo )?vuoto|laat dit veld leeg|deixe este campo (?:em branco|vazio))\b`)
	// yourWordRE is the person's own ("your") or the site's ("our"):
	// text in the site's voice to the person.
	yourWordRE = regexp.MustCompile(`(?:^|\s)(?:` + your + `|our|ours|unser[em]?|unsere[nrs]?|notre|nos|nuestr[oa]s?|nostr[oaie]|onze|ons|noss[oa]s?)(?:\s|$)`)
)

// hiddenInstruction: an instruction about the form that names its
// answer (a verb at a clause's start whose object is a chosen value, a
// verb that chooses by itself, "always", "you must ... selected", "the
// correct answer is"), that is not the form's own message to the person
// ("Select a country", "Enter the date of your visit", "Select the
// services you need", "You must select a country").
func hiddenInstruction(s string) bool {
	if personRE.MatchString(s) {
		return false
	}
	if answerRE.MatchString(s) {
		return true
	}
	for _, m := range modalRE.FindAllStringSubmatch(s, -1) {
		clause := m[2] + " " + m[4]
		if yourWordRE.MatchString(clause) {
			continue
		}
		// "You should select Spain": a modal, a verb and a chosen value;
		// "You must select a country" is the form's own message.
		next := ""
		if f := strings.Fields(m[4]); len(f) > 0 {
			next = strings.Trim(f[0], `"'«»“”‘’,:()`)
		}
		if m[1] != "" || m[3] != "" || valueRE.MatchString(m[4]) || next != "" && !articles[next] {
			return true
		}
	}
	for _, m := range imperativeRE.FindAllStringSubmatch(s, -1) {
		if yourWordRE.MatchString(m[2]) {
			continue
		}
		first := ""
		for _, w := range strings.Fields(m[2]) {
			if first = strings.Trim(w, `"'«»“”‘’,:()`); first != "" {
				break
			}
		}
		switch {
		case first == "":
		case choiceVerbRE.MatchString(m[1]):
			if !articleAfter(indefinites, m[1], first) {
				return true
			}
		case !articleAfter(skipWords, m[1], first) && valueRE.MatchString(m[2]):
			return true
		}
	}
	return false
}
