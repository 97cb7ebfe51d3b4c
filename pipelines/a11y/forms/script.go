package forms

import "boxd/engine/browser"

// lib is the form pass's page helpers (window.__boxdForms): which
// elements are fields, their labels, the forms to try (every <form> that
// shows and sends, and fields outside any form with a button of their
// own), and a snapshot of what the page shows.
const lib = `window.__boxdForms = {
  sel: ` + browser.SelectorJS + `,
  text(ids) { return (ids || "").split(/\s+/).filter(Boolean).map(id => { const e = document.getElementById(id); return e ? e.textContent.trim() : ""; }).filter(Boolean).join(" "); },
  label(f) {
    if (f.getAttribute("aria-labelledby")) return this.text(f.getAttribute("aria-labelledby"));
    if (f.getAttribute("aria-label")) return f.getAttribute("aria-label").trim();
    if (f.labels && f.labels.length) return [...f.labels].map(l => l.textContent.trim()).join(" ");
    return (f.getAttribute("title") || "").trim();
  },
  shows(el) { return el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden"; },
  // A field: an input, select or textarea a person fills, shown (a
  // field hidden outright is a honeypot or not in use), or a checkbox or
  // radio button whose label shows for it.
  isField(f) {
    if (!f.matches("input,select,textarea") || ["submit", "button", "reset", "hidden", "image"].includes(f.type) || f.disabled) return false;
    return this.shows(f) || (/^(checkbox|radio)$/.test(f.type) && [...(f.labels || [])].some(l => this.shows(l)));
  },
  textLike(f) { return f.tagName === "TEXTAREA" || (f.tagName === "INPUT" && !["checkbox", "radio", "range", "color", "file"].includes(f.type)); },
  fieldsOf(scope, orphan) {
    const all = orphan ? [...scope.querySelectorAll("input,select,textarea")].filter(f => !f.form) : [...scope.elements];
    return all.filter(f => this.isField(f));
  },
  button(el) {
    return el.matches('button,input[type=submit],input[type=button],input[type=image],[role=button]') && this.shows(el) && !el.disabled;
  },
  // The forms to try: each <form> that shows, has fields and sends (a
  // method="dialog" form only closes its dialog); then each group of
  // fields outside any form with a button of their own, the nearest
  // ancestor (up to 5 levels, not body) that holds a button.
  forms() {
    const out = [];
    for (const form of document.forms) {
      if (form.method === "dialog" || !this.shows(form) || !this.fieldsOf(form, false).length) continue;
      out.push({el: form, orphan: false, button: form.querySelector('[type=submit],button:not([type])')});
    }
    const groups = new Map();
    for (const f of document.querySelectorAll("input,select,textarea")) {
      if (f.form || f.closest("form") || !this.isField(f) || !this.textLike(f) || f.closest("[inert]")) continue;
      let box = f.parentElement;
      for (let i = 0; box && box !== document.body && i < 5; i++, box = box.parentElement) {
        const b = [...box.querySelectorAll('button,input[type=submit],input[type=button],input[type=image],[role=button]')].filter(b => !b.closest("form") && this.button(b));
        if (b.length) {
          if (!groups.has(box)) groups.set(box, b.find(x => f.compareDocumentPosition(x) & Node.DOCUMENT_POSITION_FOLLOWING) || b[0]);
          break;
        }
      }
    }
    for (const [box, button] of groups) out.push({el: box, orphan: true, button});
    return out;
  },
  // The form's own words say every field is required.
  allRequired(scope) { return /\b(all|every) (of the )?fields?( \w+)? (are|is) (required|mandatory)\b|\ball fields required\b/i.test(scope.innerText || ""); },
  search(scope, fields) {
    return !!(scope.closest("[role=search]") || scope.querySelector("[role=search]") || /search/i.test(scope.getAttribute("action") || "") ||
      (fields.length === 1 && (fields[0].type === "search" || /^(q|query|s|search|keywords?)$/i.test(fields[0].name || ""))));
  },
  // What the page shows: each shown element's own text, and each
  // field's look (its borders, outline, background and colours, and its
  // label's colours) and aria-invalid.
  snap(fields) {
    const texts = new Map();
    const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n; (n = w.nextNode());) {
      const t = n.nodeValue.trim(), el = n.parentElement;
      if (!t || !el || el.closest("script,style,noscript,template,option,select,textarea")) continue;
      texts.set(el, ((texts.get(el) || "") + " " + t).trim());
    }
    for (const el of [...texts.keys()]) if (!this.shows(el) || (el.checkVisibility && !el.checkVisibility({opacityProperty: true}))) texts.delete(el);
    const a = document.activeElement;
    const looks = fields.map(f => {
      // Read the field's look unfocused: focus styles are not errors.
      const focused = f === a;
      if (focused) f.blur();
      const cs = getComputedStyle(f), l = f.labels && f.labels[0], ls = l && getComputedStyle(l);
      const look = [cs.borderTopColor, cs.borderBottomColor, cs.borderLeftColor, cs.borderBottomWidth, cs.outlineStyle, cs.outlineColor, cs.backgroundColor, cs.color, cs.boxShadow, ls ? ls.color : "", ls ? ls.backgroundColor : ""].join("|");
      if (focused) f.focus({preventScroll: true});
      return look;
    });
    return {texts, looks, invalid: fields.map(f => f.getAttribute("aria-invalid") === "true")};
  },
};
true`

