package oral

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"boxd/internal/problem"
)

// Limits (contract section 8, and the rubric's own).
const (
	MaxLines       = 400
	MaxChars       = 60000
	MaxCriteria    = 12
	MaxLevel       = 10
	maxTitle       = 120
	maxDescriptor  = 600
	maxKeywords    = 30
	maxFollowUps   = 6
	maxFollowUpLen = 300
)

// Rubric is what a candidate is scored against: up to 12 criteria, each
// with levels 0 to its max_level and a descriptor for every level
// (GET /oral/rubrics/{id}).
type Rubric struct {
	ID       string      `json:"id"`
	Title    string      `json:"title"`
	Criteria []Criterion `json:"criteria"`
}

// Criterion is one thing the examiner assesses.
type Criterion struct {
	ID          string  `json:"id"`
	Title       string  `json:"title"`
	Description string  `json:"description"`
	MaxLevel    int     `json:"max_level"`
	Levels      []Level `json:"levels"`
	// Keywords are words a candidate line that evidences the criterion
	// tends to hold (the examiner prompt's "not yet evidenced" is read
	// from them, in code).
	Keywords []string `json:"keywords,omitempty"`
	// FollowUps are neutral, open questions the examiner prompt offers
	// while the criterion has no evidence.
	FollowUps []string `json:"follow_ups,omitempty"`
}

// Level is one level of a criterion and what it looks like.
type Level struct {
	Level      int    `json:"level"`
	Descriptor string `json:"descriptor"`
}

// MaxTotal is the sum of the criteria's max levels.
func (r *Rubric) MaxTotal() int {
	t := 0
	for _, c := range r.Criteria {
		t += c.MaxLevel
	}
	return t
}

// Criterion finds a criterion by id.
func (r *Rubric) Criterion(id string) *Criterion {
	for i := range r.Criteria {
		if r.Criteria[i].ID == id {
			return &r.Criteria[i]
		}
	}
	return nil
}

// Validate checks a rubric a request carries (or one shipped): 1 to 12
// criteria with unique ids, levels 0..max_level each described once, text
// lengths bounded.
func (r *Rubric) Validate() error {
	bad := func(format string, a ...any) error { return problem.New(problem.Invalid, "rubric: "+format, a...) }
	if n := len(r.Criteria); n == 0 {
		return bad("criteria: at least one")
	} else if n > MaxCriteria {
		return problem.New(problem.TooLarge, "rubric: %d criteria, at most %d", n, MaxCriteria)
	}
	if r.ID == "" {
		r.ID = "custom"
	}
	if !idOK(r.ID) || utf8.RuneCountInString(r.Title) > maxTitle {
		return bad("id must be 1 to 64 letters, digits, - or _, and the title at most %d characters", maxTitle)
	}
	seen := map[string]bool{}
	for i := range r.Criteria {
		c := &r.Criteria[i]
		switch {
		case !idOK(c.ID):
			return bad("criteria[%d].id must be 1 to 64 letters, digits, - or _", i)
		case seen[c.ID]:
			return bad("criteria[%d].id %q is used twice", i, c.ID)
		case strings.TrimSpace(c.Title) == "" || utf8.RuneCountInString(c.Title) > maxTitle:
			return bad("criteria[%d].title: 1 to %d characters", i, maxTitle)
		case utf8.RuneCountInString(c.Description) > maxDescriptor:
			return bad("criteria[%d].description: at most %d characters", i, maxDescriptor)
		case c.MaxLevel < 1 || c.MaxLevel > MaxLevel:
			return bad("criteria[%d].max_level: 1 to %d", i, MaxLevel)
		case len(c.Levels) != c.MaxLevel+1:
			return bad("criteria[%d].levels: one for each level 0 to max_level (%d), got %d", i, c.MaxLevel+1, len(c.Levels))
		case len(c.Keywords) > maxKeywords || len(c.FollowUps) > maxFollowUps:
			return bad("criteria[%d]: at most %d keywords and %d follow_ups", i, maxKeywords, maxFollowUps)
		}
		seen[c.ID] = true
		have := make([]bool, c.MaxLevel+1)
		for j, l := range c.Levels {
			if l.Level < 0 || l.Level > c.MaxLevel || have[l.Level] {
				return bad("criteria[%d].levels[%d].level: each of 0 to %d once", i, j, c.MaxLevel)
			}
			if strings.TrimSpace(l.Descriptor) == "" || utf8.RuneCountInString(l.Descriptor) > maxDescriptor {
				return bad("criteria[%d].levels[%d].descriptor: 1 to %d characters", i, j, maxDescriptor)
			}
			have[l.Level] = true
		}
		for j, f := range c.FollowUps {
			if strings.TrimSpace(f) == "" || utf8.RuneCountInString(f) > maxFollowUpLen {
				return bad("criteria[%d].follow_ups[%d]: 1 to %d characters", i, j, maxFollowUpLen)
			}
		}
		for j, k := range c.Keywords {
			if strings.TrimSpace(k) == "" || len(k) > 40 {
				return bad("criteria[%d].keywords[%d]: 1 to 40 characters", i, j)
			}
		}
	}
	return nil
}

