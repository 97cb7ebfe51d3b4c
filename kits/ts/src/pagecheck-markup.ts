// JSON-LD generation for a business (Go markup.go).

import { OrderedObject, obj, type SnipValue } from "./pagecheck-json.js";
import { LOCAL_BUSINESS_TYPES, RE_OPENING_HOURS, isAbsoluteURL } from "./pagecheck-schema.js";
import { asciiLower, findPlaceholder, runeCount, trimASCII, trimLeftChars } from "./pagecheck-text.js";

/**
 * What generateMarkup knows about a business. Strings are trimmed of ASCII
 * whitespace; an empty or absent string means "not given".
 */
export interface BusinessFacts {
  name?: string;
  type?: string;
  url?: string;
  telephone?: string;
  email?: string;
  street?: string;
  city?: string;
  region?: string;
  postal_code?: string;
  country?: string;
  opening_hours?: string[] | null;
  price_range?: string;
  same_as?: string[] | null;
  description?: string;
  logo?: string;
  latitude?: string;
  longitude?: string;
}

export const RE_EMAIL = /^[^@ \t\n\v\f\r]+@[^@ \t\n\v\f\r]+\.[^@ \t\n\v\f\r]+$/;
const RE_EMAIL_SPACE = /[ \t\n\v\f\r]/;
const RE_PHONE_CHAR = /^[0-9+ ().-]+$/;
const RE_DECIMAL = /^-?[0-9]+(?:\.[0-9]+)?$/;

/**
 * Whether RE_EMAIL matches s, in linear time. Alone, the regex is quadratic
 * when a character it forbids follows a long domain ("a@" + "." × n + " "):
 * the domain's first [^@…]+ gives back one character at a time, and at each
 * full stop the last one runs to the forbidden character again. A match
 * holds one "@" and none of the spaces, so a string with a space or a
 * second "@" is turned away first (the regex fails it too); in any other
 * the domain, if any, runs to the end of s and the regex settles at the
 * last full stop with a character after it, reading s about twice.
 */
export function isEmailAddress(s: string): boolean {
  return !RE_EMAIL_SPACE.test(s) && s.indexOf("@") === s.lastIndexOf("@") && RE_EMAIL.test(s);
}

/** An invalid fact: generateMarkup's error. */
export class MarkupError extends Error {}

function trimList(list: string[] | null | undefined): string[] {
  const out: string[] = [];
  for (const s of list ?? []) {
    const t = trimASCII(s);
    if (t !== "") out.push(t);
  }
  return out;
}

/** A decimal number from -max to max, compared on its digits. */
function coordOK(s: string, max: number): boolean {
  if (!RE_DECIMAL.test(s)) return false;
  const u = s.startsWith("-") ? s.slice(1) : s;
  const dot = u.indexOf(".");
  let ip = dot >= 0 ? u.slice(0, dot) : u;
  const frac = dot >= 0 ? u.slice(dot + 1) : "";
  ip = trimLeftChars(ip, "0");
  if (ip.length > 3) return false;
  const n = Number("0" + ip);
  return n < max || (n === max && frac.replace(/0/g, "") === "");
}

/**
 * Builds JSON-LD for a business; the result passes validateSchema without
 * errors. Invalid facts throw a MarkupError with Go's message, checked in
 * Go's order.
 */
