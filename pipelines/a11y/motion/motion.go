// Package motion is the accessibility audit's check of WCAG 2.2.2 (Pause,
// Stop, Hide): content that starts moving, blinking or updating by itself
// and keeps on for more than five seconds (an auto-advancing carousel, an
// endless ticker, a looping CSS animation) needs a control that pauses or
// stops it.
//
// The page is watched from its first script on (Prepare adds a hook to
// every new document): each timer and animation-frame callback the
// page's own scripts set is wrapped, and the visible changes it makes to
// the page (attributes that change value, elements added or removed,
// text) are counted for it. Check waits until the page has been open for
// Window by the page's clock, then reads what still moves: a script's
// repeating timer (an interval, or a timeout or animation frame that
// sets itself again) that changed the page and is still set, and each
// running CSS or Web Animation whose end lies more than five seconds
// after its start (infinite ones included). A moving part is named by
// the element that holds all its changes (the carousel, the ticker) and
// judged with the controls around it: a button that says pause, stop or
// hide (close, dismiss) there, or one on the page that pauses all
// motion, answers it.
package motion

import (
	"context"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"boxd/engine/browser"
)

// Window is how long the page is watched from its start before Check
// reads it: past the criterion's five seconds, so a repeating timer set
// at load with a period up to about five and a half seconds has fired.
const Window = 6 * time.Second

// Moving is one part of the page that keeps moving, blinking or
// updating.
type Moving struct {
	Selector string `json:"selector"`
	Tag      string `json:"tag"`
	Name     string `json:"name"` // its label, or the start of its text
	// Source is what drives it: "timer" (a script's repeating timer),
	// "frames" (a script's animation-frame loop) or "animation" (a CSS
	// or Web Animation).
	Source string `json:"source"`
	// What it does: "moves" (positions, transforms, classes, shown and
	// hidden parts), "blinks" (an animation of opacity or visibility
	// only) or "updates" (its text changes and nothing else).
	What string `json:"what"`
	// Changes counts the script's changes seen in the window (0 for an
	// animation); Endless: an animation with no end.
	Changes int  `json:"changes"`
	Endless bool `json:"endless"`
	// Pause is the control that pauses or stops it (its selector and
	// name; "" when there is none): one inside or around it, or one on
	// the page for all motion.
	Pause     string `json:"pause"`
	PauseName string `json:"pause_name"`
	// Controls are the names of the links and buttons inside it (up to
	// five): what a person must catch while it moves.
	Controls []string `json:"controls"`
}

// Prepare adds the hook to every document the tab loads from now on;
// call it before the page loads.
func Prepare(tab *browser.Tab) error {
	if _, err := chromedp.Call(tab.Context(), page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: hook}); err != nil {
		return fmt.Errorf("motion: %w", err)
	}
	return nil
}

// Check waits until the page has been open for Window (by its own
// clock: a page loaded earlier does not wait), stops watching, and
// returns what keeps moving. A page loaded without the hook (Prepare
// not called) is not checked: nil.
func Check(ctx context.Context, tab *browser.Tab) ([]Moving, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out, err := chromedp.Run(tab.Context(), chromedp.Evaluate[*[]Moving](fmt.Sprintf(check, Window.Milliseconds()), chromedp.EvalAwaitPromise))
	if err != nil {
		return nil, fmt.Errorf("motion: %w", err)
	}
	if out == nil {
		return nil, nil
	}
	for i := range *out {
		if (*out)[i].Controls == nil {
			(*out)[i].Controls = []string{}
		}
	}
	return *out, nil
}
