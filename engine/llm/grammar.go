package llm

import (
	"encoding/json"
	"errors"
	"fmt"

	ollamallama "github.com/ollama/ollama/llama"
)

// SchemaGrammar converts a JSON schema into a GBNF grammar with llama.cpp's
// converter; output that follows the grammar is JSON valid under the schema.
func SchemaGrammar(schema json.RawMessage) (string, error) {
	if !json.Valid(schema) {
		return "", fmt.Errorf("%w: the schema is not valid JSON", ErrGrammar)
	}
	g := ollamallama.SchemaToGrammar(schema)
	if len(g) == 0 {
		return "", fmt.Errorf("%w: llama.cpp could not convert the JSON schema (unsupported keyword or invalid schema)", ErrGrammar)
	}
	return string(g), nil
}

// JSONObjectGrammar is the grammar of any JSON object (response_format
// json_object).
func JSONObjectGrammar() string {
	g, err := SchemaGrammar(json.RawMessage(`{"type":"object"}`))
	if err != nil {
		panic(errors.Join(errors.New("llm: object grammar"), err))
	}
	return g
}