export function generateMarkup(facts: BusinessFacts): OrderedObject {
  const tr = (s: string | undefined): string => trimASCII(s ?? "");
  const f = {
    name: tr(facts.name),
    type: tr(facts.type),
    url: tr(facts.url),
    telephone: tr(facts.telephone),
    email: tr(facts.email),
    street: tr(facts.street),
    city: tr(facts.city),
    region: tr(facts.region),
    postalCode: tr(facts.postal_code),
    country: tr(facts.country),
    priceRange: tr(facts.price_range),
    description: tr(facts.description),
    logo: tr(facts.logo),
    latitude: tr(facts.latitude),
    longitude: tr(facts.longitude),
  };
  const hours = trimList(facts.opening_hours);
  const same = trimList(facts.same_as);

  const fail = (msg: string): never => {
    throw new MarkupError(msg);
  };
  const ph = (field: string, v: string): void => {
    const label = findPlaceholder(v);
    if (label !== undefined) fail(`facts.${field} contains placeholder text ("${label}")`);
  };
  const absURL = (field: string, v: string): void => {
    ph(field, v);
    if (!isAbsoluteURL(v)) fail(`facts.${field} must be an absolute http(s) URL`);
  };

  if (f.name === "") fail("facts.name is required");
  ph("name", f.name);
  let typ = "";
  if (f.type !== "") {
    if (asciiLower(f.type) === "organization") typ = "Organization";
    for (const t of LOCAL_BUSINESS_TYPES) if (asciiLower(t) === asciiLower(f.type)) typ = t;
    if (typ === "") fail(`facts.type "${f.type}" is not Organization, LocalBusiness or a supported LocalBusiness subtype`);
  }
  if (f.url !== "") absURL("url", f.url);
  if (f.telephone !== "") {
    ph("telephone", f.telephone);
    let digits = 0;
    for (const c of f.telephone) if (c >= "0" && c <= "9") digits++;
    if (!RE_PHONE_CHAR.test(f.telephone) || digits < 7) {
      fail("facts.telephone must hold at least 7 digits and only digits, spaces and + ( ) . -");
    }
  }
  if (f.email !== "") {
    ph("email", f.email);
    if (!isEmailAddress(f.email)) fail("facts.email must be an email address");
  }
  for (const [k, v] of [["street", f.street], ["city", f.city], ["region", f.region], ["postal_code", f.postalCode],
    ["country", f.country]]) {
    ph(k, v);
  }
  hours.forEach((h, i) => {
    const field = `opening_hours[${i}]`;
    ph(field, h);
    if (!RE_OPENING_HOURS.test(h)) fail(`facts.${field} must look like "Mo-Fr 09:00-17:00"`);
  });
  if (f.priceRange !== "") {
    ph("price_range", f.priceRange);
    if (runeCount(f.priceRange) > 100) fail("facts.price_range must be at most 100 characters");
  }
  same.forEach((s, i) => absURL(`same_as[${i}]`, s));
  ph("description", f.description);
  if (f.logo !== "") absURL("logo", f.logo);
  if ((f.latitude === "") !== (f.longitude === "")) fail("facts.latitude and facts.longitude must be given together");
  if (f.latitude !== "") {
    if (!coordOK(f.latitude, 90)) fail("facts.latitude must be a decimal number from -90 to 90");
    if (!coordOK(f.longitude, 180)) fail("facts.longitude must be a decimal number from -180 to 180");
  }
  const hasAddress = f.street !== "" || f.city !== "" || f.region !== "" || f.postalCode !== "" || f.country !== "";
  const local = hours.length > 0 || f.priceRange !== "" || f.latitude !== "";
  if (typ === "" && hasAddress) typ = "LocalBusiness";
  else if (typ === "") typ = "Organization";
  if (typ !== "Organization" && !hasAddress) fail(`facts.type ${typ} needs an address (facts.street, facts.city, ...)`);
  if (typ === "Organization" && local) {
    fail("facts.opening_hours, facts.price_range, facts.latitude and facts.longitude need a LocalBusiness: give an address");
  }

  const o = obj("@context", "https://schema.org", "@type", typ, "name", f.name);
  const set = (k: string, v: string): void => {
    if (v !== "") o.push(k, v);
  };
  set("description", f.description);
  set("url", f.url);
  set("logo", f.logo);
  set("telephone", f.telephone);
  set("email", f.email);
  if (hasAddress) {
    const addr = obj("@type", "PostalAddress");
    for (const [k, v] of [["streetAddress", f.street], ["addressLocality", f.city], ["addressRegion", f.region],
      ["postalCode", f.postalCode], ["addressCountry", f.country]]) {
      if (v !== "") addr.push(k, v);
    }
    o.push("address", addr);
  }
  if (f.latitude !== "") o.push("geo", obj("@type", "GeoCoordinates", "latitude", f.latitude, "longitude", f.longitude));
  if (hours.length > 0) o.push("openingHours", hours as SnipValue[]);
  set("priceRange", f.priceRange);
  if (same.length > 0) o.push("sameAs", same as SnipValue[]);
  return o;
}
