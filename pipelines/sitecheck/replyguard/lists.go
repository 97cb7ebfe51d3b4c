package replyguard

import "strings"

// Every phrase below is written as its tokens joined by single spaces, in
// lower case: "that's not true" is "that s not true" because the apostrophe
// separates tokens, "x-ray" is "x ray". PORTING.md repeats these lists; a
// port copies them verbatim. The order inside a list does not matter: the
// matcher takes the longest phrase that matches at a position.

// phraseEntry is one phrase and its category ("" marks an exception: it
// matches, uses up its tokens and reports nothing).
type phraseEntry struct {
	words []string
	cat   string
}

// phraseList builds entries from groups of (category, phrases).
func phraseList(groups ...[]string) []phraseEntry {
	var out []phraseEntry
	for _, g := range groups {
		cat := g[0]
		for _, p := range g[1:] {
			out = append(out, phraseEntry{words: strings.Fields(p), cat: cat})
		}
	}
	return out
}

// Offer phrases: discounts, refunds, free things and compensation promised
// in public.
var offerPhrases = phraseList(
	[]string{"offer",
		"discount", "discounts", "discounted",
		"refund", "refunds", "refunded", "full refund",
		"reimburse", "reimbursed", "reimbursement",
		"free", "for free", "free of charge",
		"no charge", "at no charge", "no extra charge",
		"no cost", "at no cost", "at no extra cost",
		"on the house", "complimentary",
		"voucher", "vouchers", "coupon", "coupons",
		"gift card", "gift cards", "gift certificate", "gift certificates",
		"store credit", "credit your account",
		"compensate", "compensated", "compensation",
		"money back", "your money back",
		"promo", "promo code", "percent off", "half price", "half off", "off your next",
		"is on us", "are on us", "be on us",
		"waive", "waived", "waiving",
		"rebate", "rebates", "cashback", "cash back", "bogo", "buy one get one",
	},
	[]string{"",
		"feel free", "free to", "free from", "free time",
		"gluten free", "sugar free", "dairy free", "fat free", "nut free",
		"pain free", "stress free", "hassle free", "worry free", "smoke free",
		"scent free", "fragrance free", "latex free", "mercury free", "toll free",
		"cavity free", "cruelty free",
		"free parking", "free wifi", "free wi fi",
	},
)

// Arguing phrases: blaming or contradicting the reviewer.
var arguingPhrases = phraseList(
	[]string{"arguing",
		"you are wrong", "you re wrong", "you were wrong",
		"you are mistaken", "you re mistaken", "you were mistaken",
		"you are incorrect", "you re incorrect",
		"that s not true", "that is not true", "this is not true", "that isn t true",
		"that is untrue", "that s untrue", "simply not true",
		"not what happened", "that never happened", "this never happened",
		"that s false", "that is false",
		"you failed to", "you neglected to", "you refused to", "you chose to",
		"you need to understand", "you have to understand", "you must understand",
		"you don t understand", "you do not understand",
		"actually you",
		"as we told you", "as you were told", "as we explained", "as we already explained",
		"as we said", "as stated", "as clearly stated",
		"per our policy you", "our policy clearly",
		"you were told", "you were informed", "you were warned",
		"you were rude", "you were the one",
		"your fault", "your own fault", "your responsibility",
		"you are responsible", "you re responsible",
		"you admitted", "you admit", "you lied", "you are lying", "you re lying", "liar",
		"fake review", "false review", "this review is false", "this review is fake",
		"you clearly", "you obviously", "calm down",
		"we did nothing wrong", "we did not do anything wrong", "we didn t do anything wrong",
		"not our fault", "not our problem",
		"no one else has complained", "nobody else has complained",
		"no one else complained", "nobody else complained",
		"you are the only", "you re the only",
		"you should read", "you should know", "you caused",
	},
)

// Placeholder phrases (the bracket and upper-case patterns are regexes).
var placeholderPhrases = phraseList(
	[]string{"placeholder",
		"lorem ipsum", "dolor sit amet",
		"your business name", "business name here", "your company name", "company name here",
		"your name here", "name here", "insert name", "insert name here", "insert business name",
		"customer name", "customer s name", "reviewer name", "reviewer s name",
		"client name", "patient name", "placeholder",
	},
)

