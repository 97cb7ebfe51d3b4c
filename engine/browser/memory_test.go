package browser

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"boxd/internal/problem"
)

// hogPage allocates, 32 MiB at a time up to 2 GiB, with one way a page
// makes memory the JavaScript heap bound does not cover, and reports in
// its title how far it got.
func hogPage(what string) string {
	step := map[string]string{
		"arraybuffers": `const b = new ArrayBuffer(32 << 20); new Uint8Array(b).fill(1); keep.push(b);`,
		"canvases": `const c = document.createElement("canvas"); c.width = 4096; c.height = 2048; const x = c.getContext("2d");
			if (!x) throw new Error("no context"); x.fillStyle = "red"; x.fillRect(0, 0, 4096, 2048); x.getImageData(0, 0, 1, 1); keep.push(c); document.body.appendChild(c);`,
		"dom": `const d = document.createElement("div"); d.textContent = String(i).repeat(16 << 20 >> String(i).length) + "."; document.body.appendChild(d);`,
	}[what]
	return `<!doctype html><title>start</title><body><script>
const keep = []; let n = 0;
try { for (let i = 0; i < 64; i++) { ` + step + ` n++; } document.title = "allocated " + n; }
catch (e) { document.title = "refused after " + n + ": " + e; }
</script>`
}

// descendants are pid and every process below it.
func descendants(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces.
		rest := stat[bytes.LastIndexByte(stat, ')')+1:]
		f := strings.Fields(string(rest))
		if len(f) < 2 {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		children[pp] = append(children[pp], p)
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// rssAnon is a process's resident anonymous memory in bytes (0 when it is
// gone).
func rssAnon(pid int) int64 {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// TestPageMemoryIsBounded is the bounded load test of the probe's class
// "memory growth in the browser": pasted pages that grow ArrayBuffers,
// canvases and the DOM (none of it in the JavaScript heap) toward 2 GiB,
// in a pool whose processes may allocate 384 MiB each. Every browser
// process stays under the bound (resident anonymous memory, sampled
// every 20 ms); each page either ends refused in the page (an
// ArrayBuffer's RangeError, a canvas not allocated) or crashes its
// renderer, which the tab reports as a 422 problem holding ErrCrashed,
// not a hang; and the next tab works. Before the fix each page took its
// 2 GiB.
func TestPageMemoryIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("memory test")
	}
	const boundMB = 384
	p, err := NewPool(Options{Slots: 1, TabTimeout: 60 * time.Second, MemoryMB: boundMB})
	if errors.Is(err, ErrNoBrowser) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (make deps installs chromium)", err)
		}
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, what := range []string{"arraybuffers", "canvases", "dom"} {
		t.Run(what, func(t *testing.T) {
			tab, err := p.Open(context.Background(), Policy{Network: Offline})
			if err != nil {
				t.Fatal(err)
			}
			defer tab.Close()
			pid := chromedp.FromContext(tab.Context()).Browser.Process().Pid
			var peak atomic.Int64
			done := make(chan struct{})
			var sampler sync.WaitGroup
			sampler.Go(func() {
				for {
					for _, q := range descendants(pid) {
						if r := rssAnon(q); r > peak.Load() {
							peak.Store(r)
						}
					}
					select {
					case <-done:
						return
					case <-time.After(20 * time.Millisecond):
					}
				}
			})
			start := time.Now()
			err = tab.LoadHTML(hogPage(what))
			var title string
			if err == nil {
				title, err = chromedp.Run(tab.Context(), chromedp.Title())
				err = tab.Err(err)
			}
			close(done)
			sampler.Wait()
			t.Logf("%s: %v, title %q, largest browser process %.0f MiB (bound %d MiB) after %v", what, err, title, float64(peak.Load())/(1<<20), boundMB, time.Since(start).Round(time.Millisecond))
			switch {
			case err == nil:
				if !strings.HasPrefix(title, "refused after") && !strings.HasPrefix(title, "allocated") {
					t.Errorf("title %q", title)
				}
			case errors.Is(err, ErrCrashed):
				if pe, ok := problem.As(err); !ok || pe.Kind != problem.Unprocessable || !strings.Contains(pe.Message, "384 MiB") {
					t.Errorf("a crash is a 422 naming the bound: %v", err)
				}
			default:
				t.Errorf("the page ended with %v, want a result or ErrCrashed", err)
			}
			if peak.Load() > boundMB<<20 {
				t.Errorf("a browser process held %d MiB, over the %d MiB bound", peak.Load()>>20, boundMB)
			}
		})
	}
	tab, err := p.Open(context.Background(), Policy{Network: Offline})
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	if err := tab.LoadHTML(`<!doctype html><title>fine</title>`); err != nil {
		t.Fatal(err)
	}
	if title, err := chromedp.Run(tab.Context(), chromedp.Title()); err != nil || title != "fine" {
		t.Errorf("the next tab: %q %v", title, err)
	}
}

// TestMemoryLimitCommand: the browser's command runs through prlimit with
// soft and hard RLIMIT_DATA at the bound, and chromium itself is what
// prlimit runs; without a bound only the parent-death signal is set.
func TestMemoryLimitCommand(t *testing.T) {
	l := &memoryLimit{prlimit: "/usr/bin/prlimit", bytes: 512 << 20}
	cmd := exec.Command("/usr/bin/chromium", "--headless", "about:blank")
	l.apply(cmd)
	want := []string{"/usr/bin/prlimit", "--data=536870912:536870912", "--", "/usr/bin/chromium", "--headless", "about:blank"}
	if cmd.Path != "/usr/bin/prlimit" || strings.Join(cmd.Args, " ") != strings.Join(want, " ") || cmd.SysProcAttr == nil || cmd.SysProcAttr.Pdeathsig == 0 {
		t.Errorf("command %s %q", cmd.Path, cmd.Args)
	}
	var none *memoryLimit
	cmd = exec.Command("/usr/bin/chromium", "about:blank")
	none.apply(cmd)
	if cmd.Path != "/usr/bin/chromium" || cmd.SysProcAttr == nil || cmd.SysProcAttr.Pdeathsig == 0 {
		t.Errorf("without a bound: %s %q", cmd.Path, cmd.Args)
	}
}
