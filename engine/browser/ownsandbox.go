package browser

import (
	"fmt"
	"os/exec"
	"sync"
	"syscall"
)

// Chromium's own sandbox (seccomp-bpf and namespaces around each
// renderer) is on wherever chromium can run it. It cannot as root
// (chromium refuses to start sandboxed as root), nor where the kernel
// refuses unprivileged user namespaces (Debian's chromium has no setuid
// helper to fall back on); there the browser runs with --no-sandbox, and
// the box says so once in the log. The packaged systemd unit is such a
// place: it refuses namespaces to the whole service (RestrictNamespaces=,
// PrivateUsers=), and its seccomp filter, empty capability set and
// read-only system hold chromium's processes as they hold boxd. boxd's
// own walls (sandbox.go: no DNS, a sink proxy, no WebRTC or QUIC) hold
// everywhere: they keep a page off the network, and chromium's sandbox,
// where it runs, keeps a compromised renderer off the rest of the box.

// noSandboxLogged makes the fallback's warning once a process, however
// many pools it opens (the audits' and the form filler's).
var noSandboxLogged sync.Once

// ownSandbox decides whether chromium runs its own sandbox for a process
// of effective user euid; userNS tries a user namespace. It returns the
// reason when not.
func ownSandbox(euid int, userNS func() error) (bool, string) {
	if euid == 0 {
		return false, "boxd runs as root, and chromium refuses to sandbox as root (run boxd as its own user, as the package's unit does)"
	}
	if err := userNS(); err != nil {
		return false, fmt.Sprintf("unprivileged user namespaces, which chromium's sandbox needs, are refused here (%v): the packaged unit refuses them to the whole service (RestrictNamespaces=, whose seccomp filter and walls then hold chromium too); elsewhere the kernel does (Debian: sysctl kernel.unprivileged_userns_clone=1; Ubuntu 24.04: kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for chromium)", err)
	}
	return true, ""
}

// userNamespaces starts /bin/true in a new user namespace, as chromium's
// zygote does: an error means chromium's sandbox cannot start here.
func userNamespaces() error {
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("a process in a new user namespace: %w", err)
	}
	return nil
}

// OwnSandbox says whether the pool's chromium runs its own sandbox, and
// why not.
func (p *Pool) OwnSandbox() (bool, string) { return p.own, p.ownWhy }
