package motion

import "boxd/engine/browser"

// hook runs before the page's own scripts. It wraps setTimeout,
// setInterval and requestAnimationFrame: a callback set by the page's
// own code (a stack frame from an http, https or file URL: not the
// audit's injected scripts) runs with the changes it makes to the page
// taken from a MutationObserver and counted for its source. A source is
// an interval; or the timeouts and animation frames a callback of a
// source sets (a chain); or, set outside any callback, the same code
// with the same delay. __boxdMotion.on = false stops the watch (the
// wrappers then only pass calls on).
const hook = `(() => {
  if (window.__boxdMotion) return;
  const W = window, oST = W.setTimeout, oCT = W.clearTimeout, oSI = W.setInterval, oCI = W.clearInterval, oRAF = W.requestAnimationFrame, oCAF = W.cancelAnimationFrame;
  const M = W.__boxdMotion = {on: true, keys: new Map(), timers: new Map(), frames: new Map(), setTimeout: (f, d) => oST.call(W, f, d)};
  let mo = null, cur = null, seq = 0;
  const fromPage = () => /^\s*at .*\b(https?|file):\/\//m.test((new Error().stack || "").split("\n").slice(2).join("\n"));
  const entry = (k, kind) => { let e = M.keys.get(k); if (!e) { e = {kind, scheduled: 0, fires: 0, changes: 0, text: 0, targets: []}; M.keys.set(k, e); } return e; };
  const observe = () => {
    if (mo || !document.documentElement) return;
    mo = new MutationObserver(() => {});
    mo.observe(document.documentElement, {subtree: true, childList: true, attributes: true, attributeOldValue: true, characterData: true, characterDataOldValue: true});
  };
  const shows = (el) => !!el && el.isConnected && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden";
  const note = (k, recs) => {
    const e = M.keys.get(k);
    e.fires++;
    for (const r of recs) {
      const el = r.target.nodeType === 1 ? r.target : r.target.parentElement;
      if (!el || el.closest("script,style,head")) continue;
      if (r.type === "attributes" && r.oldValue === r.target.getAttribute(r.attributeName)) continue;
      if (r.type === "characterData" && r.oldValue === r.target.nodeValue) continue;
      if (!shows(el) && !shows(el.parentElement)) continue;
      const text = r.type === "characterData" || (r.type === "childList" && [...r.addedNodes, ...r.removedNodes].every(n => n.nodeType === 3));
      e.changes++;
      if (text) e.text++;
      if (e.targets.length < 24 && !e.targets.includes(el)) e.targets.push(el);
    }
  };
  const call = (k, fn, self, args) => {
    observe();
    if (mo) mo.takeRecords();
    const prev = cur;
    cur = k;
    try { return fn.apply(self, args); } finally {
      cur = prev;
      if (mo && M.on) note(k, mo.takeRecords());
    }
  };
  const keyOf = (kind, fn, delay) => cur || kind + "|" + delay + "|" + String(fn).slice(0, 400);
  W.setTimeout = function (fn, delay, ...args) {
    if (!M.on || typeof fn !== "function" || !fromPage()) return oST.call(W, fn, delay, ...args);
    const k = keyOf("timeout", fn, delay | 0);
    entry(k, "timeout").scheduled++;
    const id = oST.call(W, function () { M.timers.delete(id); return call(k, fn, this, args); }, delay);
    M.timers.set(id, k);
    return id;
  };
  W.clearTimeout = function (id) { M.timers.delete(id); return oCT.call(W, id); };
  W.setInterval = function (fn, delay, ...args) {
    if (!M.on || typeof fn !== "function" || !fromPage()) return oSI.call(W, fn, delay, ...args);
    const k = cur || "interval|" + (++seq);
    const e = entry(k, "interval");
    e.scheduled += 2;
    const id = oSI.call(W, function () { return call(k, fn, this, args); }, delay);
    M.timers.set(id, k);
    return id;
  };
  W.clearInterval = function (id) { M.timers.delete(id); return oCI.call(W, id); };
  W.requestAnimationFrame = function (fn) {
    if (!M.on || typeof fn !== "function" || !fromPage()) return oRAF.call(W, fn);
    const k = keyOf("frames", fn, 0);
    entry(k, "frames").scheduled++;
    const id = oRAF.call(W, function (...a) { M.frames.delete(id); return call(k, fn, this, a); });
    M.frames.set(id, k);
    return id;
  };
  W.cancelAnimationFrame = function (id) { M.frames.delete(id); return oCAF.call(W, id); };
})();`

