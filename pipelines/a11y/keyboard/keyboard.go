// Package keyboard is the accessibility audit's keyboard pass: real Tab
// key events sent to the page through the DevTools protocol, the tab-stop
// sequence they walk, the interactive elements no Tab reaches, focus that
// does not show (the element looks the same focused and not), and focus
// that Tab cannot move on (a trap).
package keyboard

import (
	"bytes"
	"context"
	"fmt"
	"image"
	_ "image/png" // screenshots
	"math"
	"regexp"
	"slices"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"boxd/engine/browser"
)

// Element is an element of the page as the pass names it.
type Element struct {
	Selector string     `json:"selector"`
	Tag      string     `json:"tag"`
	Role     string     `json:"role,omitempty"`
	Type     string     `json:"type,omitempty"` // an input's type
	Name     string     `json:"name"`
	Box      [4]float64 `json:"box"` // x, y, width, height in CSS pixels
	// Tabbable: in the tab order (tabIndex 0 or more), so only a trap
	// before it keeps Tab from it.
	Tabbable bool `json:"tabbable,omitempty"`
	// StandIn is the selector of what shows a native checkbox or radio
	// button hidden from sight: its label, styled as the box a user sees.
	StandIn string `json:"stand_in,omitempty"`
	// Group names a radio button's group (its form and name): Tab stops
	// on one button of a group, and the arrow keys move among them.
	Group string `json:"group,omitempty"`
}

// Stop is one tab stop, in the order Tab reached it.
type Stop struct {
	Element
	// FocusVisible: the element's pixels (and 4 around it) change when it
	// takes focus (Change is the share of them that did), or, when they
	// hardly do, an indicator elsewhere in the viewport does
	// (ChangedElsewhere pixels outside them changed: a marker beside the
	// element, a highlighted row).
	FocusVisible     bool    `json:"focus_visible"`
	Change           float64 `json:"change"`
	ChangedElsewhere int     `json:"changed_elsewhere"`
	// KeysWork is set for a stop that is not a native control (a div or
	// span made a button): whether Enter or Space activates it (fires its
	// click) as they do a real button. Nil for native controls.
	KeysWork *bool `json:"keys_work,omitempty"`
}

// Result is what the pass found.
type Result struct {
	Stops []Stop `json:"stops"`
	// Unreachable are interactive elements (links, buttons, form
	// controls, elements with a click handler or an interactive role) that
	// are visible and enabled but no Tab reached.
	Unreachable []Element `json:"unreachable"`
	// Trap is where Tab stopped moving focus (nil when it never did);
	// BeyondTrap are the controls in the tab order that the walk did not
	// reach because of it, before or after it in the page (not counted
	// unreachable: the trap is the problem).
	Trap       *Element  `json:"trap"`
	BeyondTrap []Element `json:"beyond_trap"`
	// TrapCycle, for a trap among several elements (Tab sent focus back to
	// an earlier stop without leaving the page, and Escape did not free
	// it), are their selectors in Tab order; Trap is the last of them.
	TrapCycle []string `json:"trap_cycle,omitempty"`
	// SkipLinks are the page's in-page links that say "skip" (or come
	// first), and whether following one moves focus to its target.
	SkipLinks []SkipLink `json:"skip_links"`
	// Dialogs are the dialogs the page's dialog buttons open (a button
	// with aria-haspopup="dialog", or aria-controls naming a dialog),
	// opened with Enter and closed with Escape.
	Dialogs []Dialog `json:"dialogs"`
	// Backward is what Shift+Tab reached from the last stop back to the
	// first (selectors); BackwardMatches says it is the tab order
	// reversed.
	Backward        []string `json:"backward"`
	BackwardMatches bool     `json:"backward_matches"`
	// Presses is how many Tab key presses were sent.
	Presses int `json:"presses"`
}

// Dialog is what happened when a dialog button was pressed.
type Dialog struct {
	Opener Element `json:"opener"`
	// Opened: a dialog (role dialog or alertdialog, or an open <dialog>)
	// showed; TookFocus: focus moved into it; EscapeClosed: Escape hid
	// it; FocusReturned: focus then went back to the opener.
	Opened    bool `json:"opened"`
	TookFocus bool `json:"took_focus"`
	// Declared: the opener says it opens a dialog (aria-haspopup="dialog"
	// or aria-controls naming one); an undeclared one was found by
	// pressing a button that declares nothing.
	Declared      bool `json:"declared"`
	EscapeClosed  bool `json:"escape_closed"`
	FocusReturned bool `json:"focus_returned"`
}

