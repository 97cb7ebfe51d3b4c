package api

import "boxd/internal/problem"

// syntheticClaim is a body that may carry the caller's own data (a file,
// documents, a page's HTML): SyntheticClaim names the field holding it
// ("" when the body holds none, e.g. a sample) and the body's synthetic
// flag (nil: not sent).
type syntheticClaim interface {
	SyntheticClaim() (field string, flag *bool)
}

// checkSynthetic applies limits.require_synthetic to a body (admission
// step 4, after the body's own validation): with the setting on, a body
// carrying the caller's data needs synthetic: true. Off (a box serving
// its own office), synthetic is optional; either way the pipelines
// record what was sent.
func (s *API) checkSynthetic(req any) error {
	c, ok := req.(syntheticClaim)
	if !ok || !s.Config.Limits.RequireSynthetic {
		return nil
	}
	field, flag := c.SyntheticClaim()
	if field == "" || (flag != nil && *flag) {
		return nil
	}
	return problem.New(problem.Invalid, "synthetic must be true with %s: this box takes synthetic or public data only (its operator set limits.require_synthetic); send synthetic: true to confirm %s holds no real personal or confidential data", field, field)
}
