//go:build linux && amd64

package systemd_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// policy is what the unit's seccomp-based directives allow, in x86_64
// system call numbers: SystemCallFilter= (with SystemCallErrorNumber=),
// SystemCallArchitectures=native, RestrictAddressFamilies= and
// RestrictNamespaces=, which systemd all enforces with seccomp filters.
type policy struct {
	Allow        []uint32 // SystemCallFilter: the allowed calls
	Errno        uint32   // what any other call returns (SystemCallErrorNumber)
	Families     []uint32 // RestrictAddressFamilies: socket(2)'s allowed families
	NoNamespaces bool     // RestrictNamespaces=true
	Names        int      // names the filter allowed (some unknown to this kernel's headers)
}

// errnos and families name the values the unit may use.
var (
	errnos   = map[string]uint32{"EPERM": uint32(unix.EPERM), "EACCES": uint32(unix.EACCES), "ENOSYS": uint32(unix.ENOSYS)}
	families = map[string]uint32{"AF_UNIX": unix.AF_UNIX, "AF_INET": unix.AF_INET, "AF_INET6": unix.AF_INET6,
		"AF_NETLINK": unix.AF_NETLINK, "AF_PACKET": unix.AF_PACKET}
)

// syscallGroups reads systemd's system call groups (@system-service and
// the rest) as this systemd defines them: `systemd-analyze syscall-filter`.
func syscallGroups(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command(analyzer(t), "syscall-filter").Output()
	if err != nil {
		t.Fatalf("systemd-analyze syscall-filter: %v", err)
	}
	groups := map[string][]string{}
	group := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		name := strings.TrimSpace(line)
		switch {
		case name == "" || strings.HasPrefix(name, "#"):
		case !strings.HasPrefix(line, " ") && strings.HasPrefix(name, "@"):
			group = name
		case group != "":
			groups[group] = append(groups[group], name)
		}
	}
	if len(groups["@system-service"]) == 0 || len(groups["@default"]) == 0 {
		t.Fatalf("systemd-analyze syscall-filter lists no @system-service or @default:\n%s", out)
	}
	return groups
}

// syscallNumbers reads the x86_64 system call numbers from the kernel's
// UAPI header (linux-libc-dev, which cgo builds need anyway).
func syscallNumbers(t *testing.T) map[string]uint32 {
	t.Helper()
	const header = "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"
	b, err := os.ReadFile(header)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the system call numbers: %v (linux-libc-dev)", err)
		}
		t.Skipf("the system call numbers: %v", err)
	}
	nums := map[string]uint32{}
	for _, m := range regexp.MustCompile(`(?m)^#define __NR_(\w+) (\d+)$`).FindAllSubmatch(b, -1) {
		n, _ := strconv.ParseUint(string(m[2]), 10, 32)
		nums[string(m[1])] = uint32(n)
	}
	if nums["read"] != 0 || nums["execve"] != unix.SYS_EXECVE || len(nums) < 300 {
		t.Fatalf("%s: not x86_64's numbers (%d names)", header, len(nums))
	}
	return nums
}

// unitPolicy builds the policy of the unit's directives d, as systemd
// applies them: SystemCallFilter= lines in order, an allow list starting
// from @default (systemd adds it to every allow list), a line starting
// with ~ removing its calls; the calls systemd itself needs to start the
// service are always allowed.
func unitPolicy(t *testing.T, d map[string][]string) policy {
	t.Helper()
	groups, nums := syscallGroups(t), syscallNumbers(t)
	var expand func(name string, seen map[string]bool) []string
	expand = func(name string, seen map[string]bool) []string {
		if !strings.HasPrefix(name, "@") {
			return []string{name}
		}
		if seen[name] {
			return nil
		}
		seen[name] = true
		members, ok := groups[name]
		if !ok {
			t.Fatalf("SystemCallFilter names %s, which this systemd does not define", name)
		}
		var out []string
		for _, m := range members {
			out = append(out, expand(m, seen)...)
		}
		return out
	}
	allowed := map[string]bool{}
	lines := d["Service.SystemCallFilter"]
	if len(lines) == 0 || strings.HasPrefix(lines[0], "~") {
		t.Fatalf("SystemCallFilter= %q is not an allow list; the mirror only knows allow lists", lines)
	}
	for _, n := range append(expand("@default", map[string]bool{}), "execve", "exit", "exit_group", "getrlimit", "rt_sigreturn") {
		allowed[n] = true
	}
	for _, line := range lines {
		remove := strings.HasPrefix(line, "~")
		for _, item := range strings.Fields(strings.TrimPrefix(line, "~")) {
			for _, n := range expand(item, map[string]bool{}) {
				if remove {
					delete(allowed, n)
				} else {
					allowed[n] = true
				}
			}
		}
	}
	var p policy
	for n := range allowed {
		if nr, ok := nums[n]; ok {
			p.Allow = append(p.Allow, nr)
			p.Names++
		}
	}
	slices.Sort(p.Allow)

	e := d["Service.SystemCallErrorNumber"]
	if len(e) != 1 {
		t.Fatalf("SystemCallErrorNumber= %q: the mirror needs one value (without it systemd kills the process)", e)
	}
	if p.Errno = errnos[e[0]]; p.Errno == 0 {
		t.Fatalf("SystemCallErrorNumber=%s: not a value the mirror knows", e[0])
	}
	for _, line := range d["Service.RestrictAddressFamilies"] {
		if strings.HasPrefix(line, "~") {
			t.Fatalf("RestrictAddressFamilies=%s: the mirror only knows allow lists", line)
		}
		for _, f := range strings.Fields(line) {
			n, ok := families[f]
			if !ok {
				t.Fatalf("RestrictAddressFamilies names %s, which the mirror does not know", f)
			}
			p.Families = append(p.Families, n)
		}
	}
	if len(p.Families) == 0 {
		t.Fatal("no RestrictAddressFamilies=")
	}
	p.NoNamespaces = slices.Equal(d["Service.RestrictNamespaces"], []string{"true"})
	if a := d["Service.SystemCallArchitectures"]; !slices.Equal(a, []string{"native"}) {
		t.Fatalf("SystemCallArchitectures=%q: the mirror filters for native (x86_64) only", a)
	}
	return p
}