// SkipLink is a link to a place on the page that skips ahead.
type SkipLink struct {
	Element
	Target string `json:"target"` // the fragment it links to
	// Works: after Enter on it, the next Tab lands inside or after its
	// target, not on what follows the link.
	Works bool `json:"works"`
}

// minChange is the least share of an element's pixels that must change
// when it takes focus for the focus to count as visible; minElsewhere the
// least pixels elsewhere in the viewport that must, when its own do not.
const (
	minChange    = 0.02
	minElsewhere = 16
)

// helpers is injected into the page: a selector for an element, its
// name and box, and the page's interactive elements.
const helpers = `window.__boxd = {
  sel(el) {
    if (!el || el === document.body || el === document.documentElement) return "";
    return (` + browser.SelectorJS + `)(el);
  },
  desc(el) {
    const r = el.getBoundingClientRect();
    const labels = el.labels && el.labels.length ? [...el.labels].map(l => l.textContent).join(" ") : "";
    const name = (el.getAttribute("aria-label") || labels || el.innerText || el.value || el.getAttribute("title") || el.getAttribute("alt") || "").trim().slice(0, 120);
    return {selector: this.sel(el), tag: el.tagName.toLowerCase(), role: el.getAttribute("role") || "", name, box: [r.x, r.y, r.width, r.height], tabbable: el.tabIndex >= 0,
      type: el.tagName === "INPUT" ? el.type : "",
      group: el.type === "radio" && el.name ? (el.form ? this.sel(el.form) : "") + "|" + el.name : ""};
  },
  // Controls: native ones, interactive roles, click handlers, editable
  // text, and elements put in the tab order (tabindex 0 or more). An
  // element given tabindex="-1" alone (a skip link's target, a dialog
  // focused by script) and a frame (a document of its own) are not.
  interactive() {
    const q = 'a[href],button,input:not([type=hidden]),select,textarea,summary,[tabindex]:not([tabindex^="-"]),[role=button],[role=link],[role=checkbox],[role=radio],[role=switch],[role=tab],[role=menuitem],[onclick],[contenteditable=""],[contenteditable=true]';
    const shown = (el) => { const r = el.getBoundingClientRect(), cs = getComputedStyle(el);
      return r.width > 0 && r.height > 0 && cs.visibility !== "hidden" && cs.display !== "none"; };
    const out = [...document.querySelectorAll(q)].filter(el => !/^(IFRAME|FRAME|OBJECT|EMBED)$/.test(el.tagName) &&
      shown(el) && !el.disabled && !el.closest("[inert]")).map(el => this.desc(el));
    // A native checkbox or radio button hidden outright (display: none,
    // visibility: hidden) while its label shows as its stand-in: the
    // control is out of the tab order and the accessibility tree, and
    // the label is what a pointer uses.
    for (const el of document.querySelectorAll('input[type=checkbox],input[type=radio]')) {
      if (el.disabled || el.closest("[inert]") || el.getClientRects().length && getComputedStyle(el).visibility !== "hidden") continue;
      const l = [...(el.labels || [])].find(shown);
      // (A label holding a control of its own, a span role=checkbox in
      // the tab order, is that control's business.)
      if (!l || [...l.querySelectorAll("*")].some(c => c.tabIndex >= 0 || /^(checkbox|radio|switch)$/.test(c.getAttribute("role") || ""))) continue;
      const d = this.desc(el), r = l.getBoundingClientRect();
      d.box = [r.x, r.y, r.width, r.height]; d.name = d.name || l.textContent.trim().slice(0, 120); d.stand_in = this.sel(l); d.tabbable = false;
      out.push(d);
    }
    return out;
  },
  active() { const a = document.activeElement; return a && a !== document.body ? this.desc(a) : null; },
  // shown is where a stop shows its focus, brought into the viewport:
  // its own box, or, for a native checkbox or radio button hidden from
  // sight (under 2 px, transparent, clipped away or off the page) but
  // still focusable, its label's (the stand-in a sighted user sees);
  // the box in the viewport's coordinates, and the page's scroll.
  shown(sel) {
    const el = document.querySelector(sel);
    if (!el) return null;
    let box = el, standIn = "";
    if (/^(checkbox|radio)$/.test(el.type || "") && this.hidden(el)) {
      const l = [...(el.labels || [])].find(l => { const r = l.getBoundingClientRect(); return r.width > 0 && r.height > 0; })
        || (el.nextElementSibling && el.nextElementSibling.getBoundingClientRect().width > 0 ? el.nextElementSibling : null);
      if (l) { box = l; standIn = this.sel(l); }
    }
    let r = box.getBoundingClientRect();
    if (r.bottom <= 0 || r.right <= 0 || r.top >= innerHeight || r.left >= innerWidth) {
      box.scrollIntoView({block: "center", inline: "nearest"});
      r = box.getBoundingClientRect();
    }
    return {box: [r.x, r.y, r.width, r.height], scroll: [scrollX, scrollY], viewport: [innerWidth, innerHeight], stand_in: standIn};
  },
  hidden(el) {
    const r = el.getBoundingClientRect(), cs = getComputedStyle(el);
    const clipped = /rect\(0(px)?,? 0(px)?,? 0(px)?,? 0(px)?\)/.test(cs.clip) || /inset\(50%\)/.test(cs.clipPath);
    return r.width < 2 || r.height < 2 || parseFloat(cs.opacity) === 0 || clipped || r.right + scrollX <= 0 || r.bottom + scrollY <= 0;
  },
};
true`