// PHI categories, each with its message.
const (
	catPatient       = "patient"
	catVisit         = "visit"
	catTreatment     = "treatment"
	catWait          = "wait"
	catBill          = "bill"
	catFamily        = "family"
	catDate          = "date"
	catName          = "name"
	catRepeatNumber  = "repeat_number"
	catRepeatContact = "repeat_contact"
)

var phiMessages = map[string]string{
	catPatient:       "confirms that the reviewer is a patient or client, or describes their care",
	catVisit:         "confirms a visit or appointment",
	catTreatment:     "confirms a treatment, procedure or diagnosis",
	catWait:          "confirms a wait or waiting time",
	catBill:          "confirms a bill, charge, payment or insurance matter",
	catFamily:        "mentions a family member",
	catDate:          "mentions a day or date that could tie the reviewer to a visit",
	catName:          "names a person (the reviewer or staff)",
	catRepeatNumber:  "repeats a number the reviewer gave",
	catRepeatContact: "repeats contact details the reviewer gave",
}

// PHI term phrases, checked for health and care businesses only.
var phiPhrases = phraseList(
	[]string{catPatient,
		"as a patient", "as our patient", "a patient of", "patient of ours",
		"as a client", "as our client", "valued patient", "valued client", "our records", "our notes",
		"your care", "your care team", "your health", "your mental health", "your condition",
		"your medical", "your dental", "medical history", "your history",
		"your records", "your record", "your chart", "your file",
		"your results", "your test", "your tests", "your test results",
		"your provider", "your doctor", "your dentist", "your physician", "your therapist",
		"your counselor", "your counsellor", "your nurse", "your hygienist", "your surgeon",
		"your caregiver", "your recovery", "your symptoms", "your pain",
		"your teeth", "your tooth", "your eyes", "your skin",
		"your stay", "your time with us", "your time here", "your first time",
		"you came in", "you came to", "when you came", "you visited",
		"you were seen", "you were here", "we saw you", "seeing you",
		"see you again", "see you soon", "see you next", "welcome back",
		"thank you for choosing", "for choosing us", "for choosing our",
		"for trusting us", "trusting us with",
		"you were treated", "we treated you", "caring for you", "care for you", "cared for you",
	},
	[]string{catVisit,
		"visit", "visits", "visited", "visiting",
		"your visit", "your visits", "your last visit", "your recent visit",
		"appointment", "appointments", "appt", "your appointment", "your appointments",
		"came in", "checked in", "admitted", "admission", "discharged", "discharge",
		"your session", "your sessions", "consultation", "consultations", "consult",
		"rescheduled", "cancelled", "canceled", "cancellation", "no show",
	},
	[]string{catTreatment,
		"treatment", "treatments", "treated", "treating", "treatment plan",
		"your treatment", "your treatment plan",
		"procedure", "procedures", "your procedure",
		"surgery", "surgeries", "surgical", "operation",
		"diagnosis", "diagnoses", "diagnosed",
		"exam", "exams", "examination", "examined", "checkup", "checkups", "check up",
		"cleaning", "cleanings", "filling", "fillings", "crown", "crowns", "root canal",
		"extraction", "extractions", "implant", "implants", "braces",
		"x ray", "x rays", "xray", "xrays", "scan", "scans", "mri", "ct scan", "ultrasound",
		"bloodwork", "blood work", "blood test", "blood tests", "lab work", "lab results", "biopsy",
		"injection", "injections", "vaccine", "vaccines", "vaccination", "vaccinated",
		"prescription", "prescriptions", "prescribed", "medication", "medications", "meds",
		"refill", "dose", "dosage", "anesthesia", "sedation", "stitches",
		"therapy session", "your therapy", "your counseling", "your counselling",
		"your massage", "your glasses", "your lenses", "your contacts", "your rehab",
		"your medicine", "care plan",
	},
	[]string{catWait,
		"wait", "waits", "waited", "waiting", "your wait", "long wait",
		"wait time", "wait times", "waiting time", "waiting times", "waiting room",
		"delay", "delays", "delayed", "running late", "running behind", "behind schedule",
	},
	[]string{catBill,
		"bill", "bills", "billed", "billing", "your bill",
		"invoice", "invoices", "invoiced",
		"charge", "charges", "charged", "charging",
		"copay", "copays", "co pay", "co pays", "deductible",
		"insurance", "your insurance", "insurance claim", "insurer", "insured",
		"claim", "claims", "coverage", "medicaid", "medicare", "out of pocket",
		"payment", "payments", "your balance", "your statement", "your account",
		"collections", "your estimate", "your cost", "your costs",
	},
	[]string{catFamily,
		"son", "sons", "daughter", "daughters", "mother", "father", "mom", "mum", "mommy",
		"dad", "daddy", "husband", "wife", "child", "children", "kid", "kids", "baby",
		"toddler", "infant", "newborn", "grandmother", "grandfather", "grandma", "grandpa",
		"grandparent", "grandparents", "grandson", "granddaughter", "grandchild",
		"grandchildren", "grandkids", "brother", "sister", "sibling", "siblings", "spouse",
		"aunt", "uncle", "niece", "nephew", "fiance", "fiancee", "stepson", "stepdaughter",
		"boyfriend", "girlfriend",
		"your family", "family member", "family members", "your partner",
		"your parent", "your parents", "your loved one", "little one", "your little one",
	},
	[]string{catDate,
		"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
		"january", "february", "april", "june", "july", "august", "september",
		"october", "november", "december",
		"yesterday", "last week", "last month", "last night", "last time",
		"this morning", "this afternoon", "this evening", "earlier today", "the other day",
	},
	[]string{"",
		"can t wait", "cannot wait", "can not wait", "in charge",
		"visit our website", "visit our site", "visit our web site",
	},
)