func idOK(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// levels makes levels 0..len(d)-1 from their descriptors.
func levels(d ...string) []Level {
	out := make([]Level, len(d))
	for i, s := range d {
		out[i] = Level{Level: i, Descriptor: s}
	}
	return out
}

// Rubrics are the shipped rubrics, by id (contract: intro-stats-viva,
// support-specialist-interview).
func Rubrics() map[string]*Rubric {
	return map[string]*Rubric{"intro-stats-viva": statsViva(), "support-specialist-interview": supportInterview()}
}

// RubricByID is a shipped rubric, or a 404 naming the ids.
func RubricByID(id string) (*Rubric, error) {
	if r, ok := Rubrics()[id]; ok {
		return r, nil
	}
	return nil, problem.New(problem.NotFound, "no rubric %q: the shipped rubrics are intro-stats-viva and support-specialist-interview, or send your own as rubric", id)
}

func statsViva() *Rubric {
	return &Rubric{ID: "intro-stats-viva", Title: "Introductory statistics viva", Criteria: []Criterion{
		{ID: "concepts", Title: "Core concepts", Description: "Explains centre, spread and distribution accurately (mean, median, standard deviation, skew).", MaxLevel: 4,
			Levels:    levels("No relevant explanation.", "Names terms without explaining them, or explains them wrongly.", "Explains some terms correctly with gaps or slips.", "Explains the terms correctly and says when each is appropriate.", "Explains the terms precisely, compares them and justifies the choice for the data."),
			Keywords:  []string{"mean", "median", "average", "standard deviation", "variance", "spread", "skew", "skewed", "outlier", "distribution"},
			FollowUps: []string{"How would you describe the centre and the spread of this data?", "What would change if the data had a few very large values?"}},
		{ID: "inference", Title: "Inference", Description: "Interprets p-values and confidence intervals correctly.", MaxLevel: 4,
			Levels:    levels("No interpretation offered.", "Misreads the p-value as the probability the hypothesis is true, or similar.", "Partly correct interpretation with a notable slip.", "Correct interpretation of p-values and intervals in context.", "Correct, in context, and explains what the result does not show."),
			Keywords:  []string{"p-value", "p value", "confidence interval", "significant", "significance", "null hypothesis", "hypothesis", "interval", "reject"},
			FollowUps: []string{"What does the p-value in this result tell you?", "How would you explain this interval to someone without a statistics background?"}},
		{ID: "assumptions", Title: "Assumptions", Description: "Names and checks the assumptions behind the methods used.", MaxLevel: 4,
			Levels:    levels("No assumptions mentioned.", "Mentions an assumption without relating it to the method.", "Names relevant assumptions but not how to check them.", "Names the relevant assumptions and how to check them.", "Checks the assumptions and says what to do when one fails."),
			Keywords:  []string{"assumption", "assume", "independent", "independence", "normal", "normality", "random sample", "sample size", "equal variance", "check"},
			FollowUps: []string{"What has to be true about the data for this method to work?", "How would you check that?"}},
		{ID: "application", Title: "Application", Description: "Applies a suitable method to the case and carries it out correctly.", MaxLevel: 4,
			Levels:    levels("No method applied.", "Chooses an unsuitable method.", "Chooses a suitable method with errors in carrying it out.", "Chooses and carries out a suitable method correctly.", "Chooses, carries out and justifies the method against alternatives."),
			Keywords:  []string{"t-test", "regression", "correlation", "chi-square", "mann-whitney", "rank test", "anova", "calculate", "method"},
			FollowUps: []string{"Which method would you use here, and why?", "Walk me through how you would carry it out."}},
		{ID: "communication", Title: "Communication", Description: "Explains reasoning clearly and precisely, with justification.", MaxLevel: 4,
			Levels:    levels("Reasoning cannot be followed.", "Reasoning is mostly unclear.", "Reasoning is followable with some vagueness.", "Reasoning is clear and justified.", "Reasoning is clear, precise and anticipates questions."),
			Keywords:  []string{"because", "therefore", "so", "which means", "for example", "reason"},
			FollowUps: []string{"Can you say more about why?", "Could you give an example?"}},
	}}
}

func supportInterview() *Rubric {
	return &Rubric{ID: "support-specialist-interview", Title: "Support specialist interview", Criteria: []Criterion{
		{ID: "troubleshooting", Title: "Troubleshooting", Description: "Works through a problem systematically: gathers facts, isolates the cause, verifies the fix.", MaxLevel: 3,
			Levels:    levels("No structured approach.", "Jumps to a fix without gathering facts.", "Gathers facts and tries fixes, with gaps in isolating the cause.", "Gathers facts, isolates the cause step by step and verifies the fix."),
			Keywords:  []string{"logs", "reproduce", "steps", "isolate", "cause", "restart", "check", "error", "test", "version"},
			FollowUps: []string{"A customer says the app stopped working this morning. What do you do first?", "How would you know the fix worked?"}},
		{ID: "empathy", Title: "Customer empathy", Description: "Acknowledges the customer's situation and keeps them informed.", MaxLevel: 3,
			Levels:    levels("Dismissive or absent.", "Acknowledges the customer only formally.", "Acknowledges the situation and sets some expectations.", "Acknowledges, sets clear expectations and follows up."),
			Keywords:  []string{"understand", "sorry", "frustrating", "update", "expect", "let them know", "follow up", "apologise", "apologize"},
			FollowUps: []string{"How would you keep the customer informed while you investigate?", "Tell me about a time a customer was upset. What did you say?"}},
		{ID: "escalation", Title: "Escalation", Description: "Knows when and how to escalate, with the information the next level needs.", MaxLevel: 3,
			Levels:    levels("No sense of when to escalate.", "Escalates everything or nothing.", "Escalates sensibly but hands over little information.", "Escalates at the right time with a complete hand-over."),
			Keywords:  []string{"escalate", "escalation", "engineering", "tier", "manager", "hand over", "ticket", "priority", "urgent"},
			FollowUps: []string{"When would you pass a problem on to another team?", "What would you include when you hand it over?"}},
		{ID: "communication", Title: "Clear communication", Description: "Explains technical matters in words the customer understands.", MaxLevel: 3,
			Levels:    levels("Unclear or jargon only.", "Partly clear; relies on jargon.", "Clear for most of the answer.", "Clear, plain and checked for understanding."),
			Keywords:  []string{"explain", "plain", "simple", "step by step", "in other words", "make sure", "understand"},
			FollowUps: []string{"How would you explain a cache to a customer who is not technical?", "How do you check that the customer understood?"}},
	}}
}

// String names a rubric in logs.
func (r *Rubric) String() string { return fmt.Sprintf("%s (%d criteria)", r.ID, len(r.Criteria)) }