// Pass walks the page in tab by pressing Tab up to maxPresses times
// (0: twice the interactive elements, plus 5), from the top of the page.
func Pass(ctx context.Context, tab *browser.Tab, maxPresses int) (*Result, error) {
	c := tab.Context()
	if _, err := chromedp.Run(c, chromedp.Evaluate[bool](helpers)); err != nil {
		return nil, fmt.Errorf("keyboard: %w", err)
	}
	all, err := chromedp.Run(c, chromedp.Evaluate[[]Element](`__boxd.interactive()`))
	if err != nil {
		return nil, fmt.Errorf("keyboard: %w", err)
	}
	if maxPresses <= 0 {
		frames, err := chromedp.Run(c, chromedp.Evaluate[int](`document.querySelectorAll("iframe,frame").length`))
		if err != nil {
			return nil, fmt.Errorf("keyboard: %w", err)
		}
		maxPresses = 2*len(all) + 5 + maxInFrame*min(frames, 4)
	}
	// Start before the first element: focus on the document.
	if _, err := chromedp.Run(c, chromedp.Evaluate[bool](`document.activeElement && document.activeElement.blur && document.activeElement.blur(), window.focus(), true`)); err != nil {
		return nil, fmt.Errorf("keyboard: %w", err)
	}
	res := &Result{Stops: []Stop{}, Unreachable: []Element{}}
	seen := map[string]bool{}
	var last string
	still := 0
	var pending *Element // where Escape and Tab left a cycle
	inFrame := 0
	for res.Presses < maxPresses {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cur := pending
		if pending != nil {
			pending = nil
		} else {
			if err := press(c, "Tab", "Tab", 9); err != nil {
				return nil, err
			}
			res.Presses++
			// A page may move focus a moment after Tab (a blur handler's
			// timer): read where it settles, after a timer of the page's
			// own set now. The page's timers fire in the order they are
			// due, so one its handler set for up to settle runs first
			// however loaded the machine is; a sleep on this side of the
			// protocol missed it under load.
			if cur, err = chromedp.Run(c, chromedp.Evaluate[*Element](settleJS, chromedp.EvalAwaitPromise)); err != nil {
				return nil, fmt.Errorf("keyboard: %w", err)
			}
		}
		if cur == nil || cur.Selector == "" {
			if len(res.Stops) > 0 {
				break // past the last stop: back to the document
			}
			continue
		}
		// Focus inside a frame: the frame's document has its own stops
		// (a cross-origin one cannot be read), and the frame is no control
		// of this page; Tab goes on through it until focus comes back.
		if frameTag[cur.Tag] {
			if inFrame++; inFrame > maxInFrame {
				break
			}
			continue
		}
		inFrame = 0
		if cur.Selector == last {
			if still++; still >= 2 {
				trap := *cur
				res.Trap = &trap
				break
			}
			continue
		}
		still = 0
		if seen[cur.Selector] {
			// Back to a stop without leaving the page (going round, Tab
			// passes the document first): a cycle, a trap unless Escape
			// frees it (a modal dialog may hold focus while it is open).
			{
				from := slices.IndexFunc(res.Stops, func(st Stop) bool { return st.Selector == cur.Selector })
				var cycle []string
				for _, st := range res.Stops[from:] {
					cycle = append(cycle, st.Selector)
				}
				landed, tabbed, err := escapes(c, cycle)
				if err != nil {
					return nil, err
				}
				if tabbed {
					res.Presses++
				}
				if landed != nil && landed.Selector != "" && slices.Contains(cycle, landed.Selector) {
					trap := res.Stops[len(res.Stops)-1].Element
					res.Trap, res.TrapCycle = &trap, cycle
					break
				}
				if landed != nil && landed.Selector != "" && !seen[landed.Selector] {
					pending = landed // out of the cycle: walk on from there
					continue
				}
			}
			break
		}
		seen[cur.Selector] = true
		last = cur.Selector
		stop := Stop{Element: *cur}
		if err := measureFocus(c, &stop); err != nil {
			return nil, err
		}
		if !native[stop.Tag] {
			acts, err := chromedp.Run(c, chromedp.Evaluate[bool](actsJS))
			if err != nil {
				return nil, fmt.Errorf("keyboard: %w", err)
			}
			if acts {
				works, err := keysWork(c)
				if err != nil {
					return nil, err
				}
				stop.KeysWork = &works
			}
		}
		res.Stops = append(res.Stops, stop)
	}
	if res.Trap == nil {
		if res.Backward, err = backward(c, res.Stops); err != nil {
			return nil, err
		}
		res.BackwardMatches = len(res.Backward) == len(res.Stops)
		for i, sel := range res.Backward {
			if res.BackwardMatches && sel != res.Stops[len(res.Stops)-1-i].Selector {
				res.BackwardMatches = false
			}
		}
		if res.SkipLinks, err = skipLinks(c, res.Stops); err != nil {
			return nil, err
		}
		// Buttons that do not declare a dialog are pressed too, with every
		// request held (a press must not send anything).
		tab.Hold()
		res.Dialogs, err = dialogs(c, res.Stops)
		tab.Release()
		if err != nil {
			return nil, err
		}
	}
	// With a trap, a control in the tab order that Tab did not reach was
	// cut off by it, wherever it is on the page (a trap in a dialog at
	// the end of the page cuts off the page before it too); one no Tab
	// could ever reach (not in the tab order) is unreachable either way.
	// A radio group is reached when one of its buttons is.
	groups := map[string]bool{}
	for _, st := range res.Stops {
		if st.Group != "" {
			groups[st.Group] = true
		}
	}
	for _, e := range all {
		switch {
		case seen[e.Selector] || (res.Trap != nil && e.Selector == res.Trap.Selector) || groups[e.Group]:
		case res.Trap != nil && e.Tabbable:
			res.BeyondTrap = append(res.BeyondTrap, e)
		default:
			res.Unreachable = append(res.Unreachable, e)
		}
	}
	return res, nil
}

