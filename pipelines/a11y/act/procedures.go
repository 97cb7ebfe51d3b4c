package act

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"boxd/engine/browser"
	"boxd/pipelines/a11y/axe"
	"boxd/pipelines/a11y/keyboard"
)

// procedure is how boxd answers one ACT rule: axe-core rules, and/or a
// check of its own (a script returning an outcome and a note).
type procedure struct {
	Name string
	Axe  []string
	// Own, when set, decides, given what the Axe rules found (nil
	// without them): boxd's own check, or a refinement of the rule
	// engine's answer where it reads the rule's applicability differently.
	Own     func(ctx context.Context, tab *browser.Tab, rs []axe.Result) (outcome, note string, err error)
	OwnName string
}

// procedures map the approved ACT rules to boxd's checks: the audit's
// rule engine (axe-core with boxd's corrections, see axe.refine) and its
// keyboard pass. The axe-core rules are the ones axe-core's own
// implementation report maps to each ACT rule, with summary-name for
// 2t702h, which it did not yet map.
var procedures = map[string]procedure{
	"674b10": {Axe: []string{"aria-roles"}},
	"6a7281": {Axe: []string{"aria-valid-attr-value"}},
	"5f99a7": {Axe: []string{"aria-valid-attr"}},
	"de46e4": {Axe: []string{"valid-lang"}},
	"m6b1q3": {Axe: []string{"button-name"}},
	"73f2c2": {Axe: []string{"autocomplete-valid"}},
	"97a4e1": {Axe: []string{"button-name", "aria-command-name"}},
	"46ca7f": {Axe: []string{"presentation-role-conflict"}},
	"e086e5": {Axe: []string{"label", "aria-input-field-name", "select-name"}},
	"bf051a": {Axe: []string{"html-lang-valid"}},
	"2779a5": {Axe: []string{"document-title"}},
	"59796f": {Axe: []string{"input-image-alt"}},
	"23a2a8": {Axe: []string{"image-alt", "role-img-alt"}},
	"c487ae": {Axe: []string{"link-name", "area-alt"}},
	"7d6734": {Axe: []string{"svg-img-alt"}},
	"307n5z": {Axe: []string{"nested-interactive"}},
	"a25f45": {Axe: []string{"td-headers-attr"}},
	"6cfa84": {Axe: []string{"aria-hidden-focus"}},
	"bc659a": {Axe: []string{"meta-refresh"}},
	"b4f0c3": {Axe: []string{"meta-viewport"}},
	"8fc3b6": {Axe: []string{"object-alt"}},
	"b5c3f8": {Axe: []string{"html-has-lang"}},
	"0ssw9k": {Axe: []string{"scrollable-region-focusable"}},
	"afw4f7": {Axe: []string{"color-contrast"}},
	"09o5cg": {Axe: []string{"color-contrast-enhanced"}},
	"bisz58": {Axe: []string{"meta-refresh-no-exceptions"}},
	"4e8ab6": {Axe: []string{"aria-required-attr"}},
	"akn7bn": {Axe: []string{"frame-focusable-content"}},
	"2t702h": {Axe: []string{"summary-name"}},
	"oj04fd": {Own: focusVisible, OwnName: "keyboard pass (focus visible)"},
	// A proposed rule, run because the keyboard pass answers it.
	"a1b64e": {Own: keyboardTrap, OwnName: "keyboard pass (traps)"},
	"24afc2": {Axe: []string{"avoid-inline-spacing"}},
	"9e45ec": {Axe: []string{"avoid-inline-spacing"}},
	"78fd32": {Axe: []string{"avoid-inline-spacing"}},
	"b33eff": {Axe: []string{"css-orientation-lock"}},
}

func procedureFor(id string) procedure {
	p, ok := procedures[id]
	if !ok {
		return procedure{}
	}
	if p.Name == "" {
		var parts []string
		if len(p.Axe) > 0 {
			names := slices.Clone(p.Axe)
			for i, r := range names {
				if slices.Contains(axe.Corrected, r) {
					names[i] += " (corrected by boxd)"
				}
			}
			parts = append(parts, "axe-core "+strings.Join(names, "+"))
		}
		if p.Own != nil {
			parts = append(parts, "boxd "+p.OwnName)
		}
		p.Name = strings.Join(parts, ", ")
	}
	return p
}

// decide loads url and answers the rule.
func (p procedure) decide(ctx context.Context, e *axe.Engine, tab *browser.Tab, url string) (outcome, note string, err error) {
	if err := load(tab, url); err != nil {
		return "", "", fmt.Errorf("load: %w", err)
	}
	var rs []axe.Result
	if len(p.Axe) > 0 {
		if rs, err = e.RunRules(tab, p.Axe); err != nil {
			return "", "", err
		}
	}
	if p.Own != nil {
		return p.Own(ctx, tab, rs)
	}
	return fromAxe(rs, p.Axe), "", nil
}

// focusVisible (oj04fd, "Element in sequential focus order has visible
// focus"): the audit's own keyboard pass; a stop whose focus changes
// nothing it can see (not the element's pixels, not an indicator
// elsewhere) fails.
func focusVisible(ctx context.Context, tab *browser.Tab, _ []axe.Result) (string, string, error) {
	kb, err := keyboard.Pass(ctx, tab, 40)
	if err != nil {
		return "", "", err
	}
	if len(kb.Stops) == 0 {
		return Inapplicable, "no tab stop", nil
	}
	for _, st := range kb.Stops {
		if !st.FocusVisible {
			return Failed, fmt.Sprintf("focus on %s changes %.1f%% of its pixels and %d elsewhere", st.Selector, 100*st.Change, st.ChangedElsewhere), nil
		}
	}
	return Passed, "", nil
}

// keyboardTrap (a1b64e, "Focusable element has no keyboard trap via
// standard navigation"): the keyboard pass's trap, on one element or
// among several that Escape does not leave.
func keyboardTrap(ctx context.Context, tab *browser.Tab, _ []axe.Result) (string, string, error) {
	kb, err := keyboard.Pass(ctx, tab, 40)
	if err != nil {
		return "", "", err
	}
	switch {
	case kb.Trap != nil:
		return Failed, fmt.Sprintf("trapped at %s %v", kb.Trap.Selector, kb.TrapCycle), nil
	case len(kb.Stops) == 0:
		return Inapplicable, "no tab stop", nil
	}
	return Passed, "", nil
}
