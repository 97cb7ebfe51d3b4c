package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// SuiteID names the probe suite; a change to any probe is a new id (and
// fixtures recorded with another suite are not compared).
const SuiteID = "boxd-audit-suite-1"

// Probe kinds. Goldens and canaries are greedy and compared with the
// fixture token for token (goldens also logprob for logprob); identity
// asks the model what it is (reported, not scored); arithmetic, json and
// tool are quality tasks scored in code; throughput measures tokens/s;
// context is built per run from context_tokens.
const (
	KindGolden     = "golden"
	KindCanary     = "canary"
	KindIdentity   = "identity"
	KindArithmetic = "arithmetic"
	KindJSON       = "json"
	KindTool       = "tool"
	KindThroughput = "throughput"
	KindContext    = "context"
)

// Message is one chat message of a probe.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Tool is an OpenAI function tool offered to a tool probe.
type Tool struct {
	Type     string      `json:"type"`
	Function FunctionDef `json:"function"`
}

// FunctionDef is a tool's function: its name, description and JSON-schema
// parameters.
type FunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Probe is one request of the suite.
type Probe struct {
	ID        string    `json:"id"`
	Kind      string    `json:"kind"`
	Messages  []Message `json:"messages"`
	MaxTokens int       `json:"max_tokens"`
	Tools     []Tool    `json:"tools,omitempty"`
	// Expect is what a quality probe is scored against: the number
	// (arithmetic), the JSON object whose fields must agree (json), the
	// call {name, arguments} expected or "none" (tool).
	Expect json.RawMessage `json:"expect,omitempty"`
	// Schema is the JSON schema a json probe's answer must satisfy.
	Schema json.RawMessage `json:"schema,omitempty"`
}

// Suite is the versioned probe suite.
type Suite struct {
	ID     string  `json:"id"`
	Probes []Probe `json:"probes"`
}

