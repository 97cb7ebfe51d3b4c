package form

import (
	"testing"

	"boxd/engine/browser/browsertest"
)

// The package's tests (pages read and typed into in chromium) run in a
// network namespace whose only resolver and hosts are a recorder: the
// run fails when any DNS query, connection or datagram
// reaches it (engine/browser/browsertest.SandboxMain).
func TestMain(m *testing.M) { browsertest.SandboxMain(m) }
