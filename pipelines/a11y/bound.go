package a11y

import (
	"fmt"

	"boxd/pipelines/a11y/findings"
)

// The bounds of an audit's answer and signed record: a page of 100,000
// images without alt text would otherwise list 100,000 findings (one per
// element) and sign a record of hundreds of megabytes. The lists are in
// priority order, so what is cut is the lowest in priority; not_checked
// says how many were left out.
const (
	MaxFindings   = 500
	MaxAdvisories = 500
)

// bound keeps the first limit of fs and says, for not_checked, what was cut
// ("" when nothing was).
func bound(fs []findings.Finding, limit int, what string) ([]findings.Finding, string) {
	if len(fs) <= limit {
		return fs, ""
	}
	return fs[:limit], fmt.Sprintf("%s: the first %d of %d are listed (in priority order); the other %d, lower in priority, are left out of this report: fix these, or audit fewer pages, and audit again", what, limit, len(fs), len(fs)-limit)
}