// scan lists the forms to try, with their fields.
const scan = `(() => {
  const F = __boxdForms;
  return F.forms().map(({el, orphan, button}) => {
    const fields = F.fieldsOf(el, orphan);
    return {selector: F.sel(el), orphan, button: button ? F.sel(button) : "", search: F.search(el, fields), all_required: F.allRequired(el),
      fields: fields.map(f => {
        const l = F.label(f);
        return {selector: F.sel(f), type: f.type || f.tagName.toLowerCase(), name: f.name || "", label: l,
          required: f.required || f.getAttribute("aria-required") === "true",
          required_marked: /\*|\brequired\b|\bmandatory\b|\(req\.?\)/i.test(l + " " + F.text(f.getAttribute("aria-describedby")))};
      })};
  });
})()`

// submit submits one form (or an orphan group's button) empty and reads
// what changed on the page: text that appeared or changed (near a field,
// tied to it, naming it, or elsewhere around the form or in a live
// region), each field's aria-invalid and look, and where focus went.
const submit = `(async (formSel, orphan, buttonSel) => {
  const F = __boxdForms, form = document.querySelector(formSel);
  if (!form) return null;
  const fields = F.fieldsOf(form, orphan);
  const live = () => [...document.querySelectorAll('[role=alert],[role=status],[aria-live]:not([aria-live=off])')].map(e => e.textContent.trim()).join(" ");
  if (document.activeElement && document.activeElement.blur) document.activeElement.blur();
  for (const f of fields) if ("value" in f && !["checkbox", "radio"].includes(f.type)) f.value = "";
  const beforeLive = live(), before = F.snap(fields), focusBefore = document.activeElement;
  const nativeOK = orphan || form.noValidate || !form.matches(":invalid");
  // Held in the page: a submission no handler of the page stopped is
  // noted and stopped here, after the page's own handlers (the window
  // hears the event last), so it never navigates.
  let sent = false;
  const hold = (e) => { if (e.target === form) { sent = !e.defaultPrevented; e.preventDefault(); } };
  window.addEventListener("submit", hold);
  // Wait for the page to settle: at least 300 ms, then until nothing has
  // changed for 150 ms, at most 1.2 s.
  let last = performance.now();
  const mo = new MutationObserver(() => { last = performance.now(); });
  mo.observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
  const btn = buttonSel ? document.querySelector(buttonSel) : null;
  if (btn) btn.click(); else if (!orphan) form.requestSubmit();
  const start = performance.now();
  await new Promise(r => setTimeout(r, 300));
  while (performance.now() - last < 150 && performance.now() - start < 1200) await new Promise(r => setTimeout(r, 50));
  mo.disconnect();
  window.removeEventListener("submit", hold);
  const after = F.snap(fields), a = document.activeElement;
  // Where an error may be: in the form, in the element just before it
  // (a summary above the form) unless that holds fields, in a live
  // region, or where focus went; not in what the page changes by itself
  // (a carousel's or a ticker's text: the motion check's watch saw a
  // repeating timer change it).
  const prev = form.previousElementSibling;
  const summary = prev && !prev.querySelector("input,select,textarea,form") ? prev : null;
  const restless = [];
  if (window.__boxdMotion) for (const e of window.__boxdMotion.keys.values()) if (e.kind === "interval" || e.fires >= 2) restless.push(...e.targets);
  const isLive = (el) => !!el.closest('[role=alert],[role=status],[aria-live]:not([aria-live=off])');
  const key = (f) => f.type === "radio" && f.name ? "radio:" + f.name : f;
  // A field's region: its highest ancestor, inside the form, that holds
  // no other field.
  const region = fields.map(f => {
    let r = f;
    while (r.parentElement && r.parentElement !== form && form.contains(r.parentElement) &&
      !fields.some(g => key(g) !== key(f) && r.parentElement.contains(g))) r = r.parentElement;
    return r;
  });
  const tiedIds = fields.map(f => ((f.getAttribute("aria-describedby") || "") + " " + (f.getAttribute("aria-errormessage") || "")).split(/\s+/).filter(Boolean));
  // A message names a field when it holds its label, its name, or a
  // word of its label (four letters or more, not a filler word); in a
  // form of one field, any message is about it.
  const filler = new Set(["your", "please", "enter", "this", "that", "field", "fields", "required", "optional", "with", "from", "here", "must", "valid"]);
  const names = (f) => {
    const l = F.label(f).toLowerCase().replace(/\*|\(required\)|required|:/g, " ").replace(/\s+/g, " ").trim();
    return [l, (f.name || "").toLowerCase(), ...l.split(/[^\p{L}\p{N}]+/u).filter(w => w.length >= 4 && !filler.has(w))].filter(w => w.length >= 3);
  };
  const fieldNames = fields.map(names);
  const messages = [], perField = fields.map(() => ({near: "", tied: "", named: ""}));
  for (const [el, t] of after.texts) {
    if (before.texts.get(el) === t || fields.includes(el)) continue;
    if (!(form.contains(el) || (summary && summary.contains(el)) || isLive(el) || (a && a !== document.body && (a.contains(el) || el.contains(a))))) continue;
    if (restless.some(r => r.contains(el) || el.contains(r))) continue;
    const m = {text: t.slice(0, 200), field: -1, live: isLive(el), tied: false};
    fields.forEach((f, i) => {
      if (tiedIds[i].some(id => { const d = document.getElementById(id); return d && (d === el || d.contains(el)); })) { m.field = i; m.tied = true; }
    });
    if (m.field < 0) m.field = region.findIndex(r => r.contains(el));
    // Or right after a field, in the form, with no other field or button
    // between them.
    if (m.field < 0 && form.contains(el)) {
      const marks = [...fields, ...form.querySelectorAll('button,input[type=submit],input[type=button],input[type=image],[role=button]')];
      const prev = marks.filter(x => x.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING && !x.contains(el))
        .sort((x, y) => x.compareDocumentPosition(y) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1).pop();
      if (prev) m.field = fields.indexOf(prev);
    }
    if (m.field >= 0) {
      const p = perField[m.field];
      if (m.tied) p.tied = (p.tied + " " + t).trim(); else p.near = (p.near + " " + t).trim();
    } else {
      const lt = t.toLowerCase();
      fields.forEach((f, i) => {
        if (fields.length === 1 || /\b(all|every|each)\b.*\bfields?\b/.test(lt) || fieldNames[i].some(w => lt.includes(w))) perField[i].named = perField[i].named || t.slice(0, 200);
      });
    }
    messages.push(m);
  }
  const afterLive = live();
  const res = fields.map((f, i) => {
    const invalid = f.getAttribute("aria-invalid") === "true" || (!nativeOK && f.matches(":invalid"));
    const tiedNow = (F.text(f.getAttribute("aria-describedby")) + " " + F.text(f.getAttribute("aria-errormessage"))).trim();
    const p = perField[i];
    let error = p.tied || (invalid ? tiedNow : "") || p.near || p.named || (!nativeOK ? f.validationMessage : "") || "";
    return {invalid, look_changed: before.looks[i] !== after.looks[i], error: error.trim().slice(0, 200),
      error_tied: !!(p.tied || (invalid && tiedNow)), error_near: !p.tied && !(invalid && tiedNow) && !!p.near, error_named: !p.tied && !p.near && !!p.named};
  });
  const fi = fields.indexOf(a);
  const flagged = (i) => res[i].invalid || res[i].look_changed || res[i].error !== "";
  let focus = "";
  if (a && a !== document.body && a !== focusBefore && a !== btn) {
    if (fi >= 0) focus = "field";
    else if (a.getAttribute("role") === "alert" || messages.length && [...after.texts.keys()].some(el => before.texts.get(el) !== after.texts.get(el) && (a.contains(el) || el.contains(a)))) focus = "message";
    else focus = "other";
  }
  const announced = (afterLive !== beforeLive && afterLive !== "") || focus === "message" ||
    (focus === "field" && flagged(fi) && (res[fi].invalid || res[fi].error_tied)) || !!(a && a.getAttribute && /error/i.test(a.className || "") && focus !== "");
  const changed = messages.length > 0 || res.some((r, i) => r.invalid !== before.invalid[i] || r.look_changed) || focus !== "" || !nativeOK;
  return {sent, native_blocked: !nativeOK, announced, changed, focus, messages, fields: res};
})`
