// JSON-LD extraction and validation of the pagecheck port (Go checks.go,
// rules.go, messages.go, validate.go and jsonld.go).

import {
  JSONNumber,
  OrderedObject,
  obj,
  parseJSON,
  snippet,
  jsonQuote,
  type JSONError,
  type JSONObject,
  type JSONValue,
  type SnipValue,
} from "./pagecheck-json.js";
import {
  HtmlTokenKind,
  asciiLower,
  decodeEntities,
  extractText,
  findPlaceholder,
  runeCount,
  scanHTML,
  sortedKeys,
  tokenAttr,
  trimASCII,
  trimHTMLSpace,
  truncateRunes,
  wellFormed,
  type HtmlToken,
} from "./pagecheck-text.js";

// ---------------------------------------------------------------------------
// URL and date checks (checks.go)

// The Go expressions, except that "." (any character but LF in Go) is
// written [^\n] because JavaScript's "." also stops at CR, U+2028 and U+2029.
const RE_ABS_URL = /^[Hh][Tt][Tt][Pp][Ss]?:\/\/[^ \t\n\v\f\r/?#]+(?:[/?#][^ \t\n\v\f\r]*)?$/;
const RE_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;
const RE_HOST_PATH = /^[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\//;
export const RE_URL_PARTS = /^([Hh][Tt][Tt][Pp][Ss]?):\/\/([^/?#]*)([^?#]*)(\?[^#]*)?(#[^\n]*)?$/;
const RE_DATE =
  /^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:T([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.[0-9]+)?)?(Z|[+-][0-9]{2}(?::?[0-9]{2})?)?)?$/;
const RE_NUMBER = /^-?[0-9]+(?:\.[0-9]+)?$/;
const RE_PRICE = /^[0-9]+(?:\.[0-9]+)?$/;
const RE_CURRENCY = /^[A-Z]{3}$/;
const RE_TIME = /^(?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9])?$/;
export const RE_OPENING_HOURS =
  /^(?:Mo|Tu|We|Th|Fr|Sa|Su)(?:-(?:Mo|Tu|We|Th|Fr|Sa|Su))?(?:,(?:Mo|Tu|We|Th|Fr|Sa|Su)(?:-(?:Mo|Tu|We|Th|Fr|Sa|Su))?)*(?: (?:(?:[01][0-9]|2[0-3]):[0-5][0-9]|24:00)-(?:(?:[01][0-9]|2[0-3]):[0-5][0-9]|24:00))?$/;

/**
 * Whether s is an absolute http or https URL with a host: scheme (any letter
 * case) "://", a host without ASCII whitespace, "/", "?" and "#", then
 * optionally a path, query or fragment without ASCII whitespace. s is not
 * trimmed.
 */
export function isAbsoluteURL(s: string): boolean {
  return RE_ABS_URL.test(s);
}

function urlProblem(s: string): string {
  if (isAbsoluteURL(s)) return "";
  if (RE_SCHEME.test(s)) return "bad_url";
  return "relative_url";
}

/** A suggestion for the relative reference ref against the page URL base (Go resolveURL). */
export function resolveURL(base: string, ref: string): string {
  let scheme = "https";
  let origin = "https://<your-domain>";
  let path = "/";
  const m = RE_URL_PARTS.exec(base);
  if (m && isAbsoluteURL(base)) {
    scheme = asciiLower(m[1]);
    origin = scheme + "://" + m[2];
    path = m[3] || "/";
  }
  if (asciiLower(ref).startsWith("www.") || RE_HOST_PATH.test(ref)) return "https://" + ref;
  if (ref.startsWith("//")) return scheme + ":" + ref;
  if (ref.startsWith("/")) return origin + ref;
  if (ref.startsWith("?") || ref.startsWith("#")) return origin + path + ref;
  return origin + path.slice(0, path.lastIndexOf("/") + 1) + ref;
}

function daysIn(year: number, month: number): number {
  switch (month) {
    case 2:
      return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
    case 4:
    case 6:
    case 9:
    case 11:
      return 30;
  }
  return 31;
}

/** "" (valid), "bad_date" or "missing_timezone" for a trimmed date value. */
function dateProblem(s: string): string {
  const m = RE_DATE.exec(s);
  if (!m) return "bad_date";
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return "bad_date";
  if (m[4] === undefined) return "";
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  const second = m[6] !== undefined ? Number(m[6]) : 0;
  if (hour > 23 || minute > 59 || second > 59) return "bad_date";
  const tz = m[7];
  if (tz === undefined) return "missing_timezone";
  if (tz !== "Z") {
    const digits = tz.slice(1).replace(/:/g, "");
    const th = Number(digits.slice(0, 2));
    const tm = digits.length === 4 ? Number(digits.slice(2)) : 0;
    if (th > 23 || tm > 59) return "bad_date";
  }
  return "";
}

/** Whether s is a valid date or date-time (a date-time without timezone counts as valid). */
export function isISODate(s: string): boolean {
  return dateProblem(s) !== "bad_date";
}

// ---------------------------------------------------------------------------
// Rule tables (rules.go)

const FAMILY_LOCAL_BUSINESS = "LocalBusiness";
const FAMILY_ORGANIZATION = "Organization";
const FAMILY_ARTICLE = "Article";
const FAMILY_PRODUCT = "Product";
const FAMILY_FAQ_PAGE = "FAQPage";
const FAMILY_BREADCRUMB_LIST = "BreadcrumbList";
const FAMILY_WEBSITE = "WebSite";

const FAMILY_ORDER = [
  FAMILY_LOCAL_BUSINESS,
  FAMILY_ORGANIZATION,
  FAMILY_ARTICLE,
  FAMILY_PRODUCT,
  FAMILY_FAQ_PAGE,
  FAMILY_BREADCRUMB_LIST,
  FAMILY_WEBSITE,
];

/** LocalBusiness and the schema.org subtypes checked with its rules, sorted. */
export const LOCAL_BUSINESS_TYPES: readonly string[] = Object.freeze([
  "AccountingService", "AmusementPark", "AnimalShelter", "ArchiveOrganization", "ArtGallery",
  "Attorney", "AutoBodyShop", "AutoDealer", "AutoPartsStore", "AutoRental",
  "AutoRepair", "AutoWash", "AutomatedTeller", "AutomotiveBusiness", "Bakery",
  "BankOrCreditUnion", "BarOrPub", "BeautySalon", "BedAndBreakfast", "BikeStore",
  "BookStore", "BowlingAlley", "Brewery", "CafeOrCoffeeShop", "Campground",
  "Casino", "ChildCare", "ClothingStore", "ComedyClub", "ComputerStore",
  "ConvenienceStore", "DaySpa", "Dentist", "DepartmentStore", "Distillery",
  "DryCleaningOrLaundry", "Electrician", "ElectronicsStore", "EmergencyService", "EmploymentAgency",
  "EntertainmentBusiness", "ExerciseGym", "FastFoodRestaurant", "FinancialService", "FireStation",
  "Florist", "FoodEstablishment", "FurnitureStore", "GardenStore", "GasStation",
  "GeneralContractor", "GolfCourse", "GovernmentOffice", "GroceryStore", "HVACBusiness",
  "HairSalon", "HardwareStore", "HealthAndBeautyBusiness", "HealthClub", "HobbyShop",
  "HomeAndConstructionBusiness", "HomeGoodsStore", "Hospital", "Hostel", "Hotel",
  "HousePainter", "IceCreamShop", "InsuranceAgency", "InternetCafe", "JewelryStore",
  "LegalService", "Library", "LiquorStore", "LocalBusiness", "Locksmith",
  "LodgingBusiness", "MedicalBusiness", "MedicalClinic", "MensClothingStore", "MobilePhoneStore",
  "Motel", "MotorcycleDealer", "MotorcycleRepair", "MovieRentalStore", "MovieTheater",
  "MovingCompany", "MusicStore", "NailSalon", "NightClub", "Notary",
  "OfficeEquipmentStore", "Optician", "OutletStore", "PawnShop", "PetStore",
  "Pharmacy", "Physician", "Physiotherapy", "Plumber", "PoliceStation",
  "PostOffice", "ProfessionalService", "PublicSwimmingPool", "RadioStation", "RealEstateAgent",
  "RecyclingCenter", "Resort", "Restaurant", "RoofingContractor", "SelfStorage",
  "ShoeStore", "ShoppingCenter", "SkiResort", "SportingGoodsStore", "SportsActivityLocation",
  "SportsClub", "StadiumOrArena", "Store", "TattooParlor", "TelevisionStation",
  "TennisComplex", "TireShop", "TouristInformationCenter", "ToyStore", "TravelAgency",
  "VacationRental", "WholesaleStore", "Winery",
]);

/** Organization and the subtypes (not LocalBusiness ones) checked with its rules, sorted. */
export const ORGANIZATION_TYPES: readonly string[] = Object.freeze([
  "Airline", "CollegeOrUniversity", "Consortium", "Cooperative", "Corporation",
  "DanceGroup", "EducationalOrganization", "ElementarySchool", "GovernmentOrganization", "HighSchool",
  "LibrarySystem", "MedicalOrganization", "MiddleSchool", "MusicGroup", "NGO",
  "NewsMediaOrganization", "OnlineBusiness", "OnlineStore", "Organization", "PerformingGroup",
  "PoliticalParty", "Preschool", "Project", "ResearchOrganization", "School",
  "SearchRescueOrganization", "SportsOrganization", "SportsTeam", "TheaterGroup", "WorkersUnion",
]);

/** Article and its subtypes, sorted. */
export const ARTICLE_TYPES: readonly string[] = Object.freeze([
  "APIReference", "AdvertiserContentArticle", "AnalysisNewsArticle", "Article", "AskPublicNewsArticle",
  "BackgroundNewsArticle", "BlogPosting", "DiscussionForumPosting", "LiveBlogPosting", "MedicalScholarlyArticle",
  "NewsArticle", "OpinionNewsArticle", "Report", "ReportageNewsArticle", "ReviewNewsArticle",
  "SatiricalArticle", "ScholarlyArticle", "SocialMediaPosting", "TechArticle",
]);

/** Product and its subtypes, sorted. */
export const PRODUCT_TYPES: readonly string[] = Object.freeze([
  "Car", "IndividualProduct", "Motorcycle", "Product", "ProductModel", "SomeProducts", "Vehicle",
]);

const TYPE_FAMILY: Map<string, string> = (() => {
  const m = new Map<string, string>();
  for (const t of LOCAL_BUSINESS_TYPES) m.set(t, FAMILY_LOCAL_BUSINESS);
  for (const t of ORGANIZATION_TYPES) m.set(t, FAMILY_ORGANIZATION);
  for (const t of ARTICLE_TYPES) m.set(t, FAMILY_ARTICLE);
  for (const t of PRODUCT_TYPES) m.set(t, FAMILY_PRODUCT);
  m.set("FAQPage", FAMILY_FAQ_PAGE);
  m.set("BreadcrumbList", FAMILY_BREADCRUMB_LIST);
  m.set("WebSite", FAMILY_WEBSITE);
  return m;
})();

const KNOWN_TYPES_LOWER: Map<string, string> = (() => {
  const m = new Map<string, string>();
  for (const t of TYPE_FAMILY.keys()) m.set(asciiLower(t), t);
  return m;
})();

const AVAILABILITY_VALUES = [
  "BackOrder", "Discontinued", "InStock", "InStoreOnly", "LimitedAvailability", "MadeToOrder",
  "OnlineOnly", "OutOfStock", "PreOrder", "PreSale", "Reserved", "SoldOut",
];

const enum Level {
  Optional,
  Recommended,
  Required,
}

const enum Kind {
  Text,
  URL,
  Image,
  Date,
  Number,
  Price,
  Currency,
  Time,
  Hours,
  Availability,
  Object,
  Item,
  Position,
  Group,
}

/** What a string means where an object is expected. */
const enum TextMode {
  Err,
  OK,
  Warn,
}

interface Prop {
  name: string;
  level?: Level;
  kind: Kind;
  sub?: string;
  text?: TextMode;
  maxLen?: number;
  alts?: string[];
  unless?: string;
  exceptLast?: boolean;
  unlessNamed?: string;
  owner?: string;
}

interface Ruleset {
  key: string;
  name: string;
  expect: string;
  props: Prop[];
}

const R = Level.Required;
const REC = Level.Recommended;

const RULESET_TABLE: [string, string, string, Prop[]][] = [
  [FAMILY_LOCAL_BUSINESS, "LocalBusiness", "", [
    { name: "name", level: R, kind: Kind.Text },
    { name: "address", level: R, kind: Kind.Object, sub: "PostalAddress", text: TextMode.Warn },
    { name: "url", level: REC, kind: Kind.URL },
    { name: "telephone", level: REC, kind: Kind.Text },
    { name: "image", level: REC, kind: Kind.Image },
    { name: "openingHoursSpecification", level: REC, kind: Kind.Group, alts: ["openingHoursSpecification", "openingHours"] },
    { name: "geo", level: REC, kind: Kind.Object, sub: "GeoCoordinates" },
    { name: "priceRange", level: REC, kind: Kind.Text, maxLen: 100 },
    { name: "openingHours", kind: Kind.Hours },
    { name: "openingHoursSpecification", kind: Kind.Object, sub: "OpeningHoursSpecification" },
    { name: "logo", kind: Kind.Image },
    { name: "sameAs", kind: Kind.URL },
    { name: "email", kind: Kind.Text },
    { name: "description", kind: Kind.Text },
    { name: "aggregateRating", kind: Kind.Object, sub: "AggregateRating" },
  ]],
  [FAMILY_ORGANIZATION, "Organization", "", [
    { name: "name", level: R, kind: Kind.Text },
    { name: "url", level: REC, kind: Kind.URL },
    { name: "logo", level: REC, kind: Kind.Image },
    { name: "sameAs", kind: Kind.URL },
    { name: "address", kind: Kind.Object, sub: "PostalAddress", text: TextMode.OK },
    { name: "telephone", kind: Kind.Text },
    { name: "email", kind: Kind.Text },
    { name: "description", kind: Kind.Text },
  ]],
  [FAMILY_ARTICLE, "Article", "", [
    { name: "headline", level: R, kind: Kind.Text, maxLen: 110 },
    { name: "author", level: REC, kind: Kind.Object, sub: "Person", text: TextMode.OK },
    { name: "datePublished", level: REC, kind: Kind.Date },
    { name: "dateModified", level: REC, kind: Kind.Date },
    { name: "image", level: REC, kind: Kind.Image },
    { name: "publisher", kind: Kind.Object, sub: "Publisher" },
  ]],
  [FAMILY_PRODUCT, "Product", "", [
    { name: "name", level: R, kind: Kind.Text },
    { name: "offers", level: R, kind: Kind.Group, alts: ["offers", "review", "aggregateRating"] },
    { name: "image", level: REC, kind: Kind.Image },
    { name: "description", level: REC, kind: Kind.Text },
    { name: "brand", level: REC, kind: Kind.Object, sub: "Brand", text: TextMode.OK },
    { name: "offers", kind: Kind.Object, sub: "Offer" },
    { name: "aggregateRating", kind: Kind.Object, sub: "AggregateRating" },
    { name: "review", kind: Kind.Object, sub: "Review" },
  ]],
  [FAMILY_FAQ_PAGE, "FAQPage", "", [{ name: "mainEntity", level: R, kind: Kind.Object, sub: "Question" }]],
  [FAMILY_BREADCRUMB_LIST, "BreadcrumbList", "", [
    { name: "itemListElement", level: R, kind: Kind.Object, sub: "ListItem" },
  ]],
  [FAMILY_WEBSITE, "WebSite", "", [
    { name: "name", level: R, kind: Kind.Text },
    { name: "url", level: R, kind: Kind.URL },
    { name: "description", kind: Kind.Text },
    { name: "publisher", kind: Kind.Object, sub: "Publisher" },
  ]],
  ["PostalAddress", "PostalAddress", "", [
    { name: "streetAddress", level: REC, kind: Kind.Text },
    { name: "addressLocality", level: REC, kind: Kind.Text },
    { name: "postalCode", level: REC, kind: Kind.Text },
    { name: "addressCountry", level: REC, kind: Kind.Text },
    { name: "addressRegion", kind: Kind.Text },
  ]],
  ["GeoCoordinates", "GeoCoordinates", "", [
    { name: "latitude", level: R, kind: Kind.Number },
    { name: "longitude", level: R, kind: Kind.Number },
  ]],
  ["OpeningHoursSpecification", "OpeningHoursSpecification", "", [
    { name: "dayOfWeek", level: R, kind: Kind.Text },
    { name: "opens", level: R, kind: Kind.Time },
    { name: "closes", level: R, kind: Kind.Time },
  ]],
  ["AggregateRating", "AggregateRating", "", [
    { name: "ratingValue", level: R, kind: Kind.Number },
    { name: "ratingCount", level: R, kind: Kind.Group, alts: ["ratingCount", "reviewCount"] },
    { name: "ratingCount", kind: Kind.Number },
    { name: "reviewCount", kind: Kind.Number },
    { name: "bestRating", kind: Kind.Number },
    { name: "worstRating", kind: Kind.Number },
  ]],
  ["Person", "Person", "", [
    { name: "name", level: R, kind: Kind.Text },
    { name: "url", kind: Kind.URL },
  ]],
  ["Publisher", "Organization", "", [
    { name: "name", level: R, kind: Kind.Text },
    { name: "logo", kind: Kind.Image },
  ]],
  ["Brand", "Brand", "", [{ name: "name", level: R, kind: Kind.Text }]],
  ["Offer", "Offer", "", [
    { name: "price", level: R, kind: Kind.Price, unless: "priceSpecification" },
    { name: "priceCurrency", level: R, kind: Kind.Currency, unless: "priceSpecification" },
    { name: "availability", level: REC, kind: Kind.Availability },
    { name: "priceSpecification", kind: Kind.Object, sub: "PriceSpecification" },
    { name: "url", kind: Kind.URL },
    { name: "priceValidUntil", kind: Kind.Date },
  ]],
  ["AggregateOffer", "AggregateOffer", "", [
    { name: "lowPrice", level: R, kind: Kind.Price },
    { name: "priceCurrency", level: R, kind: Kind.Currency },
    { name: "highPrice", kind: Kind.Price },
    { name: "offerCount", kind: Kind.Number },
  ]],
  ["PriceSpecification", "PriceSpecification", "", [
    { name: "price", level: R, kind: Kind.Price },
    { name: "priceCurrency", level: R, kind: Kind.Currency },
  ]],
  ["Review", "Review", "", [
    { name: "author", level: REC, kind: Kind.Object, sub: "Person", text: TextMode.OK },
    { name: "reviewRating", level: REC, kind: Kind.Object, sub: "Rating" },
  ]],
  ["Rating", "Rating", "", [{ name: "ratingValue", level: R, kind: Kind.Number }]],
  ["Question", "Question", "Question", [
    { name: "name", level: R, kind: Kind.Text },
    { name: "acceptedAnswer", level: R, kind: Kind.Object, sub: "Answer" },
  ]],
  ["Answer", "Answer", "Answer", [{ name: "text", level: R, kind: Kind.Text }]],
  ["ListItem", "ListItem", "ListItem", [
    { name: "position", level: R, kind: Kind.Position },
    { name: "name", level: R, kind: Kind.Text, unlessNamed: "item" },
    { name: "item", level: R, kind: Kind.Item, exceptLast: true },
  ]],
];

const RULESETS: Map<string, Ruleset> = new Map(
  RULESET_TABLE.map(([key, name, expect, props]) => [key, { key, name, expect, props }]),
);

function ruleset(key: string): Ruleset {
  const rs = RULESETS.get(key);
  if (!rs) throw new Error("pagecheck: no ruleset " + key);
  return rs;
}

const EXAMPLES: Map<string, SnipValue> = new Map<string, SnipValue>([
  ["@context", "https://schema.org"],
  ["@type", "Organization"],
  ["@id", "https://www.example.com/#id"],
  ["name", "Your Business Name"],
  ["headline", "Article headline"],
  ["description", "One or two sentences that describe it."],
  ["url", "https://www.example.com/"],
  ["image", "https://www.example.com/photo.jpg"],
  ["logo", "https://www.example.com/logo.png"],
  ["sameAs", ["https://www.example.com/profile"]],
  ["telephone", "+1-212-555-0100"],
  ["email", "info@example.com"],
  ["priceRange", "$$"],
  ["openingHours", "Mo-Fr 09:00-17:00"],
  ["datePublished", "2024-01-05T08:00:00+00:00"],
  ["dateModified", "2024-02-05T09:20:00+00:00"],
  ["address", obj("@type", "PostalAddress", "streetAddress", "1 Harbor Street", "addressLocality", "Springfield",
    "postalCode", "12345", "addressCountry", "US")],
  ["streetAddress", "1 Harbor Street"],
  ["addressLocality", "Springfield"],
  ["addressRegion", "IL"],
  ["postalCode", "12345"],
  ["addressCountry", "US"],
  ["geo", obj("@type", "GeoCoordinates", "latitude", "40.7128", "longitude", "-74.0060")],
  ["latitude", "40.7128"],
  ["longitude", "-74.0060"],
  ["openingHoursSpecification", obj("@type", "OpeningHoursSpecification",
    "dayOfWeek", ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"], "opens", "09:00", "closes", "17:00")],
  ["dayOfWeek", "Monday"],
  ["opens", "09:00"],
  ["closes", "17:00"],
  ["author", obj("@type", "Person", "name", "Author Name", "url", "https://www.example.com/about")],
  ["publisher", obj("@type", "Organization", "name", "Publisher Name", "logo", "https://www.example.com/logo.png")],
  ["brand", obj("@type", "Brand", "name", "Brand Name")],
  ["offers", obj("@type", "Offer", "price", "19.99", "priceCurrency", "USD", "availability", "https://schema.org/InStock")],
  ["review", obj("@type", "Review", "author", obj("@type", "Person", "name", "Reviewer Name"), "reviewRating",
    obj("@type", "Rating", "ratingValue", "5"))],
  ["reviewRating", obj("@type", "Rating", "ratingValue", "5")],
  ["aggregateRating", obj("@type", "AggregateRating", "ratingValue", "4.6", "reviewCount", "89")],
  ["ratingValue", "4.6"],
  ["ratingCount", "89"],
  ["reviewCount", "89"],
  ["bestRating", "5"],
  ["worstRating", "1"],
  ["offerCount", "3"],
  ["price", "19.99"],
  ["lowPrice", "19.99"],
  ["highPrice", "49.99"],
  ["priceCurrency", "USD"],
  ["priceSpecification", obj("@type", "PriceSpecification", "price", "19.99", "priceCurrency", "USD")],
  ["availability", "https://schema.org/InStock"],
  ["priceValidUntil", "2025-12-31"],
  ["mainEntity", [obj("@type", "Question", "name", "Question text?",
    "acceptedAnswer", obj("@type", "Answer", "text", "Answer text."))]],
  ["acceptedAnswer", obj("@type", "Answer", "text", "Answer text.")],
  ["text", "Answer text."],
  ["itemListElement", [obj("@type", "ListItem", "position", 1, "name", "Home", "item", "https://www.example.com/")]],
  ["position", 1],
  ["item", "https://www.example.com/section/"],
  ["@graph", [obj("@type", "Organization", "name", "Your Business Name")]],
]);

const OWNER_EXAMPLES: Map<string, SnipValue> = new Map<string, SnipValue>([
  ["Person.name", "Author Name"],
  ["Publisher.name", "Publisher Name"],
  ["Brand.name", "Brand Name"],
  ["Product.name", "Product Name"],
  ["Question.name", "Question text?"],
  ["ListItem.name", "Home"],
  ["WebSite.name", "Your Site Name"],
]);

function exampleOf(owner: string, p: string): SnipValue {
  const v = OWNER_EXAMPLES.get(owner + "." + p);
  return v !== undefined ? v : exampleFor(p);
}

function exampleFor(p: string): SnipValue {
  const v = EXAMPLES.get(p);
  return v !== undefined ? v : "...";
}

// ---------------------------------------------------------------------------
// Finding texts (messages.go)

const SEVERITY_ERROR = "error";
const SEVERITY_WARNING = "warning";

const SCRIPT_SNIPPET = '<script type="application/ld+json">\n{\n  "@context": "https://schema.org"\n}\n</script>';
const CONTEXT_SNIPPET = snippet(obj("@context", "https://schema.org"));

function propSnippet(p: string, v: SnipValue): string {
  return snippet(obj(p, v));
}

function quoteList(alts: string[]): string {
  let s = '"' + alts[0] + '"';
  if (alts.length > 1) s += ' (or "' + alts.slice(1).join('", "') + '")';
  return s;
}

function article(name: string): string {
  return name !== "" && "AEIOU".includes(name[0]) ? "an" : "a";
}

function expected(p: Prop): string {
  switch (p.kind) {
    case Kind.Text:
      return "text";
    case Kind.URL:
      return "an absolute URL";
    case Kind.Image:
      return "an absolute URL or an ImageObject";
    case Kind.Date:
      return "an ISO 8601 date";
    case Kind.Number:
    case Kind.Price:
      return "a number";
    case Kind.Currency:
      return "a three-letter ISO 4217 currency code";
    case Kind.Time:
      return 'a time such as "09:00"';
    case Kind.Hours:
      return 'text such as "Mo-Fr 09:00-17:00"';
    case Kind.Availability:
      return "a schema.org ItemAvailability URL";
    case Kind.Object: {
      const name = ruleset(p.sub ?? "").name;
      return article(name) + " " + name + " object";
    }
    case Kind.Item:
      return 'an absolute URL or an object with "@id"';
    case Kind.Position:
      return "an integer";
  }
  return "a value";
}

type Msg = [string, string];

const msgMissing = (label: string, lvl: string, alts: string[]): Msg => [
  label + " is missing " + lvl + " property " + quoteList(alts) + ".",
  "Add " + quoteList(alts) + " to " + label + ".",
];
const msgMissingCurrency = (label: string): Msg => [
  label + ' has no "priceCurrency".',
  'Add "priceCurrency" with a three-letter ISO 4217 code.',
];
const msgEmpty = (p: string): Msg => [`Property "${p}" is empty.`, `Give "${p}" a real value or remove it.`];
const msgWrongType = (p: string, want: string): Msg => [`Property "${p}" should be ${want}.`, `Change "${p}" to ${want}.`];
const FIX_ABS_URL = "Use an absolute URL with https:// and the host.";
const msgRelativeURL = (p: string, v: string): Msg => [`Property "${p}" is a relative URL ("${v}").`, FIX_ABS_URL];
const msgBadURL = (p: string, v: string): Msg => [`Property "${p}" is not an http(s) URL ("${v}").`, FIX_ABS_URL];
const msgBadDate = (p: string, v: string): Msg => [
  `Property "${p}" is not an ISO 8601 date ("${v}").`,
  "Write the date as YYYY-MM-DD or YYYY-MM-DDThh:mm:ss with a timezone offset.",
];
const msgMissingTimezone = (p: string, v: string): Msg => [
  `Property "${p}" has a time but no timezone ("${v}").`,
  'Add "Z" or an offset such as "+01:00" after the time.',
];
const msgBadNumber = (p: string, v: string): Msg => [
  `Property "${p}" is not a number ("${v}").`,
  `Write "${p}" as a plain decimal number.`,
];
const FIX_BAD_PRICE =
  'Write the price as digits with an optional decimal point, without currency symbols or thousands separators, and put the currency in "priceCurrency".';
const msgBadPrice = (p: string, v: string): Msg => [`Property "${p}" is not a plain price ("${v}").`, FIX_BAD_PRICE];
const msgNegativePrice = (p: string): Msg => [`Property "${p}" is negative.`, FIX_BAD_PRICE];
const msgBadCurrency = (p: string, v: string): Msg => [
  `Property "${p}" is not a three-letter ISO 4217 code ("${v}").`,
  'Use an upper-case ISO 4217 code such as "USD" or "EUR".',
];
const msgBadTime = (p: string, v: string): Msg => [
  `Property "${p}" is not a time ("${v}").`,
  "Write the time as hh:mm or hh:mm:ss (24-hour clock).",
];
const msgBadHours = (p: string, v: string): Msg => [
  `Property "${p}" does not follow the openingHours format ("${v}").`,
  'Use two-letter days and 24-hour times such as "Mo-Fr 09:00-17:00", or use openingHoursSpecification.',
];
const msgBadEnum = (p: string, v: string): Msg => [
  `Property "${p}" is not a schema.org ItemAvailability value ("${v}").`,
  'Use a value such as "https://schema.org/InStock" or "https://schema.org/OutOfStock".',
];
const msgTooLong = (p: string, n: number, max: number): Msg => [
  `Property "${p}" is ${n} characters; keep it to ${max}.`,
  `Shorten "${p}" to at most ${max} characters.`,
];
const FIX_POSITIONS = "Number the breadcrumb items 1, 2, 3, ... in list order.";
const msgBadPosition = (p: string): Msg => [`Property "${p}" should be a whole number of at least 1.`, FIX_POSITIONS];
const msgPositionOrder = (n: number): Msg => [`Breadcrumb item ${n} does not have position ${n}.`, FIX_POSITIONS];
const msgMissingType = (): Msg => [
  'The object has no "@type".',
  'Add "@type" with the most specific schema.org type, for example "LocalBusiness", "Organization", "Article" or "Product".',
];
const msgNestedMissingType = (p: string, want: string): Msg => [
  `The object in "${p}" has no "@type"; expected "${want}".`,
  `Add "@type": "${want}".`,
];
const msgNestedWrongType = (p: string, got: string, want: string): Msg => [
  `The object in "${p}" has "@type" "${got}"; expected "${want}".`,
  `Set "@type" to "${want}".`,
];
const msgBadType = (): Msg => [
  '"@type" must be a non-empty string or an array of non-empty strings.',
  'Set "@type" to a schema.org type name.',
];
const msgTypeCase = (got: string, want: string): Msg => [
  `"@type" "${got}" has the wrong letter case; schema.org type names are case-sensitive.`,
  `Write "${want}".`,
];
const msgMissingContext = (): Msg => ['The object has no "@context".', 'Add "@context": "https://schema.org".'];
const msgBadContext = (): Msg => ['"@context" does not point to schema.org.', 'Set "@context" to "https://schema.org".'];
const msgNotObject = (): Msg => [
  "The JSON-LD item is not an object.",
  'Make each item a JSON object with "@context" and "@type".',
];
const msgPlaceholder = (p: string, label: string): Msg => [
  `Property "${p}" contains placeholder text ("${label}").`,
  "Replace the placeholder with the real value; placeholder data must never be published.",
];
const msgCommentedOut = (): Msg => [
  "The JSON-LD block is inside an HTML comment; crawlers ignore it.",
  "Remove the comment markers around the script element if this markup should be used.",
];
const msgEntityEncoded = (): Msg => [
  "The JSON-LD block is HTML-entity-encoded; crawlers read script contents literally and see invalid JSON.",
  "Write the JSON with plain quotes and characters inside the script element, without HTML entities.",
];

// ---------------------------------------------------------------------------
// Validation (validate.go)

/** One problem found in a JSON-LD object. */
export interface SchemaFinding {
  severity: string;
  code: string;
  path: string;
  property: string;
  message: string;
  fix: string;
  snippet: string;
}

/** The result of checking one JSON-LD object. */
export interface SchemaValidation {
  type: string;
  errors: SchemaFinding[];
  warnings: SchemaFinding[];
}

interface NodeOpts {
  base?: string;
  ctx?: JSONValue;
  hasCtx?: boolean;
  skipGraph?: boolean;
  blockFlags?: SchemaFinding[];
  blockErrors?: SchemaFinding[];
}

interface Position {
  idx: number;
  count: number;
  prop: string;
}

function finding(sev: string, code: string, path: string, property: string, msg: Msg, snip: string): SchemaFinding {
  return { severity: sev, code, path, property, message: msg[0], fix: msg[1], snippet: snip };
}

function isObject(v: JSONValue | undefined): v is JSONObject {
  return v instanceof Map;
}

const RE_PLAIN_KEY = /^[A-Za-z0-9@_$:-]+$/;

/** Appends a key to a path: ".key" for plain keys, else ["key"]. */
function pathKey(path: string, key: string): string {
  if (RE_PLAIN_KEY.test(key)) return path + "." + key;
  return path + "[" + jsonQuote(key) + "]";
}

function pathIndex(path: string, i: number): string {
  return path + "[" + i + "]";
}

function contextOK(c: JSONValue | undefined): boolean {
  if (typeof c === "string") {
    let s = trimASCII(c);
    if (s.endsWith("/")) s = s.slice(0, -1);
    return s === "https://schema.org" || s === "http://schema.org";
  }
  if (isObject(c)) {
    const voc = c.get("@vocab");
    if (typeof voc === "string") return contextOK(voc);
    return false;
  }
  if (Array.isArray(c)) return c.some((e) => contextOK(e));
  return false;
}

const TYPE_PREFIXES = ["https://schema.org/", "http://schema.org/", "schema:"];

function typeNames(t: JSONValue | undefined): string[] | null {
  const one = (s: string): string => {
    s = trimASCII(s);
    for (const p of TYPE_PREFIXES) if (s.startsWith(p)) s = s.slice(p.length);
    return s;
  };
  if (typeof t === "string") {
    const s = one(t);
    return s !== "" ? [s] : null;
  }
  if (Array.isArray(t)) {
    if (t.length === 0) return null;
    const out: string[] = [];
    for (const e of t) {
      if (typeof e !== "string") return null;
      const n = one(e);
      if (n === "") return null;
      out.push(n);
    }
    return out;
  }
  return null;
}

function pickFamily(types: string[]): [string, string] {
  let best = FAMILY_ORDER.length;
  let family = "";
  let reported = "";
  for (const t of types) {
    const f = TYPE_FAMILY.get(t);
    if (f === undefined) continue;
    FAMILY_ORDER.forEach((ff, i) => {
      if (ff === f && i < best) {
        best = i;
        family = f;
        reported = t;
      }
    });
  }
  if (family === "" && types.length > 0) reported = types[0];
  return [family, reported];
}

function nestedLabel(m: JSONObject, fallback: string): string {
  const names = typeNames(m.get("@type"));
  return names ? names[0] : fallback;
}

function present(m: JSONObject, k: string): boolean {
  const v = m.get(k);
  return v !== undefined && v !== null;
}

function hasName(v: JSONValue | undefined): boolean {
  return isObject(v) && present(v, "name");
}

/** A JSON number's value (Go numberValue). */
function numberValue(v: JSONValue | undefined): number | undefined {
  if (v instanceof JSONNumber) return Number(v.text);
  return undefined;
}

function exampleDate(p: string): SnipValue {
  if (p === "datePublished" || p === "dateModified" || p === "priceValidUntil") return exampleFor(p);
  return exampleFor("datePublished");
}

class Validator {
  errs: SchemaFinding[] = [];
  warns: SchemaFinding[] = [];
  constructor(readonly base: string) {}

  add(sev: string, code: string, path: string, property: string, msg: Msg, snip: string): void {
    const f = finding(sev, code, path, property, msg, snip);
    if (sev === SEVERITY_ERROR) this.errs.push(f);
    else this.warns.push(f);
  }

  checkTop(m: JSONObject, path: string, o: NodeOpts): string {
    let ctx = m.get("@context");
    let has = m.has("@context");
    let ctxPath = pathKey(path, "@context");
    if (!has && o.hasCtx) {
      ctx = o.ctx ?? null;
      has = true;
      ctxPath = path;
    }
    if (!has) {
      this.add(SEVERITY_ERROR, "missing_context", path, "@context", msgMissingContext(), CONTEXT_SNIPPET);
    } else if (!contextOK(ctx)) {
      this.add(SEVERITY_ERROR, "bad_context", ctxPath, "@context", msgBadContext(), CONTEXT_SNIPPET);
    }
    if (!m.has("@type")) {
      this.add(SEVERITY_ERROR, "missing_type", path, "@type", msgMissingType(), propSnippet("@type", "Organization"));
      return "";
    }
    const types = typeNames(m.get("@type"));
    if (!types) {
      this.add(SEVERITY_ERROR, "bad_type", pathKey(path, "@type"), "@type", msgBadType(), propSnippet("@type", "Organization"));
      return "";
    }
    const [family, reported] = pickFamily(types);
    if (family === "") {
      for (const t of types) {
        const want = KNOWN_TYPES_LOWER.get(asciiLower(t));
        if (want !== undefined) {
          this.add(SEVERITY_ERROR, "type_case", pathKey(path, "@type"), "@type", msgTypeCase(t, want), propSnippet("@type", want));
          break;
        }
      }
      return reported;
    }
    this.checkRuleset(m, path, ruleset(family), reported, { idx: 0, count: 1, prop: "" });
    return reported;
  }

  checkRuleset(m: JSONObject, path: string, rs: Ruleset, label: string, pos: Position): void {
    if (rs.expect !== "") {
      const names = typeNames(m.get("@type"));
      if (!names) {
        this.add(SEVERITY_ERROR, "missing_type", path, "@type", msgNestedMissingType(pos.prop, rs.expect),
          propSnippet("@type", rs.expect));
      } else if (!names.includes(rs.expect)) {
        this.add(SEVERITY_ERROR, "wrong_type", pathKey(path, "@type"), "@type",
          msgNestedWrongType(pos.prop, names.join(", "), rs.expect), propSnippet("@type", rs.expect));
      }
    }
    for (const p0 of rs.props) {
      const p: Prop = { ...p0, owner: rs.key };
      if (p.kind === Kind.Group) {
        const found = (p.alts ?? []).some((a) => present(m, a));
        if (!found) this.missing(path, label, p);
        continue;
      }
      if (!m.has(p.name)) {
        if (p.unless && present(m, p.unless)) {
          // not missing
        } else if (p.exceptLast && pos.idx === pos.count - 1) {
          // not missing
        } else if (p.unlessNamed && hasName(m.get(p.unlessNamed))) {
          // not missing
        } else {
          this.missing(path, label, p);
        }
        continue;
      }
      const val = m.get(p.name) ?? null;
      if (p.kind === Kind.Position) {
        this.checkElem(val, pathKey(path, p.name), p, pos);
        continue;
      }
      this.checkValue(val, pathKey(path, p.name), p);
    }
  }

  missing(path: string, label: string, p: Prop): void {
    const alts = p.alts ?? [p.name];
    const snip = propSnippet(alts[0], exampleOf(p.owner ?? "", alts[0]));
    switch (p.level) {
      case Level.Required:
        if (alts[0] === "priceCurrency") {
          this.add(SEVERITY_ERROR, "missing_currency", path, "priceCurrency", msgMissingCurrency(label), snip);
          return;
        }
        this.add(SEVERITY_ERROR, "missing_required", path, alts[0], msgMissing(label, "required", alts), snip);
        break;
      case Level.Recommended:
        this.add(SEVERITY_WARNING, "missing_recommended", path, alts[0], msgMissing(label, "recommended", alts), snip);
        break;
    }
  }

  empty(path: string, p: Prop): void {
    const sev = p.level === Level.Required ? SEVERITY_ERROR : SEVERITY_WARNING;
    this.add(sev, "empty_value", path, p.name, msgEmpty(p.name), propSnippet(p.name, exampleOf(p.owner ?? "", p.name)));
  }

  wrongType(path: string, p: Prop, sev: string): void {
    this.add(sev, "wrong_type", path, p.name, msgWrongType(p.name, expected(p)),
      propSnippet(p.name, exampleOf(p.owner ?? "", p.name)));
  }

  checkValue(val: JSONValue, path: string, p: Prop): void {
    if (val === null) {
      this.empty(path, p);
    } else if (Array.isArray(val)) {
      if (val.length === 0) {
        this.empty(path, p);
        return;
      }
      val.forEach((e, i) => this.checkElem(e, pathIndex(path, i), p, { idx: i, count: val.length, prop: p.name }));
    } else {
      this.checkElem(val, path, p, { idx: 0, count: 1, prop: p.name });
    }
  }

  checkElem(el: JSONValue, path: string, p: Prop, pos: Position): void {
    if (el === null) {
      this.empty(path, p);
      return;
    }
    if (Array.isArray(el)) {
      this.wrongType(path, p, SEVERITY_ERROR);
      return;
    }
    let isStr = typeof el === "string";
    let t = trimASCII(typeof el === "string" ? el : "");
    const isObj = isObject(el);
    const m: JSONObject = isObj ? el : new Map();
    const isNum = numberValue(el) !== undefined;
    const owner = p.owner ?? "";
    switch (p.kind) {
      case Kind.Text: {
        if (isObj) {
          const val = m.get("@value");
          if (typeof val === "string") {
            t = trimASCII(val);
            isStr = true;
          }
        }
        if (isStr && t === "") {
          this.empty(path, p);
        } else if (isStr) {
          const n = runeCount(t);
          if (p.maxLen && n > p.maxLen) {
            this.add(SEVERITY_WARNING, "too_long", path, p.name, msgTooLong(p.name, n, p.maxLen),
              propSnippet(p.name, truncateRunes(t, p.maxLen)));
          }
        } else if (isNum) {
          this.wrongType(path, p, SEVERITY_WARNING);
        } else {
          this.wrongType(path, p, SEVERITY_ERROR);
        }
        break;
      }
      case Kind.URL:
        if (!isStr) {
          this.wrongType(path, p, SEVERITY_ERROR);
          return;
        }
        this.checkURL(t, path, p);
        break;
      case Kind.Image:
        if (isStr) {
          this.checkURL(t, path, p);
        } else if (isObj) {
          for (const k of ["url", "contentUrl"]) {
            if (m.has(k)) {
              this.checkValue(m.get(k) ?? null, pathKey(path, k), { name: k, level: Level.Recommended, kind: Kind.URL });
              return;
            }
          }
          this.add(SEVERITY_WARNING, "missing_recommended", path, "url",
            msgMissing(nestedLabel(m, "ImageObject"), "recommended", ["url"]), propSnippet("url", exampleFor("image")));
        } else {
          this.wrongType(path, p, SEVERITY_ERROR);
        }
        break;
      case Kind.Date: {
        if (!isStr) {
          this.wrongType(path, p, SEVERITY_ERROR);
          return;
        }
        if (t === "") {
          this.empty(path, p);
          break;
        }
        const dp = dateProblem(t);
        if (dp === "bad_date") {
          this.add(SEVERITY_ERROR, "bad_date", path, p.name, msgBadDate(p.name, t), propSnippet(p.name, exampleDate(p.name)));
        } else if (dp === "missing_timezone") {
          this.add(SEVERITY_WARNING, "missing_timezone", path, p.name, msgMissingTimezone(p.name, t),
            propSnippet(p.name, t + "+00:00"));
        }
        break;
      }
      case Kind.Number:
        if (isNum) {
          // fine
        } else if (isStr && t === "") {
          this.empty(path, p);
        } else if (isStr && !RE_NUMBER.test(t)) {
          this.add(SEVERITY_ERROR, "bad_number", path, p.name, msgBadNumber(p.name, t),
            propSnippet(p.name, exampleOf(owner, p.name)));
        } else if (!isStr) {
          this.wrongType(path, p, SEVERITY_ERROR);
        }
        break;
      case Kind.Price:
        if (isNum) {
          if ((numberValue(el) ?? 0) < 0) {
            this.add(SEVERITY_ERROR, "bad_price", path, p.name, msgNegativePrice(p.name),
              propSnippet(p.name, exampleOf(owner, p.name)));
          }
        } else if (isStr && t === "") {
          this.empty(path, p);
        } else if (isStr && !RE_PRICE.test(t)) {
          this.add(SEVERITY_ERROR, "bad_price", path, p.name, msgBadPrice(p.name, t),
            propSnippet(p.name, exampleOf(owner, p.name)));
        } else if (!isStr) {
          this.wrongType(path, p, SEVERITY_ERROR);
        }
        break;
      case Kind.Currency:
      case Kind.Time:
      case Kind.Hours:
      case Kind.Availability:
        if (!isStr) {
          this.wrongType(path, p, SEVERITY_ERROR);
          return;
        }
        if (t === "") {
          this.empty(path, p);
          return;
        }
        this.checkFormat(t, path, p);
        break;
      case Kind.Object:
        if (isObj) {
          let sub = p.sub ?? "";
          if (sub === "Offer") {
            const names = typeNames(m.get("@type"));
            if (names && names.includes("AggregateOffer")) sub = "AggregateOffer";
          }
          const rs = ruleset(sub);
          this.checkRuleset(m, path, rs, nestedLabel(m, rs.name), pos);
        } else if (isStr && p.text === TextMode.OK) {
          if (t === "") this.empty(path, p);
        } else if (isStr && p.text === TextMode.Warn) {
          if (t === "") this.empty(path, p);
          else this.wrongType(path, p, SEVERITY_WARNING);
        } else {
          this.wrongType(path, p, SEVERITY_ERROR);
        }
        break;
      case Kind.Item:
        if (isStr) {
          this.checkURL(t, path, p);
        } else if (isObj) {
          if (m.has("@id")) {
            this.checkValue(m.get("@id") ?? null, pathKey(path, "@id"), { name: "@id", level: Level.Required, kind: Kind.URL });
            return;
          }
          this.add(SEVERITY_ERROR, "missing_required", path, "@id", msgMissing(nestedLabel(m, "Thing"), "required", ["@id"]),
            propSnippet("@id", exampleFor("item")));
        } else {
          this.wrongType(path, p, SEVERITY_ERROR);
        }
        break;
      case Kind.Position: {
        const f = numberValue(el);
        if (f === undefined) {
          this.wrongType(path, p, SEVERITY_ERROR);
          return;
        }
        const want = pos.idx + 1;
        if (!Number.isFinite(f) || f !== Math.trunc(f) || f < 1) {
          this.add(SEVERITY_ERROR, "bad_position", path, p.name, msgBadPosition(p.name), propSnippet(p.name, want));
        } else if (f !== want) {
          this.add(SEVERITY_WARNING, "position_order", path, p.name, msgPositionOrder(want), propSnippet(p.name, want));
        }
        break;
      }
    }
  }

  checkFormat(t: string, path: string, p: Prop): void {
    switch (p.kind) {
      case Kind.Currency:
        if (!RE_CURRENCY.test(t)) {
          this.add(SEVERITY_ERROR, "bad_currency", path, p.name, msgBadCurrency(p.name, t), propSnippet(p.name, "USD"));
        }
        break;
      case Kind.Time:
        if (!RE_TIME.test(t)) {
          this.add(SEVERITY_ERROR, "bad_time", path, p.name, msgBadTime(p.name, t),
            propSnippet(p.name, exampleOf(p.owner ?? "", p.name)));
        }
        break;
      case Kind.Hours:
        if (!RE_OPENING_HOURS.test(t)) {
          this.add(SEVERITY_WARNING, "bad_opening_hours", path, p.name, msgBadHours(p.name, t),
            propSnippet(p.name, "Mo-Fr 09:00-17:00"));
        }
        break;
      case Kind.Availability: {
        let name = t;
        for (const pre of TYPE_PREFIXES) if (name.startsWith(pre)) name = name.slice(pre.length);
        if (!AVAILABILITY_VALUES.includes(name)) {
          this.add(SEVERITY_WARNING, "bad_enum", path, p.name, msgBadEnum(p.name, t),
            propSnippet(p.name, "https://schema.org/InStock"));
        }
        break;
      }
    }
  }

  checkURL(t: string, path: string, p: Prop): void {
    if (t === "") {
      this.empty(path, p);
      return;
    }
    switch (urlProblem(t)) {
      case "relative_url":
        this.add(SEVERITY_ERROR, "relative_url", path, p.name, msgRelativeURL(p.name, t), propSnippet(p.name, resolveURL(this.base, t)));
        break;
      case "bad_url":
        this.add(SEVERITY_ERROR, "bad_url", path, p.name, msgBadURL(p.name, t),
          propSnippet(p.name, exampleOf(p.owner ?? "", p.name)));
        break;
    }
  }

  /** Reports every string holding placeholder text, object keys in sorted order. */
  scanPlaceholders(val: JSONValue, path: string, property: string, skipGraph: boolean): void {
    if (typeof val === "string") {
      const label = findPlaceholder(val);
      if (label !== undefined) {
        this.add(SEVERITY_ERROR, "placeholder", path, property, msgPlaceholder(property, label),
          propSnippet(property, "<real value>"));
      }
    } else if (isObject(val)) {
      for (const k of sortedKeys(val)) {
        if (skipGraph && k === "@graph") continue;
        this.scanPlaceholders(val.get(k) ?? null, pathKey(path, k), k, false);
      }
    } else if (Array.isArray(val)) {
      val.forEach((e, i) => this.scanPlaceholders(e, pathIndex(path, i), property, false));
    }
  }
}

function validateNode(node: JSONValue, path: string, o: NodeOpts): SchemaValidation {
  const v = new Validator(o.base ?? "");
  for (const f of o.blockErrors ?? []) v.errs.push({ ...f });
  for (const f of o.blockFlags ?? []) v.warns.push({ ...f });
  let typ = "";
  if (!isObject(node)) {
    v.add(SEVERITY_ERROR, "not_object", path, "", msgNotObject(),
      snippet(obj("@context", "https://schema.org", "@type", "Organization", "name", "Your Business Name")));
  } else {
    typ = v.checkTop(node, path, o);
    v.scanPlaceholders(node, path, "", o.skipGraph ?? false);
  }
  return { type: typ, errors: v.errs, warnings: v.warns };
}

/**
 * Converts a decoded JavaScript JSON value (as JSON.parse gives it) into the
 * parser's form: objects become Maps (own enumerable keys; a member whose
 * value is undefined is left out), numbers JSONNumbers, strings have lone
 * surrogates replaced by U+FFFD.
 */
export function fromPlainJSON(v: unknown): JSONValue {
  if (v === null || v === undefined) return null;
  if (typeof v === "string") return wellFormed(v);
  if (typeof v === "boolean") return v;
  if (typeof v === "number") return new JSONNumber(numberText(v));
  if (typeof v === "bigint") return new JSONNumber(v.toString());
  if (v instanceof JSONNumber) return v;
  if (v instanceof OrderedObject) {
    const m: JSONObject = new Map();
    for (const [k, e] of v.members) m.set(wellFormed(k), fromPlainJSON(e));
    return m;
  }
  if (v instanceof Map) {
    const m: JSONObject = new Map();
    for (const [k, e] of v) m.set(wellFormed(String(k)), fromPlainJSON(e));
    return m;
  }
  if (Array.isArray(v)) return v.map((e) => fromPlainJSON(e));
  if (typeof v === "object") {
    const m: JSONObject = new Map();
    for (const k of Object.keys(v)) {
      const e = (v as Record<string, unknown>)[k];
      if (e === undefined) continue;
      m.set(wellFormed(k), fromPlainJSON(e));
    }
    return m;
  }
  return null;
}

/** JSON text for a JavaScript number (overflowed literals are infinite). */
function numberText(n: number): string {
  if (n === Infinity) return "1e999";
  if (n === -Infinity) return "-1e999";
  if (Object.is(n, -0)) return "-0";
  return String(n);
}

/**
 * Checks one JSON-LD object with paths starting at "$" (Go Validate). It
 * reads no page URL, so relative-URL snippets use "https://<your-domain>".
 * o may be a parseJSON value, a decoded JavaScript value or a generateMarkup
 * result.
 */
export function validateSchema(o: unknown): SchemaValidation {
  return validateNode(fromPlainJSON(o), "$", {});
}

/** validateNode on an already converted value, for the kit function. */
export function validateParsed(v: JSONValue): SchemaValidation {
  return validateNode(v, "$", {});
}

// ---------------------------------------------------------------------------
// JSON-LD extraction (jsonld.go)

/** Where a JSON-LD block was found. */
export type JsonLdSource = "script" | "comment" | "entity";

/** One <script type="application/ld+json"> element found in a page. */
export interface JsonLdBlock {
  index: number;
  source: JsonLdSource;
  /** 1-based line of "<script". */
  line: number;
  ok: boolean;
  error: JSONError | null;
}

/** A block with the details Go keeps out of JSON (json:"-"). */
export interface JsonLdBlockDetail extends JsonLdBlock {
  /** UTF-16 index of "<script" in the page. */
  tagStart: number;
  /** UTF-16 indexes of the element's raw content. */
  contentStart: number;
  contentEnd: number;
  inComment: boolean;
  entityEncoded: boolean;
  /** The JSON text parsed (unwrapped and decoded). */
  text: string;
  /** The parsed value when ok. */
  value: JSONValue;
}

/** The validation of one JSON-LD object of a block. */
export interface JsonLdObjectReport {
  block: number;
  path: string;
  type: string;
  errors: SchemaFinding[];
  warnings: SchemaFinding[];
}

/** The result of checkPageJSONLD. */
export interface JsonLdPageReport {
  blocks: JsonLdBlock[];
  objects: JsonLdObjectReport[];
  error_count: number;
  warning_count: number;
  text: string;
}

function isJSONLDType(t: string): boolean {
  const i = t.indexOf(";");
  if (i >= 0) t = t.slice(0, i);
  return asciiLower(trimHTMLSpace(t)) === "application/ld+json";
}

function countLF(s: string, from: number, end: number): number {
  let n = 0;
  for (let i = from; i < end; i++) if (s.charCodeAt(i) === 0x0a) n++;
  return n;
}

/**
 * Finds the JSON-LD blocks of a page in document order, blocks inside HTML
 * comments included, and parses them.
 */
export function extractJSONLD(html: string): JsonLdBlockDetail[] {
  const blocks: JsonLdBlockDetail[] = [];
  // Blocks come in document order, so lines are counted on from the previous block.
  let lineOff = 0;
  let line = 1;
  const walk = (toks: HtmlToken[], base: number, inComment: boolean): void => {
    toks.forEach((t, k) => {
      if (t.kind === HtmlTokenKind.Comment && !inComment) {
        const inner = html.slice(base + t.contentStart, base + t.contentEnd);
        walk(scanHTML(inner), base + t.contentStart, true);
      } else if (t.kind === HtmlTokenKind.StartTag && t.name === "script") {
        const typ = tokenAttr(t, "type") ?? "";
        if (!isJSONLDType(typ) || k + 1 >= toks.length || toks[k + 1].kind !== HtmlTokenKind.RawText) return;
        const raw = toks[k + 1];
        const tagStart = base + t.start;
        line += countLF(html, lineOff, tagStart);
        lineOff = tagStart;
        const b: JsonLdBlockDetail = {
          index: blocks.length,
          source: "script",
          line,
          ok: false,
          error: null,
          tagStart,
          contentStart: base + raw.contentStart,
          contentEnd: base + raw.contentEnd,
          inComment,
          entityEncoded: false,
          text: "",
          value: null,
        };
        parseBlock(b, html.slice(b.contentStart, b.contentEnd));
        blocks.push(b);
      }
    });
  };
  walk(scanHTML(html), 0, false);
  return blocks;
}

function parseBlock(b: JsonLdBlockDetail, content: string): void {
  let text = content;
  const t = trimHTMLSpace(content);
  if (t.length >= 7 && t.startsWith("<!--") && t.endsWith("-->")) {
    text = t.slice(4, t.length - 3);
    b.inComment = true;
  }
  let r = parseJSON(text);
  if (!r.ok && text.includes("&")) {
    const dec = decodeEntities(text);
    const r2 = parseJSON(dec);
    if (r2.ok) {
      r = r2;
      text = dec;
      b.entityEncoded = true;
    }
  }
  b.text = text;
  b.ok = r.ok;
  b.error = r.ok ? null : r.error;
  b.value = r.ok ? r.value : null;
  b.source = b.inComment ? "comment" : b.entityEncoded ? "entity" : "script";
}

/**
 * Extracts and validates the JSON-LD of a page. pageURL is used only to
 * suggest absolute URLs for relative ones.
 */
export function checkPageJSONLD(html: string, pageURL = ""): JsonLdPageReport {
  const details = extractJSONLD(html);
  const r: JsonLdPageReport = {
    blocks: details.map((b) => ({ index: b.index, source: b.source, line: b.line, ok: b.ok, error: b.error })),
    objects: [],
    error_count: 0,
    warning_count: 0,
    text: "",
  };
  for (const b of details) {
    if (!b.ok) {
      r.error_count++;
      continue;
    }
    const o: NodeOpts = { base: pageURL };
    if (b.entityEncoded) {
      o.blockErrors = [finding(SEVERITY_ERROR, "entity_encoded", "", "", msgEntityEncoded(), SCRIPT_SNIPPET)];
    }
    if (b.inComment) {
      o.blockFlags = [finding(SEVERITY_WARNING, "commented_out", "", "", msgCommentedOut(), SCRIPT_SNIPPET)];
    }
    for (const item of topItems(b.value)) r.objects.push(...itemReports(b.index, item[0], item[1], o));
  }
  for (const o of r.objects) {
    r.error_count += o.errors.length;
    r.warning_count += o.warnings.length;
  }
  r.text = extractText(html);
  return r;
}

function topItems(v: JSONValue): [string, JSONValue][] {
  if (Array.isArray(v)) return v.map((e, i) => [pathIndex("$", i), e]);
  return [["$", v]];
}

function itemReports(block: number, path: string, v: JSONValue, o: NodeOpts): JsonLdObjectReport[] {
  const report = (node: JSONValue, p: string, opts: NodeOpts): JsonLdObjectReport => {
    const val = validateNode(node, p, opts);
    for (const f of val.errors) if (f.path === "") f.path = p;
    for (const f of val.warnings) if (f.path === "") f.path = p;
    return { block, path: p, type: val.type, errors: val.errors, warnings: val.warnings };
  };
  if (!isObject(v)) return [report(v, path, o)];
  if (!v.has("@graph")) return [report(v, path, o)];
  const g = v.get("@graph") ?? null;
  const out: JsonLdObjectReport[] = [];
  const gpath = pathKey(path, "@graph");
  const nodes: [string, JSONValue][] = [];
  if (Array.isArray(g)) {
    g.forEach((e, i) => nodes.push([pathIndex(gpath, i), e]));
  } else if (isObject(g)) {
    nodes.push([gpath, g]);
  } else {
    const r = report(v, path, { ...o, skipGraph: true });
    r.errors.push(finding(SEVERITY_ERROR, "wrong_type", gpath, "@graph", msgWrongType("@graph", "an array of objects"),
      propSnippet("@graph", exampleFor("@graph"))));
    return [r];
  }
  if (v.has("@type")) out.push(report(v, path, { ...o, skipGraph: true }));
  const ctx = v.get("@context");
  const hasCtx = v.has("@context");
  for (const [np, nv] of nodes) out.push(report(nv, np, { ...o, ctx: ctx ?? null, hasCtx }));
  return out;
}