// check waits until the page has been open %d ms, stops the watch and
// lists what keeps moving, each with its pause control.
const check = `(async (windowMs) => {
  const M = window.__boxdMotion;
  if (!M) return null;
  const left = windowMs - performance.now();
  if (left > 0) await new Promise(r => M.setTimeout(r, left));
  M.on = false;
  const sel = ` + browser.SelectorJS + `;
  const shows = (el) => !!el && el.isConnected && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden";
  const found = [];
  // A script's repeating source that changed the page and is still set.
  const set = new Set([...M.timers.values(), ...M.frames.values()]);
  for (const [k, e] of M.keys) {
    const targets = e.targets.filter(t => t.isConnected);
    if (!e.changes || !targets.length || !set.has(k) || !(e.kind === "interval" || e.scheduled >= 2 || e.fires >= 2)) continue;
    found.push({source: e.kind === "frames" ? "frames" : "timer", what: e.text === e.changes ? "updates" : "moves", changes: e.changes, endless: false, targets});
  }
  // Running animations whose end is more than five seconds after their
  // start (not transitions, which end; not loading indicators, spinners
  // and skeleton placeholders, which the criterion allows while the page
  // loads).
  for (const a of document.getAnimations()) {
    if (a.playState !== "running" || (typeof CSSTransition !== "undefined" && a instanceof CSSTransition) || !a.effect) continue;
    const t = a.effect.getComputedTiming(), el = a.effect.target;
    if (!(t.endTime > 5000) || !shows(el)) continue;
    const r = el.getBoundingClientRect();
    if (r.width * r.height < 16 || el.closest('[role=progressbar],[aria-busy=true]') || /spin|load|busy|progress|skeleton|shimmer/i.test((el.className && el.className.baseVal !== undefined ? el.className.baseVal : el.className || "") + " " + el.id + " " + (el.getAttribute("aria-label") || ""))) continue;
    const props = new Set();
    for (const f of a.effect.getKeyframes ? a.effect.getKeyframes() : []) for (const p of Object.keys(f)) if (!["offset", "easing", "composite", "computedOffset"].includes(p)) props.add(p);
    const blink = props.size > 0 && [...props].every(p => p === "opacity" || p === "visibility");
    found.push({source: "animation", what: blink ? "blinks" : "moves", changes: 0, endless: t.endTime === Infinity, targets: [el]});
  }
  // Where it is: the element holding all its changes (not the page),
  // widened to the carousel, ticker or region around it.
  const common = (els) => {
    let c = els[0];
    while (c && !els.every(e => c.contains(e))) c = c.parentElement;
    return !c || c === document.body || c === document.documentElement ? els[0] : c;
  };
  const named = (c) => (c.getAttribute("aria-label") || c.getAttribute("title") || c.value || c.textContent ||
    [...c.querySelectorAll("img[alt],svg title")].map(x => x.getAttribute("alt") || x.textContent).join(" ") || "").replace(/\s+/g, " ").trim();
  // Pause, stop or hide it (WCAG names all three): a close button of an
  // announcement bar hides its ticker (in it or its parent only: further
  // up, a close button is another thing's).
  const pauseRE = /\b(pause|stop|freeze|halt)\b|\bturn off (the )?(animation|motion|autoplay|auto-?play)/i;
  const hideRE = /\b(hide|close|dismiss)\b/i;
  // A control for all the page's motion: "Stop all animations", "Pause
  // animations", "Reduce motion" (not one carousel's "Pause slideshow").
  const allRE = /\b(pause|stop|freeze)\b.*\b(all|every)\b|\b(pause|stop|freeze) (animations|motion|movement)\b|\breduced? motion\b/i;
  const controls = 'button,[role=button],a[href],input[type=button],input[type=checkbox],[role=switch],[role=checkbox]';
  const pageWide = [...document.querySelectorAll(controls)].find(c => shows(c) && allRE.test(named(c)));
  const out = new Map();
  for (const f of found) {
    let el = common(f.targets);
    const region = el.closest('[aria-roledescription],[role=region],[role=marquee],[role=timer],section,aside,[class*=carousel],[class*=slider],[class*=slideshow],[class*=ticker],[class*=marquee],[id*=carousel],[id*=slider],[id*=slideshow],[id*=ticker],[id*=marquee]');
    if (region && region !== document.body) el = region;
    const s = sel(el);
    if (out.has(s)) continue;
    let pause = null;
    for (let up = el, i = 0; up && up !== document.body && i < 4 && !pause; up = up.parentElement, i++) {
      pause = [...up.querySelectorAll(controls)].find(c => shows(c) && (pauseRE.test(named(c)) || (i < 2 && hideRE.test(named(c))))) || null;
    }
    pause = pause || pageWide || null;
    const inside = [...el.querySelectorAll('a[href],button,[role=button],input[type=submit]')].filter(shows).map(named).filter(Boolean).slice(0, 5);
    out.set(s, {selector: s, tag: el.tagName.toLowerCase(), name: (el.getAttribute("aria-label") || el.getAttribute("aria-roledescription") || el.innerText || "").replace(/\s+/g, " ").trim().slice(0, 80),
      source: f.source, what: f.what, changes: f.changes, endless: f.endless, pause: pause ? sel(pause) : "", pause_name: pause ? named(pause).slice(0, 80) : "", controls: inside});
  }
  return [...out.values()];
})(%d)`