// Classic BPF, as seccomp runs it over struct seccomp_data: nr at 0, arch
// at 4, args[i] at 16+8i (the low 32 bits first on x86_64).
const (
	bpfLdAbs  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeq    = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJge    = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	bpfJset   = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	bpfRet    = unix.BPF_RET | unix.BPF_K
	offNr     = 0
	offArch   = 4
	offArg0   = 16
	x32Bit    = 0x40000000
	retAllow  = unix.SECCOMP_RET_ALLOW
	retKill   = unix.SECCOMP_RET_KILL_PROCESS
	nsFlags   = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET
	cloneTime = unix.CLONE_NEWTIME // unshare(2) only: the same bit is part of clone(2)'s exit signal
)

func stmt(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }

func jump(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
}

func retErrno(e uint32) unix.SockFilter { return stmt(bpfRet, unix.SECCOMP_RET_ERRNO|e) }

// program is the policy as one seccomp filter: another architecture (or
// x86_64's x32 calls) kills the process, as SystemCallArchitectures=native
// does; socket(2) with a family outside the list fails with EAFNOSUPPORT;
// with RestrictNamespaces=true, clone(2) and unshare(2) with a namespace
// flag and setns(2) fail with EPERM and clone3(2) with ENOSYS (its flags
// cannot be read; the C library falls back to clone), as systemd's filter
// does; an allowed call passes; anything else fails with Errno.
func (p policy) program() []unix.SockFilter {
	allowed := func(nr uint32) unix.SockFilter {
		if _, ok := slices.BinarySearch(p.Allow, nr); ok {
			return stmt(bpfRet, retAllow)
		}
		return retErrno(p.Errno)
	}
	prog := []unix.SockFilter{
		stmt(bpfLdAbs, offArch),
		jump(bpfJeq, unix.AUDIT_ARCH_X86_64, 1, 0),
		stmt(bpfRet, retKill),
		stmt(bpfLdAbs, offNr),
		jump(bpfJge, x32Bit, 0, 1),
		stmt(bpfRet, retKill),
	}
	// socket(family, ...)
	block := []unix.SockFilter{stmt(bpfLdAbs, offArg0)}
	for _, f := range p.Families {
		block = append(block, jump(bpfJeq, f, 0, 1), allowed(unix.SYS_SOCKET))
	}
	block = append(block, retErrno(uint32(unix.EAFNOSUPPORT)))
	prog = append(prog, jump(bpfJeq, unix.SYS_SOCKET, 0, uint8(len(block))))
	prog = append(prog, block...)
	if p.NoNamespaces {
		for _, c := range []struct {
			nr    uint32
			flags uint32
		}{{unix.SYS_CLONE, nsFlags}, {unix.SYS_UNSHARE, nsFlags | cloneTime}} {
			prog = append(prog, jump(bpfJeq, c.nr, 0, 4),
				stmt(bpfLdAbs, offArg0), jump(bpfJset, c.flags, 0, 1), retErrno(uint32(unix.EPERM)), allowed(c.nr))
		}
		prog = append(prog,
			jump(bpfJeq, unix.SYS_CLONE3, 0, 1), retErrno(uint32(unix.ENOSYS)),
			jump(bpfJeq, unix.SYS_SETNS, 0, 1), retErrno(uint32(unix.EPERM)))
	}
	for _, nr := range p.Allow {
		prog = append(prog, jump(bpfJeq, nr, 0, 1), stmt(bpfRet, retAllow))
	}
	return append(prog, retErrno(p.Errno))
}

func (p policy) String() string {
	return fmt.Sprintf("%d system calls allowed, errno %d, families %v, namespaces restricted %v", len(p.Allow), p.Errno, p.Families, p.NoNamespaces)
}