// frameTag are the elements that hold a document of their own.
var frameTag = map[string]bool{"iframe": true, "frame": true, "object": true, "embed": true}

// maxInFrame bounds the Tab presses spent in one frame's document.
const maxInFrame = 30

// escapes presses Escape and says where focus went (nil: the document);
// when Escape left it in the cycle, Tab is pressed too (tabbed).
func escapes(c context.Context, cycle []string) (cur *Element, tabbed bool, err error) {
	if err := press(c, "Escape", "Escape", 27); err != nil {
		return nil, false, err
	}
	active := func() (*Element, error) {
		e, err := chromedp.Run(c, chromedp.Evaluate[*Element](`__boxd.active()`))
		if err != nil {
			return nil, fmt.Errorf("keyboard: %w", err)
		}
		return e, nil
	}
	if cur, err = active(); err != nil || (cur != nil && cur.Selector != "" && !slices.Contains(cycle, cur.Selector)) {
		return cur, false, err
	}
	if err := press(c, "Tab", "Tab", 9); err != nil {
		return nil, true, err
	}
	cur, err = active()
	return cur, true, err
}

// press sends one key down and up; Enter with its text ("\r"), which
// is what makes a button or a link act on it.
func press(c context.Context, key, code string, vk int64) error {
	down := input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeRawKeyDown, Key: key, Code: code, WindowsVirtualKeyCode: vk, NativeVirtualKeyCode: vk}
	if key == "Enter" {
		down.Type, down.Text = input.DispatchKeyEventTypeKeyDown, "\r"
	}
	up := input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyUp, Key: key, Code: code, WindowsVirtualKeyCode: vk, NativeVirtualKeyCode: vk}
	for _, p := range []input.DispatchKeyEventParams{down, up} {
		if _, err := chromedp.Call(c, input.DispatchKeyEvent, p); err != nil {
			return fmt.Errorf("keyboard: press %s: %w", key, err)
		}
	}
	return nil
}

