// Package oral is the oral assessment (contract document 3, vertical
// oral-assessment): it drafts, a person decides. Rubrics are data
// (rubric.go); a transcript's names are blinded before any model call and
// the examiner's leading and personal questions flagged in code
// (lines.go); the examiner prompt says which criteria have no evidence yet
// and offers the rubric's neutral follow-ups (ExaminerPrompt); scoring is
// one grammar-bound call per criterion over the candidate's lines only,
// every cited line checked to exist, be the candidate's and hold its
// quote verbatim (score.go); the draft is a signed record (record.go), the
// examiner's review a record that continues it, the final total from the
// decisions alone (review.go); a bundle of both verifies, naming any
// changed entry (verify.go). A minor's records keep hashes only.
package oral
