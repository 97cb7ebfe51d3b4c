package live

import "strings"

// Pass2SkippedPrefix begins the error event a session sends right before
// done when its vertical's pass 2 did not run (Vertical.Pass2Skipped): the
// contract's signal, not a failure of the session.
const Pass2SkippedPrefix = "pass 2 did not run: "

// IsPass2Notice reports whether an error event's message is that notice.
func IsPass2Notice(msg string) bool { return strings.HasPrefix(msg, Pass2SkippedPrefix) }
