// Package version holds the one version string of boxd and its API.
package version

// Version is the implementation version reported by `boxd version` and by
// GET /healthz (contract section 9). The contract is labelled v0.
const Version = "0.1.0"

// Contract is the date label of the API contract this build implements.
const Contract = "v0 (2026-09-23)"

// Commit is set at link time (-ldflags "-X boxd/version.Commit=...") when known.
var Commit = ""