// shownAt is where a stop shows its focus (__boxd.shown).
type shownAt struct {
	Box      [4]float64 `json:"box"`      // in the viewport, CSS pixels
	Scroll   [2]float64 `json:"scroll"`   // the page's scroll
	Viewport [2]float64 `json:"viewport"` // its width and height
	StandIn  string     `json:"stand_in"`
}

// measureFocus sets the stop's focus figures: the share of the pixels
// of what shows it (its box, or a hidden checkbox's stand-in, and 4
// around) that differ between it focused and not, in the viewport as it
// is scrolled when the stop has focus; when that share is small, the
// pixels of the rest of the viewport that differ. A stand-in shows
// focus when at least minElsewhere of its pixels change (a ring round a
// small box is a small share of a label's).
func measureFocus(c context.Context, stop *Stop) error {
	at, err := chromedp.Run(c, chromedp.Evaluate[*shownAt](fmt.Sprintf(`__boxd.shown(%q)`, stop.Selector)))
	if err != nil {
		return fmt.Errorf("keyboard: %w", err)
	}
	if at == nil {
		return nil // gone from the page
	}
	stop.StandIn = at.StandIn
	changed, share, err := focusChange(c, stop.Selector, at, false)
	if err != nil {
		return err
	}
	stop.Change = share
	if at.StandIn != "" && changed >= minElsewhere {
		stop.FocusVisible = true
		return nil
	}
	if share < minChange {
		elsewhere, _, err := focusChange(c, stop.Selector, at, true)
		if err != nil {
			return err
		}
		stop.ChangedElsewhere = elsewhere
	}
	stop.FocusVisible = stop.Change >= minChange || stop.ChangedElsewhere >= minElsewhere
	return nil
}

// focusChange compares the viewport with the element focused and
// blurred: the element is blurred for a screenshot and focused again
// for another. It counts the differing pixels of at's box (and 4
// around), clipped to the viewport, and their share of it; with
// elsewhere, the differing pixels of the viewport outside that box.
func focusChange(c context.Context, sel string, at *shownAt, elsewhere bool) (changed int, share float64, err error) {
	vw, vh := at.Viewport[0], at.Viewport[1]
	x0, y0 := math.Max(0, at.Box[0]-4), math.Max(0, at.Box[1]-4)
	x1, y1 := math.Min(vw, at.Box[0]+at.Box[2]+4), math.Min(vh, at.Box[1]+at.Box[3]+4)
	if x1-x0 < 1 || y1-y0 < 1 {
		return 0, 0, nil // nothing of it in the viewport
	}
	// The clip is in the page's coordinates: the viewport's box moved by
	// the scroll.
	params := page.CaptureScreenshotParams{Clip: &page.Viewport{X: x0 + at.Scroll[0], Y: y0 + at.Scroll[1], Width: x1 - x0, Height: y1 - y0, Scale: 1}}
	if elsewhere {
		params = page.CaptureScreenshotParams{}
	}
	shot := func() (image.Image, error) {
		res, err := chromedp.Call(c, page.CaptureScreenshot, params)
		if err != nil {
			return nil, err
		}
		img, _, err := image.Decode(bytes.NewReader(res.Data))
		return img, err
	}
	focused, err := shot()
	if err != nil {
		return 0, 0, fmt.Errorf("keyboard: screenshot: %w", err)
	}
	q := fmt.Sprintf("%q", sel)
	if _, err := chromedp.Run(c, chromedp.Evaluate[bool](`(() => { const el = document.querySelector(`+q+`); el && el.blur(); return true; })()`)); err != nil {
		return 0, 0, fmt.Errorf("keyboard: %w", err)
	}
	blurred, err := shot()
	if err != nil {
		return 0, 0, fmt.Errorf("keyboard: screenshot: %w", err)
	}
	// Focus it again as the keyboard left it (focus-visible: from the
	// keyboard, and not scrolled: the page stays as Tab left it), so the
	// next Tab goes on from here.
	if _, err := chromedp.Run(c, chromedp.Evaluate[bool](`(() => { const el = document.querySelector(`+q+`); el && el.focus({focusVisible: true, preventScroll: true}); return true; })()`)); err != nil {
		return 0, 0, fmt.Errorf("keyboard: %w", err)
	}
	b := focused.Bounds()
	if blurred.Bounds() != b || b.Empty() {
		return b.Dx() * b.Dy(), 1, nil
	}
	// The box in the viewport's pixels (CSS pixels: the screenshots are
	// at scale 1).
	own := image.Rect(int(x0), int(y0), int(math.Ceil(x1)), int(math.Ceil(y1)))
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if elsewhere && image.Pt(x, y).In(own) {
				continue
			}
			r1, g1, b1, _ := focused.At(x, y).RGBA()
			r2, g2, b2, _ := blurred.At(x, y).RGBA()
			if absDiff(r1, r2)+absDiff(g1, g2)+absDiff(b1, b2) > 3*0x1000 {
				changed++
			}
		}
	}
	return changed, float64(changed) / float64(b.Dx()*b.Dy()), nil
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

