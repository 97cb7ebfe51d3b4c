package scoring

// Judge outcomes of a freetext example (summary judge_outcomes).
const (
	JudgeAgree          = "agree"           // same in both orders: pass
	JudgeDisagree       = "disagree"        // different in both orders: fail
	JudgePositionBiased = "position_biased" // the verdict follows the order: unscorable
	JudgeError          = "judge_error"     // a judgment failed: unscorable
)

// JudgeOutcomes lists the outcomes in the order summaries count them.
var JudgeOutcomes = []string{JudgeAgree, JudgeDisagree, JudgePositionBiased, JudgeError}

// JudgeOutcome is the rule over the two judgments ("same", "different",
// or "" for a failed call), first with the current model's answer as
// answer 1, then with the candidate's.
func JudgeOutcome(first, second string) string {
	switch {
	case first == "" || second == "":
		return JudgeError
	case first == "same" && second == "same":
		return JudgeAgree
	case first == "different" && second == "different":
		return JudgeDisagree
	}
	return JudgePositionBiased
}

// JudgeScore is a judge outcome as an example's outcome and kind.
func JudgeScore(outcome string) (string, string) {
	switch outcome {
	case JudgeAgree:
		return Pass, JudgeAgree
	case JudgeDisagree:
		return Fail, JudgeDisagree
	}
	return Unscorable, outcome
}
