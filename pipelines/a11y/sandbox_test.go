package a11y

import (
	"testing"

	"boxd/engine/browser/browsertest"
)

// The package's tests (its exfiltration suites and plain runs among
// them) run in a network namespace whose only resolver and hosts are a
// recorder: the run fails when any DNS query, connection or datagram
// reaches it (engine/browser/browsertest.SandboxMain).
func TestMain(m *testing.M) { browsertest.SandboxMain(m) }