// native are the elements the browser itself activates with the keyboard
// (media with controls among them).
var native = map[string]bool{"a": true, "button": true, "input": true, "select": true, "textarea": true, "summary": true, "area": true, "option": true, "video": true, "audio": true}

// actsJS says whether the focused element, not a native control, acts
// as a button or link does, so Enter or Space should work it: a role of
// one (button, link, checkbox, switch, a menu item), or no role and a
// click handler attribute or a pointer cursor. Editable text, a region
// given tabindex="0" so it can scroll, and widgets whose keys are
// arrows (tabs, sliders, lists) are not asked for Enter and Space.
const actsJS = `(() => { const a = document.activeElement;
  if (!a || a.isContentEditable) return false;
  const r = a.getAttribute("role") || "";
  if (r) return /^(button|link|checkbox|switch|menuitem|menuitemcheckbox|menuitemradio)$/.test(r);
  return a.hasAttribute("onclick") || getComputedStyle(a).cursor === "pointer";
})()`

// keysWork says whether Enter or Space on the focused element fires a
// click, as on a real button (a div with a click handler alone does not).
// The page's click handlers still run; focus stays where it is.
func keysWork(c context.Context) (bool, error) {
	if _, err := chromedp.Run(c, chromedp.Evaluate[bool](`(() => { window.__boxdClicks = 0; const a = document.activeElement;
  window.__boxdCount = (e) => { if (e.target === a || a.contains(e.target)) window.__boxdClicks++; e.preventDefault(); };
  document.addEventListener("click", window.__boxdCount, true); return true; })()`)); err != nil {
		return false, fmt.Errorf("keyboard: %w", err)
	}
	for _, k := range []struct {
		key, code, text string
		vk              int64
	}{{"Enter", "Enter", "\r", 13}, {" ", "Space", " ", 32}} {
		for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeKeyDown, input.DispatchKeyEventTypeKeyUp} {
			p := input.DispatchKeyEventParams{Type: typ, Key: k.key, Code: k.code, WindowsVirtualKeyCode: k.vk, NativeVirtualKeyCode: k.vk}
			if typ == input.DispatchKeyEventTypeKeyDown {
				p.Text = k.text
			}
			if _, err := chromedp.Call(c, input.DispatchKeyEvent, p); err != nil {
				return false, fmt.Errorf("keyboard: press %s: %w", k.code, err)
			}
		}
	}
	n, err := chromedp.Run(c, chromedp.Evaluate[int](`(() => { document.removeEventListener("click", window.__boxdCount, true); return window.__boxdClicks; })()`))
	if err != nil {
		return false, fmt.Errorf("keyboard: %w", err)
	}
	return n > 0, nil
}

