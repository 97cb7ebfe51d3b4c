package oral

// Info is GET /oral/info.
type Info struct {
	Rubrics      []string `json:"rubrics"`
	Samples      []string `json:"samples"`
	Limits       Limits   `json:"limits"`
	Model        string   `json:"model"`
	ModelReady   bool     `json:"model_ready"`
	Blinding     string   `json:"blinding"`
	Minors       string   `json:"minors"`
	Scoring      string   `json:"scoring"`
	Grounding    string   `json:"grounding"`
	P            string   `json:"p"`
	Flags        []string `json:"flags"`
	ConsentBasis []string `json:"consent_basis"`
	Review       string   `json:"review"`
	Live         string   `json:"live"`
}

// Limits of a request.
type Limits struct {
	Lines    int `json:"lines"`
	Chars    int `json:"chars"`
	Criteria int `json:"criteria"`
	MaxLevel int `json:"max_level"`
	Names    int `json:"names"`
}

// InfoOf describes the service.
func InfoOf(s *Service) Info {
	in := Info{Rubrics: []string{"intro-stats-viva", "support-specialist-interview"}, Limits: Limits{Lines: MaxLines, Chars: MaxChars, Criteria: MaxCriteria, MaxLevel: MaxLevel, Names: 50},
		Blinding:     "names given in names, and names said in an introduction, after a title or a greeting, are replaced by [name] in every line before any model call; ready.blinding gives counts and SHA-256 hashes of the lower-cased names, never the names",
		Minors:       "with minor: true (and consent_basis school_official or parental_consent) the signed draft and review keep hashes only: no line text, reason, quote, model answer or name",
		Scoring:      "one grammar-bound call per criterion over the candidate's lines only: {level, reason, evidence: up to three [n] quotes}",
		Grounding:    "every cited line must exist, be the candidate's and hold its quote verbatim (after case, spacing and typographic quotes are normalised); what fails is left out of the evidence and named in grounding; verified when all hold",
		P:            "the chosen level's token probability at the position the model wrote it, divided by the sum over the level tokens among the five likeliest there (the engine's log-softmax of the raw logits); null when not found",
		Flags:        []string{FlagNoEvidence, FlagNotVerbatim, FlagExaminerLine, FlagLineMissing, FlagLowConfidence, FlagModelFailed},
		ConsentBasis: ConsentBases,
		Review:       "POST /oral/review {draft, examiner, decisions}: one decision per criterion (confirm, or override with level and reason); the final total is the sum of the decided levels",
		Live:         "the live lanes (/ws/live?vertical=oral-assessment&rubric=) are not served yet: POST /oral/prompt gives the examiner prompt for a transcript so far",
	}
	for _, smp := range Samples() {
		in.Samples = append(in.Samples, smp.ID)
	}
	if s.Chat.Ready() {
		in.Model, in.ModelReady = s.Chat.ModelID, true
	}
	return in
}