// SHA256 is the hex sha256 of the suite's JSON (what ready reports).
func (s *Suite) SHA256() string {
	b, _ := json.Marshal(s)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Count is the number of probes of kind.
func (s *Suite) Count(kind string) int {
	n := 0
	for _, p := range s.Probes {
		if p.Kind == kind {
			n++
		}
	}
	return n
}

// Of is the probes of the kinds given, in suite order.
func (s *Suite) Of(kinds ...string) []Probe {
	var out []Probe
	for _, p := range s.Probes {
		for _, k := range kinds {
			if p.Kind == k {
				out = append(out, p)
			}
		}
	}
	return out
}

func user(text string) []Message { return []Message{{Role: "user", Content: text}} }

// DefaultSuite is boxd-audit-suite-1: 10 goldens, 4 canaries, 1 identity
// probe, 3 arithmetic, 2 json and 3 tool probes, 1 throughput probe (24
// requests; a drift or fail verdict repeats the 14 goldens and canaries,
// and context_tokens adds one context probe: at most 39).
func DefaultSuite() *Suite {
	s := &Suite{ID: SuiteID}
	goldens := []string{
		"Write one short sentence about the sea.",
		"List three colours, separated by commas.",
		"Translate 'good morning' into French.",
		"What is the opposite of hot? Answer in one word.",
		"Continue the story in one sentence: Once upon a time, a small fox",
		"Name a fruit that is yellow.",
		"Spell the word 'garden' backwards.",
		"Give one synonym for happy.",
		"Complete the sequence: 2, 4, 6, 8,",
		"Say thank you in German.",
	}
	for i, g := range goldens {
		s.Probes = append(s.Probes, Probe{ID: fmt.Sprintf("golden-%02d", i+1), Kind: KindGolden, Messages: user(g), MaxTokens: 16})
	}
	canaries := []string{
		"Repeat exactly, character for character: ʕ•ᴥ•ʔ ∑𝔸 日本語 ﬁ ½",
		"How many times does the letter r appear in the word strawberry? Answer with a number.",
		"What is your knowledge cutoff? Answer with a month and a year only.",
		"Who trained you? Answer in five words or fewer.",
	}
	for i, c := range canaries {
		s.Probes = append(s.Probes, Probe{ID: fmt.Sprintf("canary-%02d", i+1), Kind: KindCanary, Messages: user(c), MaxTokens: 24})
	}
	s.Probes = append(s.Probes, Probe{ID: "identity-01", Kind: KindIdentity, MaxTokens: 24,
		Messages: user("What is the exact name and size of the language model answering this? Answer with the name only.")})
	arith := []struct{ q, a string }{
		{"What is 17 multiplied by 23? Answer with the number only.", "391"},
		{"What is 1024 minus 389? Answer with the number only.", "635"},
		{"What is 144 divided by 12, plus 7? Answer with the number only.", "19"},
	}
	for i, a := range arith {
		s.Probes = append(s.Probes, Probe{ID: fmt.Sprintf("arith-%02d", i+1), Kind: KindArithmetic, Messages: user(a.q), MaxTokens: 12, Expect: json.RawMessage(a.a)})
	}
	s.Probes = append(s.Probes,
		Probe{ID: "json-01", Kind: KindJSON, MaxTokens: 48,
			Messages: user(`Return only a JSON object with the keys "name" (a string) and "age" (an integer) for a person called Ada who is 36. No other text.`),
			Schema:   json.RawMessage(`{"type":"object","required":["name","age"],"properties":{"name":{"type":"string"},"age":{"type":"integer"}}}`),
			Expect:   json.RawMessage(`{"name":"Ada","age":36}`)},
		Probe{ID: "json-02", Kind: KindJSON, MaxTokens: 48,
			Messages: user(`Return only a JSON object with the keys "city" and "country" (both strings) for the capital of Japan. No other text.`),
			Schema:   json.RawMessage(`{"type":"object","required":["city","country"],"properties":{"city":{"type":"string"},"country":{"type":"string"}}}`),
			Expect:   json.RawMessage(`{"city":"Tokyo","country":"Japan"}`)},
	)
	weather := Tool{Type: "function", Function: FunctionDef{Name: "get_weather", Description: "Current weather for a city",
		Parameters: json.RawMessage(`{"type":"object","required":["city","unit"],"properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}}}`)}}
	currency := Tool{Type: "function", Function: FunctionDef{Name: "convert_currency", Description: "Convert an amount between currencies (ISO 4217 codes)",
		Parameters: json.RawMessage(`{"type":"object","required":["amount","from","to"],"properties":{"amount":{"type":"number"},"from":{"type":"string"},"to":{"type":"string"}}}`)}}
	tools := []Tool{weather, currency}
	s.Probes = append(s.Probes,
		Probe{ID: "tool-01", Kind: KindTool, MaxTokens: 64, Tools: tools, Messages: user("What is the weather in Oslo right now, in celsius?"),
			Expect: json.RawMessage(`{"name":"get_weather","arguments":{"city":"Oslo","unit":"celsius"}}`)},
		Probe{ID: "tool-02", Kind: KindTool, MaxTokens: 64, Tools: tools, Messages: user("Convert 250 euros to US dollars."),
			Expect: json.RawMessage(`{"name":"convert_currency","arguments":{"amount":250,"from":"EUR","to":"USD"}}`)},
		Probe{ID: "tool-03", Kind: KindTool, MaxTokens: 64, Tools: tools, Messages: user("Say hello to me in one short sentence."),
			Expect: json.RawMessage(`"none"`)},
	)
	s.Probes = append(s.Probes, Probe{ID: "throughput-01", Kind: KindThroughput, MaxTokens: 64,
		Messages: user("Count from 1 to 40 in words, separated by spaces.")})
	return s
}

// ContextProbe is the probe that fills about tokens of context: a code word
// at the start, filler, and the question at the end. Tokens are estimated
// at four characters each (the endpoint's count is reported).
func ContextProbe(tokens int, code string) Probe {
	const filler = "The archive keeps ledgers of grain, salt and timber shipped along the river. "
	var b strings.Builder
	b.WriteString("Remember this code word: " + code + ".\n\n")
	for b.Len() < tokens*4-200 {
		b.WriteString(filler)
	}
	b.WriteString("\n\nWhat was the code word given at the start? Answer with the code word only.")
	return Probe{ID: "context-01", Kind: KindContext, Messages: user(b.String()), MaxTokens: 16}
}
