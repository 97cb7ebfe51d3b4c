package rules

import (
	"regexp"
	"strings"
)

// Where page text was found, for flags.
const (
	InVisibleText = "visible text"
	InHiddenText  = "hidden text" // display none, visibility hidden, zero size, off screen, transparent
	InAttribute   = "attribute"   // aria-*, alt, title, placeholder, data-*, value
	InComment     = "comment"
)

// agentPatterns are wordings of text aimed at an AI agent rather than at
// the person: instructions to ignore what came before, to act as or for
// an assistant, to type, send or hide something; chat-template markers.
// Each says why it flags.
var agentPatterns = []struct {
	why string
	re  *regexp.Regexp
}{
	{"tells the reader to ignore its instructions", regexp.MustCompile(`(?i)\b(ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}\b(previous|prior|above|earlier|all|any|your|system|original)\b[^.\n]{0,20}\b(instructions?|prompts?|directions?|rules?|guidelines?|context)\b`)},
	{"tells the reader to ignore its instructions", regexp.MustCompile(`(?i)\b(ignoriere|ignorieren sie|vergiss)\b[^.\n]{0,40}\b(anweisungen|regeln)\b|\bignorez\b[^.\n]{0,40}\binstructions\b|\bignora\b[^.\n]{0,40}\binstrucciones\b`)},
	{"addresses an AI", regexp.MustCompile(`(?i)\b(you are|you're|as) (an?|the) (ai|a\.i\.|artificial intelligence|assistant|agent|language model|llm|chatbot|bot|autofill(er)?|browser agent)\b`)},
	{"addresses an AI", regexp.MustCompile(`(?i)\b(dear |attention,? |note to (the )?)?(ai|llm|gpt|chatgpt|claude|gemini|copilot|assistant|agent|bot|language model|automated (system|filler|tool))s?\b[,:]?\s+(please\s+)?(must|should|shall|need to|needs to|are required to|is required to|will|fill|enter|type|submit|send|include|set|select|check|write|put|copy|paste|add|use|do not|don't|never|always)\b`)},
	{"addresses an AI", regexp.MustCompile(`(?i)\bif you are an? (ai|assistant|agent|bot|language model|llm|automated)\b`)},
	{"is a chat-template or prompt marker", regexp.MustCompile(`(?i)<\|(im_start|im_end|system|assistant|user|endoftext)\|>|\[/?INST\]|<<SYS>>|^\s*#{2,}\s*(system|instruction|instructions)\b|\b(system|developer) (prompt|message|instructions?)\s*:|<start_of_turn>|<end_of_turn>`)},
	{"asks for a secret to be typed or sent", regexp.MustCompile(`(?i)\b(enter|type|fill in|put|paste|include|add|send|submit|provide|write)\b[^.\n]{0,30}\b(the )?(user'?s|person'?s|customer'?s|their|his|her|your)\b[^.\n]{0,20}\b(password|passcode|pin|card (number|details)|cvv|cvc|security code|ssn|social security|iban|account number|routing number|passport|licen[cs]e|tax id)\b`)},
	{"asks for data to be sent elsewhere", regexp.MustCompile(`(?i)\b(send|post|forward|email|upload|transmit|exfiltrate|leak)\b[^.\n]{0,40}\b(data|details|information|contents?|answers|values|fields|documents?|everything)\b[^.\n]{0,20}\b(to|at)\b\s+(https?://|www\.|[\w.-]+@[\w-]+\.)`)},
	{"asks to hide something from the person", regexp.MustCompile(`(?i)\b(do not|don't|never|without)\b[^.\n]{0,15}\b(tell|telling|inform|informing|show|showing|mention|mentioning|alert|alerting|notify|notifying|ask|asking)\b[^.\n]{0,15}\b(the )?(user|person|human|customer|owner)\b|\bsecretly\b|\bsilently (fill|submit|send|enter|check)`)},
}

// looser wordings flag text only where the person cannot see it (hidden
// text, attributes, comments): an instruction about the form there is
// aimed at whatever reads the page's code, not at the person.
var hiddenPatterns = []struct {
	why string
	re  *regexp.Regexp
}{
	{"gives an instruction about the form where the person cannot see it", regexp.MustCompile(`(?i)\b(you must|you should|you need to|make sure (to|you)|be sure to|always|never|please|instead)\b[^.\n]{0,40}\b(fill|enter|type|select|check|tick|submit|send|click|press|write|put|choose|leave|set|use)\b`)},
	{"gives an instruction about the form where the person cannot see it", regexp.MustCompile(`(?i)^\s*(fill|enter|type|select|check|tick|submit|send|click|press|write|put|choose|set)\b[^.\n]{0,60}\b(field|form|box|button|value|answer|option|this)\b`)},
}

// AimedAtAgents says whether page text is aimed at an AI agent, and why;
// where says where it was found (hidden text, attributes and comments
// are read with the looser wordings too).
func AimedAtAgents(text, where string) (bool, string) {
	if strings.TrimSpace(text) == "" {
		return false, ""
	}
	for _, p := range agentPatterns {
		if p.re.MatchString(text) {
			return true, p.why
		}
	}
	if where != InVisibleText {
		for _, p := range hiddenPatterns {
			if p.re.MatchString(text) {
				return true, p.why
			}
		}
	}
	return false, ""
}
