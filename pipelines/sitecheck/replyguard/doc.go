// Package replyguard is the review-reply guard: a deterministic check of a
// drafted public reply to a customer review (empty, too long, not English,
// offers, contact details, numbers the review does not hold, placeholders,
// arguing, and for health and care businesses anything that confirms a
// patient). It calls no model. The TypeScript and Python kits
// (kits/ts/src/replyguard.ts, kits/python/boxd_sitecheck/replyguard.py) port
// it decision for decision and read the same word lists, lists.json.
package replyguard
