package replyguard

import "strings"

// healthKeywords are the phrases (tokens joined by spaces, lower case) that
// mark a health or care business in its name or its type. A schema.org type
// such as "MedicalClinic" is split at lower-to-upper case changes first, so
// it reads "medical clinic".
var healthKeywords = phraseList([]string{"health",
	// general medicine and hospitals
	"medical", "medicine", "clinic", "clinics", "clinical", "hospital", "hospitals", "infirmary",
	"physician", "physicians", "family doctor", "family doctors", "family practice",
	"family medicine", "internal medicine", "sports medicine", "primary care", "urgent care",
	"urgentcare", "emergency room", "emergency department", "medical group",
	"healthcare", "health care", "health center", "health centre", "health clinic",
	"health services", "health system", "community health", "family health", "public health",
	"women s health", "womens health", "men s health", "mens health", "sexual health",
	"occupational health", "student health", "mental health", "behavioral health",
	"behavioural health",
	// dental
	"dental", "dentist", "dentists", "dentistry", "orthodontic", "orthodontics", "orthodontist",
	"endodontic", "endodontics", "endodontist", "periodontic", "periodontics", "periodontist",
	"prosthodontic", "prosthodontics", "prosthodontist", "denture", "dentures",
	"oral surgery", "oral surgeon",
	// specialties
	"pediatric", "pediatrics", "paediatric", "paediatrics", "pediatrician",
	"cardiology", "cardiologist", "dermatology", "dermatologist", "oncology", "oncologist",
	"orthopedic", "orthopedics", "orthopaedic", "orthopaedics", "podiatry", "podiatrist",
	"obstetrics", "obstetrician", "gynecology", "gynaecology", "gynecologist", "obgyn", "ob gyn",
	"urology", "urologist", "neurology", "neurologist", "gastroenterology", "gastroenterologist",
	"endocrinology", "otolaryngology", "nephrology", "pulmonology", "rheumatology",
	"allergist", "immunology", "anesthesiology", "surgery", "surgical", "surgeon", "surgeons",
	"plastic surgery", "med spa", "medspa", "medical spa", "acupuncture",
	"fertility", "ivf", "dialysis", "midwife", "midwifery", "birth center", "birthing center",
	"audiology", "audiologist", "hearing aid", "hearing aids",
	// eyes
	"optometry", "optometrist", "optometric", "optician", "ophthalmology", "ophthalmologist",
	"eye care", "eyecare", "eye doctor", "eye clinic", "vision care",
	// chiropractic and physiotherapy
	"chiropractic", "chiropractor", "chiropractors", "chiro",
	"physiotherapy", "physiotherapist", "physio", "physical therapy", "physical therapist",
	"occupational therapy", "speech therapy", "behavioral therapy", "family therapy",
	"couples therapy", "therapy center", "therapy centre", "therapy services",
	// mental health and counselling
	"psychiatry", "psychiatrist", "psychiatric", "psychology", "psychologist", "psychological",
	"psychotherapy", "psychotherapist", "counseling", "counselling", "counselor", "counsellor",
	// rehab
	"rehab", "rehabilitation", "detox", "addiction", "recovery center", "recovery centre",
	"substance abuse", "sober living",
	// pharmacy, lab and imaging
	"pharmacy", "pharmacies", "pharmacist", "drugstore",
	"radiology", "radiologist", "mammography", "sonography", "ultrasound", "mri",
	"medical imaging", "diagnostic imaging", "imaging center", "imaging centre",
	"medical lab", "medical laboratory", "diagnostic lab", "diagnostic laboratory", "lab corp",
	"pathology",
	// care
	"hospice", "palliative", "nursing", "nursing home", "skilled nursing", "home care",
	"homecare", "home health", "home healthcare", "assisted living", "senior living",
	"memory care", "care home", "care facility", "elder care", "eldercare", "senior care",
	"respite care", "caregiver", "caregivers", "caregiving",
})

// healthCredentials are matched case-sensitively as whole tokens, after
// full stops are removed ("M.D." reads "MD").
var healthCredentials = map[string]bool{
	"MD": true, "DDS": true, "DMD": true, "DPM": true, "DNP": true, "DPT": true, "FNP": true,
	"APRN": true, "RN": true, "LPN": true, "LCSW": true, "LMFT": true, "LPC": true, "LMHC": true,
}

// veterinaryWords veto the health test: animal care is not covered by HIPAA.
var veterinaryWords = phraseList([]string{"vet",
	"vet", "vets", "veterinary", "veterinarian", "veterinarians", "dvm",
	"animal", "animals", "pet", "pets", "equine", "feline", "canine",
})

// healthTokens prepares a business name or type for the health test: full
// stops are removed, the text is normalised and tokenised, and word tokens
// are split where a lower-case ASCII letter is followed by an upper-case one.
func healthTokens(s string) []token {
	s = strings.ReplaceAll(s, ".", "")
	t := analyse(s)
	var out []token
	for _, tk := range t.toks {
		rs := []rune(tk.text)
		from := 0
		for k := 1; k <= len(rs); k++ {
			if k == len(rs) || (isLower(rs[k-1]) && isUpper(rs[k])) {
				part := string(rs[from:k])
				out = append(out, token{start: tk.start + from, end: tk.start + k, text: part, lower: lowerString(part), word: tk.word})
				from = k
			}
		}
	}
	return out
}

// containsPhrase reports whether any entry matches consecutive tokens.
func containsPhrase(toks []token, list []phraseEntry) bool {
	for i := range toks {
		for _, e := range list {
			if matchAt(toks, i, e.words, nil) {
				return true
			}
		}
	}
	return false
}

func healthMatch(toks []token) bool {
	for _, tk := range toks {
		if healthCredentials[tk.text] {
			return true
		}
	}
	return containsPhrase(toks, healthKeywords)
}

// IsHealthcare reports whether a business is a health or care business
// whose public replies must not confirm anything about a patient. The name
// and the type are tested separately: either may match a keyword or a
// credential, and a veterinary word in either makes the answer false.
func IsHealthcare(name, businessType string) bool {
	n := healthTokens(name)
	t := healthTokens(businessType)
	if containsPhrase(n, veterinaryWords) || containsPhrase(t, veterinaryWords) {
		return false
	}
	return healthMatch(n) || healthMatch(t)
}