// titles start a name: "Dr. Patel", "Nurse Amy".
var titles = wordSet("dr doctor mr mrs ms mx miss prof professor nurse")

// commonWords are capitalised words that are never taken for a name.
var commonWords = wordSet(`
a about above after again against all almost also always am amazing an and any anyone anything
are around as at attention awesome
back bad be because been before being best better between both but by
can care caring clean clinic come comment comments could covid customer customers
day dear definitely dental dentist dentists desk did do doctor doctors does done during
each either else email enough entire even ever every everybody everyone everything excellent experience
facebook feedback few first for friendly from front
general glad good google great
had happy has have he health hello help helpful her here hers hey hi highly him his hope hospital how however
i if in into is it its
just kind
last let like long love loved
management manager many may me medical more most much must my
name never new next nice no nobody none nor not nothing now
of office often ok okay on once only or other others our ours over overall owner owners
patient patients people phone place please practice professional provider providers
really recommend recommended review reviews rude
service services she should since so some someone something sorry staff still such
team than thank thanks that the their them then there these they this those through time to today
tomorrow too truly
unfortunately until up us
very
was we website welcome well were what when where which while who why will with without wonderful would
yelp yes yesterday you your yours
absolutely appreciate appreciated awful best cheers consideration fantastic grateful horrible
incredible out poor privacy regards sincerely team terrible thankful warm warmly worst
american america associates center centre christmas easter english group holiday holidays
spanish thanksgiving year
monday tuesday wednesday thursday friday saturday sunday
january february march april june july august september october november december
dr mr mrs ms mx miss prof professor nurse
`)

// starWords follow a rating: "5 stars", "five-star".
var starWords = wordSet("star stars")

// numberWords are the number words read as numbers. "one" is not among
// them: it is mostly a pronoun ("no one", "the one").
var numberWords = map[string]string{
	"zero": "0", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
	"seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
	"thirteen": "13", "fourteen": "14", "fifteen": "15", "sixteen": "16", "seventeen": "17",
	"eighteen": "18", "nineteen": "19", "twenty": "20", "thirty": "30", "forty": "40",
	"fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80", "ninety": "90",
	"hundred": "100", "thousand": "1000", "million": "1000000", "dozen": "12",
}

// englishWords and foreignWords drive the English test.
var englishWords = wordSet(`
the and you your we our for of it this that with thank thanks very not be have has had they my
on at but are were great good service staff would from us me she he there what just been if or
when all can who them their his her its which do did don place time food recommend nice friendly
best always never again really love people back get got about more here out up one
`)

var foreignWords = wordSet(`
le la les et est très tres merci nous vous pas une des du avec pour mais je il elle sont était etait
qui ce cette sur dans bonjour bien trop
el los las es muy gracias que para pero por del servicio nosotros fue está esta todo excelente
bueno buena lugar atención atencion hola
der das und ist sehr nicht wir sie danke mit für fur ein eine auch aber ich gut zu bei vielen
di che è molto grazie sono della un anche ottimo servizio
não nao muito obrigado obrigada uma você voce foi atendimento bom ótimo otimo
het een zeer niet wij bedankt heel goed voor de
`)

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}
