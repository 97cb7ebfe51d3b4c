package a11y

import (
	"fmt"

	"boxd/pipelines/a11y/keyboard"
	"boxd/pipelines/a11y/motion"
)

// Checks are the WCAG 2.2 A and AA criteria the audit's own passes check
// (in part or whole), and which pass; the rule engine's rules add theirs
// (axe-core's tags). Every other A or AA criterion is in NotChecked.
var Checks = map[string]string{
	"1.1.1": "rule engine, model", "1.3.1": "rule engine, form pass", "1.4.1": "rule engine, form pass",
	"1.4.3": "rule engine, pixels", "1.4.5": "model", "1.4.10": "reflow check",
	"2.1.1": "keyboard pass", "2.1.2": "keyboard pass", "2.2.2": "motion check, rule engine",
	"2.4.1": "keyboard pass, rule engine", "2.4.3": "keyboard pass, rule engine (positive tabindex)", "2.4.4": "rule engine, link purpose check", "2.4.7": "keyboard pass",
	"2.5.8": "rule engine (target-size)", "3.3.1": "form pass", "3.3.2": "form pass", "4.1.2": "rule engine, keyboard pass, form pass",
	"4.1.3": "form pass",
}

// NotChecked is what no audit checks, criterion by criterion (WCAG 2.2
// A and AA) and then the passes' limits: GET /a11y/info's not_checked,
// and the start of every audit's. A criterion named "not checked" has
// no check at all; one named with "only" is checked in the part said.
func NotChecked() []string {
	return []string{
		"1.2.1 Audio-only and Video-only, 1.2.3 Audio Description or Media Alternative, 1.2.4 Captions (Live), 1.2.5 Audio Description: not checked",
		"1.2.2 Captions (Prerecorded): only that a video has a captions track (the rule engine), not the captions",
		"1.3.2 Meaningful Sequence, 1.3.3 Sensory Characteristics, 1.3.4 Orientation: not checked",
		"1.3.5 Identify Input Purpose: only that autocomplete values are valid, not that fields about the person have them",
		"1.4.1 Use of Color: only links in text (the rule engine) and form errors shown by colour alone (the form pass)",
		"1.4.4 Resize Text: only that the viewport lets the page zoom; 1.4.12 Text Spacing: only spacing fixed with !important in style attributes",
		"1.4.10 Reflow: only horizontal scrolling of the page laid out 320 CSS px wide (data tables, images, maps, code, toolbars and what scrolls in its own container are exempt), not two-dimensional scrolling at 256 px high or content lost to clipping",
		"1.4.11 Non-text Contrast, 1.4.13 Content on Hover or Focus: not checked",
		"2.1.4 Character Key Shortcuts: not checked",
		"2.2.1 Timing Adjustable: only meta refresh (the rule engine), not session time-outs or timed offers",
		fmt.Sprintf("2.2.2 Pause, Stop, Hide: animated images (GIF, APNG, WebP), video, canvas and WebGL drawing, and script timers that first fire more than %d seconds after the page loads are not watched; a pause control is found by its name (pause, stop), not pressed to see that it works", int(motion.Window.Seconds())),
		"2.3.1 Three Flashes or Below Threshold: not checked",
		"2.4.2 Page Titled: only that a title exists, not whether it describes (ACT c4a8a4)",
		"2.4.4 Link Purpose (In Context): that link names exist, and that generic ones (\"click here\", \"read more\", \"learn more\", \"here\", \"more\", \"this link\") have context that names something, not whether other names describe",
		"2.4.3 Focus Order: only dialogs (focus in and back), Shift+Tab retracing Tab and positive tabindex moving elements out of the document's order, not whether the document's order follows the page's meaning",
		"2.4.5 Multiple Ways, 2.4.6 Headings and Labels, 3.2.3 Consistent Navigation, 3.2.4 Consistent Identification, 3.2.6 Consistent Help: not checked (they need a person's judgement or the whole site)",
		"2.4.11 Focus Not Obscured (Minimum): not checked",
		"2.5.1 Pointer Gestures, 2.5.2 Pointer Cancellation, 2.5.4 Motion Actuation, 2.5.7 Dragging Movements: not checked",
		"3.1.2 Language of Parts: only that lang attributes are valid, not that passages in another language have one",
		"3.2.1 On Focus, 3.2.2 On Input: not checked",
		"3.3.3 Error Suggestion: the form pass reads the errors an empty submission shows but does not judge whether they suggest a fix; wrong formats are not tried",
		"3.3.4 Error Prevention (Legal, Financial, Data), 3.3.7 Redundant Entry, 3.3.8 Accessible Authentication (Minimum): not checked (they need a whole checkout or sign-in)",
		"4.1.3 Status Messages: only the errors of an empty submission, not other status messages (added to cart, search results)",
		fmt.Sprintf("keyboard: dialogs opened by buttons that do not declare them are looked for on at most %d buttons a page, never on a form's submit button or one on the way to pay", keyboard.MaxUndeclared),
		"keyboard: controls inside frames (iframe) are not walked or judged; Tab passes through a frame",
		"forms: forms hidden when the page loads (in a closed dialog or a collapsed panel), method=\"dialog\" forms and forms with no field are not submitted",
	}
}