// skipLinks follows each in-page link that says "skip" (or is the first
// stop and leads to the main content): focus it, press Enter, press Tab,
// and see where focus lands.
func skipLinks(c context.Context, stops []Stop) ([]SkipLink, error) {
	var out []SkipLink
	for i, s := range stops {
		if s.Tag != "a" {
			continue
		}
		href, err := chromedp.Run(c, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q).getAttribute("href") || ""`, s.Selector)))
		if err != nil {
			return nil, fmt.Errorf("keyboard: %w", err)
		}
		if len(href) < 2 || href[0] != '#' {
			continue
		}
		if !skipRE.MatchString(s.Name) {
			// A first link that does not say "skip" is one only when it
			// leads to the main content: a logo's "#home" or a "#top" is
			// no skip link, working or not.
			main := false
			if i == 0 {
				main, err = chromedp.Run(c, chromedp.Evaluate[bool](fmt.Sprintf(`(() => { const t = document.getElementById(%q), l = document.querySelector(%q);
  return !!t && !!l && t !== document.body && !t.contains(l) && (t.matches("main, [role=main]") || !!t.querySelector("main, [role=main], h1")); })()`, href[1:], s.Selector)))
				if err != nil {
					return nil, fmt.Errorf("keyboard: %w", err)
				}
			}
			if !main {
				continue
			}
		}
		if _, err := chromedp.Run(c, chromedp.Evaluate[bool](fmt.Sprintf(`document.querySelector(%q).focus({focusVisible: true}), true`, s.Selector))); err != nil {
			return nil, fmt.Errorf("keyboard: %w", err)
		}
		if err := press(c, "Enter", "Enter", 13); err != nil {
			return nil, err
		}
		if err := press(c, "Tab", "Tab", 9); err != nil {
			return nil, err
		}
		works, err := chromedp.Run(c, chromedp.Evaluate[bool](fmt.Sprintf(`(() => { const t = document.getElementById(%q), a = document.activeElement, l = document.querySelector(%q);
  if (!t || !a || a === document.body) return false;
  if (t.contains(a)) return true;
  // After the target, and not merely the control after the link.
  return !!(t.compareDocumentPosition(a) & Node.DOCUMENT_POSITION_FOLLOWING) && !(l.compareDocumentPosition(a) & Node.DOCUMENT_POSITION_FOLLOWING && a.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_FOLLOWING);
})()`, href[1:], s.Selector)))
		if err != nil {
			return nil, fmt.Errorf("keyboard: %w", err)
		}
		out = append(out, SkipLink{Element: s.Element, Target: href, Works: works})
	}
	return out, nil
}

var skipRE = regexp.MustCompile(`(?i)\bskip\b|jump to|go to (the )?(main )?content|main content|zum (haupt)?inhalt|inhalt überspringen|aller au contenu|passer au contenu|saltar al contenido|ir al contenido|vai al contenuto|salta al contenuto|naar (de )?(hoofd)?inhoud|ir para o conteúdo`)

// backward focuses the last stop and presses Shift+Tab until focus
// leaves the stops or has been back as many times as there are stops.
func backward(c context.Context, stops []Stop) ([]string, error) {
	if len(stops) == 0 {
		return nil, nil
	}
	last := stops[len(stops)-1].Selector
	if _, err := chromedp.Run(c, chromedp.Evaluate[bool](fmt.Sprintf(`document.querySelector(%q).focus({focusVisible: true}), true`, last))); err != nil {
		return nil, fmt.Errorf("keyboard: %w", err)
	}
	out := []string{last}
	for inFrame := 0; len(out) < len(stops) && inFrame <= maxInFrame; {
		for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeRawKeyDown, input.DispatchKeyEventTypeKeyUp} {
			if _, err := chromedp.Call(c, input.DispatchKeyEvent, input.DispatchKeyEventParams{Type: typ, Key: "Tab", Code: "Tab", WindowsVirtualKeyCode: 9, NativeVirtualKeyCode: 9, Modifiers: 8}); err != nil {
				return nil, fmt.Errorf("keyboard: press Shift+Tab: %w", err)
			}
		}
		cur, err := chromedp.Run(c, chromedp.Evaluate[*Element](`__boxd.active()`))
		if err != nil {
			return nil, fmt.Errorf("keyboard: %w", err)
		}
		if cur == nil || cur.Selector == "" {
			break
		}
		if frameTag[cur.Tag] {
			inFrame++ // through a frame's document, as going forward
			continue
		}
		inFrame = 0
		out = append(out, cur.Selector)
	}
	return out, nil
}

// dialogState reads whether a dialog shows, and whether focus is in it.
const dialogState = `(() => {
  const shown = [...document.querySelectorAll('[role=dialog],[role=alertdialog],dialog')].filter(d => {
    if (d.tagName === "DIALOG" && !d.open) return false;
    const r = d.getBoundingClientRect(), cs = getComputedStyle(d);
    return r.width > 0 && r.height > 0 && cs.display !== "none" && cs.visibility !== "hidden";
  });
  const a = document.activeElement;
  return {open: shown.length > 0, inside: shown.some(d => d.contains(a)), active: a ? __boxd.sel(a) : ""};
})()`

// settle is how long focus is given to settle after a Tab, measured by
// the page's own timer (settleJS).
const settle = 40 * time.Millisecond

// settleJS resolves to the focused element once a page timer of settle
// has fired.
var settleJS = fmt.Sprintf(`new Promise(r => setTimeout(() => r(__boxd.active()), %d))`, settle.Milliseconds())

// MaxUndeclared bounds the buttons pressed to find dialogs they do not
// declare.
const MaxUndeclared = 12

// dialogs presses each dialog button (aria-haspopup="dialog", or
// aria-controls naming a dialog) with Enter, sees whether a dialog shows
// and takes focus, presses Escape, and sees whether it closes and gives
// focus back. Up to MaxUndeclared other buttons (not a form's submit, not
// on the way to pay, not a menu or disclosure) are pressed too, to find
// the dialogs they open without saying so.
func dialogs(c context.Context, stops []Stop) ([]Dialog, error) {
	var out []Dialog
	type state struct {
		Open   bool   `json:"open"`
		Inside bool   `json:"inside"`
		Active string `json:"active"`
	}
	read := func() (state, error) {
		st, err := chromedp.Run(c, chromedp.Evaluate[state](dialogState))
		if err != nil {
			return st, fmt.Errorf("keyboard: %w", err)
		}
		return st, nil
	}
	tried := 0
	for _, s := range stops {
		kind, err := chromedp.Run(c, chromedp.Evaluate[string](fmt.Sprintf(`(() => { const e = document.querySelector(%q);
  if (!e) return "";
  if ((e.getAttribute("aria-haspopup") || "") === "dialog") return "declared";
  const t = document.getElementById(e.getAttribute("aria-controls") || "");
  if (t && (t.tagName === "DIALOG" || /dialog/.test(t.getAttribute("role") || ""))) return "declared";
  // A button that is not a form's submit button (and is not on the way
  // to pay: pressing it is only held, but it changes the page).
  const button = (e.tagName === "BUTTON" && (e.type === "button" || !e.form)) || e.getAttribute("role") === "button";
  if (!button || e.getAttribute("aria-haspopup") || e.getAttribute("aria-expanded") !== null) return "";
  return /\b(add to (cart|bag|basket)|buy|checkout|pay|order|delete|remove)\b/i.test(e.textContent + " " + (e.getAttribute("aria-label") || "")) ? "" : "maybe";
})()`, s.Selector)))
		if err != nil {
			return nil, fmt.Errorf("keyboard: %w", err)
		}
		if kind == "" || (kind == "maybe" && tried >= MaxUndeclared) {
			continue
		}
		if kind == "maybe" {
			tried++
			if st, err := read(); err != nil || st.Open {
				if err != nil {
					return nil, err
				}
				continue // a dialog is already showing
			}
		}
		if _, err := chromedp.Run(c, chromedp.Evaluate[bool](fmt.Sprintf(`document.querySelector(%q).focus({focusVisible: true}), true`, s.Selector))); err != nil {
			return nil, fmt.Errorf("keyboard: %w", err)
		}
		d := Dialog{Opener: s.Element, Declared: kind == "declared"}
		if err := press(c, "Enter", "Enter", 13); err != nil {
			return nil, err
		}
		st, err := read()
		if err != nil {
			return nil, err
		}
		d.Opened, d.TookFocus = st.Open, st.Inside
		if !d.Declared && !d.Opened {
			continue // a button that opens no dialog
		}
		if d.Opened {
			if err := press(c, "Escape", "Escape", 27); err != nil {
				return nil, err
			}
			if st, err = read(); err != nil {
				return nil, err
			}
			d.EscapeClosed, d.FocusReturned = !st.Open, !st.Open && st.Active == s.Selector
		}
		out = append(out, d)
	}
	return out, nil
}
