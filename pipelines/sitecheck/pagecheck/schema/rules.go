package schema

import (
	"boxd/pipelines/sitecheck/pagecheck/jsonld"
	"boxd/pipelines/sitecheck/pagecheck/text"
)

// Families of ruled types, in priority order: an object whose @type list
// names types of several families is checked by the first family here.
const (
	FamilyLocalBusiness  = "LocalBusiness"
	FamilyOrganization   = "Organization"
	FamilyArticle        = "Article"
	FamilyProduct        = "Product"
	FamilyFAQPage        = "FAQPage"
	FamilyBreadcrumbList = "BreadcrumbList"
	FamilyWebSite        = "WebSite"
)

var familyOrder = []string{
	FamilyLocalBusiness, FamilyOrganization, FamilyArticle, FamilyProduct,
	FamilyFAQPage, FamilyBreadcrumbList, FamilyWebSite,
}

// LocalBusinessTypes are LocalBusiness and the schema.org subtypes checked
// with its rules (and accepted by GenerateMarkup), sorted.
var LocalBusinessTypes = []string{
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
}

// OrganizationTypes are Organization and the subtypes (not LocalBusiness
// ones) checked with its rules, sorted.
var OrganizationTypes = []string{
	"Airline", "CollegeOrUniversity", "Consortium", "Cooperative", "Corporation",
	"DanceGroup", "EducationalOrganization", "ElementarySchool", "GovernmentOrganization", "HighSchool",
	"LibrarySystem", "MedicalOrganization", "MiddleSchool", "MusicGroup", "NGO",
	"NewsMediaOrganization", "OnlineBusiness", "OnlineStore", "Organization", "PerformingGroup",
	"PoliticalParty", "Preschool", "Project", "ResearchOrganization", "School",
	"SearchRescueOrganization", "SportsOrganization", "SportsTeam", "TheaterGroup", "WorkersUnion",
}

// ArticleTypes are Article and its subtypes, sorted.
var ArticleTypes = []string{
	"APIReference", "AdvertiserContentArticle", "AnalysisNewsArticle", "Article", "AskPublicNewsArticle",
	"BackgroundNewsArticle", "BlogPosting", "DiscussionForumPosting", "LiveBlogPosting", "MedicalScholarlyArticle",
	"NewsArticle", "OpinionNewsArticle", "Report", "ReportageNewsArticle", "ReviewNewsArticle",
	"SatiricalArticle", "ScholarlyArticle", "SocialMediaPosting", "TechArticle",
}

// ProductTypes are Product and its subtypes, sorted.
var ProductTypes = []string{"Car", "IndividualProduct", "Motorcycle", "Product", "ProductModel", "SomeProducts", "Vehicle"}

var typeFamily = func() map[string]string {
	m := map[string]string{}
	for _, t := range LocalBusinessTypes {
		m[t] = FamilyLocalBusiness
	}
	for _, t := range OrganizationTypes {
		m[t] = FamilyOrganization
	}
	for _, t := range ArticleTypes {
		m[t] = FamilyArticle
	}
	for _, t := range ProductTypes {
		m[t] = FamilyProduct
	}
	m["FAQPage"] = FamilyFAQPage
	m["BreadcrumbList"] = FamilyBreadcrumbList
	m["WebSite"] = FamilyWebSite
	return m
}()

// knownTypesLower maps the lower-cased names of all ruled types to their
// spelling, for the type_case check.
var knownTypesLower = func() map[string]string {
	m := map[string]string{}
	for t := range typeFamily {
		m[text.ASCIILower(t)] = t
	}
	return m
}()

// availabilityValues are the schema.org ItemAvailability names.
var availabilityValues = []string{
	"BackOrder", "Discontinued", "InStock", "InStoreOnly", "LimitedAvailability", "MadeToOrder",
	"OnlineOnly", "OutOfStock", "PreOrder", "PreSale", "Reserved", "SoldOut",
}

type level int

const (
	optional level = iota
	recommended
	required
)

type kind int

const (
	kText kind = iota
	kURL
	kImage
	kDate
	kNumber
	kPrice
	kCurrency
	kTime
	kHours
	kAvailability
	kObject
	kItem
	kPosition
	kGroup
)

// textMode says what a string means where an object is expected.
type textMode int

const (
	textErr  textMode = iota // error wrong_type
	textOK                   // accepted
	textWarn                 // warning wrong_type
)

type prop struct {
	name        string
	level       level
	kind        kind
	sub         string   // kObject: the ruleset of the nested object
	text        textMode // kObject: how a string value is treated
	maxLen      int      // kText: more code points give a too_long warning
	alts        []string // kGroup: present when any of these is present
	unless      string   // no missing finding when this property is present (not null)
	exceptLast  bool     // no missing finding on the last element of the list
	unlessNamed string   // no missing finding when this property holds an object with a "name"
	owner       string   // key of the ruleset holding the property (set by checkRuleset)
}

type ruleset struct {
	key    string // key in rulesets (set at init)
	name   string // the label of nested objects without @type
	expect string // nested: the required @type ("" = not checked)
	props  []prop
}

// rulesets are the rule tables; properties are checked in table order.
var rulesets = map[string]*ruleset{
	FamilyLocalBusiness: {name: "LocalBusiness", props: []prop{
		{name: "name", level: required, kind: kText},
		{name: "address", level: required, kind: kObject, sub: "PostalAddress", text: textWarn},
		{name: "url", level: recommended, kind: kURL},
		{name: "telephone", level: recommended, kind: kText},
		{name: "image", level: recommended, kind: kImage},
		{name: "openingHoursSpecification", level: recommended, kind: kGroup, alts: []string{"openingHoursSpecification", "openingHours"}},
		{name: "geo", level: recommended, kind: kObject, sub: "GeoCoordinates"},
		{name: "priceRange", level: recommended, kind: kText, maxLen: 100},
		{name: "openingHours", kind: kHours},
		{name: "openingHoursSpecification", kind: kObject, sub: "OpeningHoursSpecification"},
		{name: "logo", kind: kImage},
		{name: "sameAs", kind: kURL},
		{name: "email", kind: kText},
		{name: "description", kind: kText},
		{name: "aggregateRating", kind: kObject, sub: "AggregateRating"},
	}},
	FamilyOrganization: {name: "Organization", props: []prop{
		{name: "name", level: required, kind: kText},
		{name: "url", level: recommended, kind: kURL},
		{name: "logo", level: recommended, kind: kImage},
		{name: "sameAs", kind: kURL},
		{name: "address", kind: kObject, sub: "PostalAddress", text: textOK},
		{name: "telephone", kind: kText},
		{name: "email", kind: kText},
		{name: "description", kind: kText},
	}},
	FamilyArticle: {name: "Article", props: []prop{
		{name: "headline", level: required, kind: kText, maxLen: 110},
		{name: "author", level: recommended, kind: kObject, sub: "Person", text: textOK},
		{name: "datePublished", level: recommended, kind: kDate},
		{name: "dateModified", level: recommended, kind: kDate},
		{name: "image", level: recommended, kind: kImage},
		{name: "publisher", kind: kObject, sub: "Publisher"},
	}},
	FamilyProduct: {name: "Product", props: []prop{
		{name: "name", level: required, kind: kText},
		{name: "offers", level: required, kind: kGroup, alts: []string{"offers", "review", "aggregateRating"}},
		{name: "image", level: recommended, kind: kImage},
		{name: "description", level: recommended, kind: kText},
		{name: "brand", level: recommended, kind: kObject, sub: "Brand", text: textOK},
		{name: "offers", kind: kObject, sub: "Offer"},
		{name: "aggregateRating", kind: kObject, sub: "AggregateRating"},
		{name: "review", kind: kObject, sub: "Review"},
	}},
	FamilyFAQPage: {name: "FAQPage", props: []prop{
		{name: "mainEntity", level: required, kind: kObject, sub: "Question"},
	}},
	FamilyBreadcrumbList: {name: "BreadcrumbList", props: []prop{
		{name: "itemListElement", level: required, kind: kObject, sub: "ListItem"},
	}},
	FamilyWebSite: {name: "WebSite", props: []prop{
		{name: "name", level: required, kind: kText},
		{name: "url", level: required, kind: kURL},
		{name: "description", kind: kText},
		{name: "publisher", kind: kObject, sub: "Publisher"},
	}},
	"PostalAddress": {name: "PostalAddress", props: []prop{
		{name: "streetAddress", level: recommended, kind: kText},
		{name: "addressLocality", level: recommended, kind: kText},
		{name: "postalCode", level: recommended, kind: kText},
		{name: "addressCountry", level: recommended, kind: kText},
		{name: "addressRegion", kind: kText},
	}},
	"GeoCoordinates": {name: "GeoCoordinates", props: []prop{
		{name: "latitude", level: required, kind: kNumber},
		{name: "longitude", level: required, kind: kNumber},
	}},
	"OpeningHoursSpecification": {name: "OpeningHoursSpecification", props: []prop{
		{name: "dayOfWeek", level: required, kind: kText},
		{name: "opens", level: required, kind: kTime},
		{name: "closes", level: required, kind: kTime},
	}},
	"AggregateRating": {name: "AggregateRating", props: []prop{
		{name: "ratingValue", level: required, kind: kNumber},
		{name: "ratingCount", level: required, kind: kGroup, alts: []string{"ratingCount", "reviewCount"}},
		{name: "ratingCount", kind: kNumber},
		{name: "reviewCount", kind: kNumber},
		{name: "bestRating", kind: kNumber},
		{name: "worstRating", kind: kNumber},
	}},
	"Person": {name: "Person", props: []prop{
		{name: "name", level: required, kind: kText},
		{name: "url", kind: kURL},
	}},
	"Publisher": {name: "Organization", props: []prop{
		{name: "name", level: required, kind: kText},
		{name: "logo", kind: kImage},
	}},
	"Brand": {name: "Brand", props: []prop{
		{name: "name", level: required, kind: kText},
	}},
	"Offer": {name: "Offer", props: []prop{
		{name: "price", level: required, kind: kPrice, unless: "priceSpecification"},
		{name: "priceCurrency", level: required, kind: kCurrency, unless: "priceSpecification"},
		{name: "availability", level: recommended, kind: kAvailability},
		{name: "priceSpecification", kind: kObject, sub: "PriceSpecification"},
		{name: "url", kind: kURL},
		{name: "priceValidUntil", kind: kDate},
	}},
	"AggregateOffer": {name: "AggregateOffer", props: []prop{
		{name: "lowPrice", level: required, kind: kPrice},
		{name: "priceCurrency", level: required, kind: kCurrency},
		{name: "highPrice", kind: kPrice},
		{name: "offerCount", kind: kNumber},
	}},
	"PriceSpecification": {name: "PriceSpecification", props: []prop{
		{name: "price", level: required, kind: kPrice},
		{name: "priceCurrency", level: required, kind: kCurrency},
	}},
	"Review": {name: "Review", props: []prop{
		{name: "author", level: recommended, kind: kObject, sub: "Person", text: textOK},
		{name: "reviewRating", level: recommended, kind: kObject, sub: "Rating"},
	}},
	"Rating": {name: "Rating", props: []prop{
		{name: "ratingValue", level: required, kind: kNumber},
	}},
	"Question": {name: "Question", expect: "Question", props: []prop{
		{name: "name", level: required, kind: kText},
		{name: "acceptedAnswer", level: required, kind: kObject, sub: "Answer"},
	}},
	"Answer": {name: "Answer", expect: "Answer", props: []prop{
		{name: "text", level: required, kind: kText},
	}},
	"ListItem": {name: "ListItem", expect: "ListItem", props: []prop{
		{name: "position", level: required, kind: kPosition},
		{name: "name", level: required, kind: kText, unlessNamed: "item"},
		{name: "item", level: required, kind: kItem, exceptLast: true},
	}},
}

// examples are the values shown in snippets for missing, empty or wrongly
// typed properties; a property not listed shows "...".
var examples = map[string]any{
	"@context":      "https://schema.org",
	"@type":         "Organization",
	"@id":           "https://www.example.com/#id",
	"name":          "Your Business Name",
	"headline":      "Article headline",
	"description":   "One or two sentences that describe it.",
	"url":           "https://www.example.com/",
	"image":         "https://www.example.com/photo.jpg",
	"logo":          "https://www.example.com/logo.png",
	"sameAs":        []any{"https://www.example.com/profile"},
	"telephone":     "+1-212-555-0100",
	"email":         "info@example.com",
	"priceRange":    "$$",
	"openingHours":  "Mo-Fr 09:00-17:00",
	"datePublished": "2024-01-05T08:00:00+00:00",
	"dateModified":  "2024-02-05T09:20:00+00:00",
	"address": jsonld.Obj("@type", "PostalAddress", "streetAddress", "1 Harbor Street", "addressLocality", "Springfield",
		"postalCode", "12345", "addressCountry", "US"),
	"streetAddress":   "1 Harbor Street",
	"addressLocality": "Springfield",
	"addressRegion":   "IL",
	"postalCode":      "12345",
	"addressCountry":  "US",
	"geo":             jsonld.Obj("@type", "GeoCoordinates", "latitude", "40.7128", "longitude", "-74.0060"),
	"latitude":        "40.7128",
	"longitude":       "-74.0060",
	"openingHoursSpecification": jsonld.Obj("@type", "OpeningHoursSpecification",
		"dayOfWeek", []any{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday"}, "opens", "09:00", "closes", "17:00"),
	"dayOfWeek":          "Monday",
	"opens":              "09:00",
	"closes":             "17:00",
	"author":             jsonld.Obj("@type", "Person", "name", "Author Name", "url", "https://www.example.com/about"),
	"publisher":          jsonld.Obj("@type", "Organization", "name", "Publisher Name", "logo", "https://www.example.com/logo.png"),
	"brand":              jsonld.Obj("@type", "Brand", "name", "Brand Name"),
	"offers":             jsonld.Obj("@type", "Offer", "price", "19.99", "priceCurrency", "USD", "availability", "https://schema.org/InStock"),
	"review":             jsonld.Obj("@type", "Review", "author", jsonld.Obj("@type", "Person", "name", "Reviewer Name"), "reviewRating", jsonld.Obj("@type", "Rating", "ratingValue", "5")),
	"reviewRating":       jsonld.Obj("@type", "Rating", "ratingValue", "5"),
	"aggregateRating":    jsonld.Obj("@type", "AggregateRating", "ratingValue", "4.6", "reviewCount", "89"),
	"ratingValue":        "4.6",
	"ratingCount":        "89",
	"reviewCount":        "89",
	"bestRating":         "5",
	"worstRating":        "1",
	"offerCount":         "3",
	"price":              "19.99",
	"lowPrice":           "19.99",
	"highPrice":          "49.99",
	"priceCurrency":      "USD",
	"priceSpecification": jsonld.Obj("@type", "PriceSpecification", "price", "19.99", "priceCurrency", "USD"),
	"availability":       "https://schema.org/InStock",
	"priceValidUntil":    "2025-12-31",
	"mainEntity": []any{jsonld.Obj("@type", "Question", "name", "Question text?",
		"acceptedAnswer", jsonld.Obj("@type", "Answer", "text", "Answer text."))},
	"acceptedAnswer":  jsonld.Obj("@type", "Answer", "text", "Answer text."),
	"text":            "Answer text.",
	"itemListElement": []any{jsonld.Obj("@type", "ListItem", "position", 1, "name", "Home", "item", "https://www.example.com/")},
	"position":        1,
	"item":            "https://www.example.com/section/",
	"@graph":          []any{jsonld.Obj("@type", "Organization", "name", "Your Business Name")},
}

// ownerExamples override examples for one ruleset's property
// ("Ruleset.property", keyed by the rulesets map key).
var ownerExamples = map[string]any{
	"Person.name":    "Author Name",
	"Publisher.name": "Publisher Name",
	"Brand.name":     "Brand Name",
	"Product.name":   "Product Name",
	"Question.name":  "Question text?",
	"ListItem.name":  "Home",
	"WebSite.name":   "Your Site Name",
}

func init() {
	for k, rs := range rulesets {
		rs.key = k
	}
}

// exampleOf is the snippet example for property p of ruleset owner.
func exampleOf(owner, p string) any {
	if v, ok := ownerExamples[owner+"."+p]; ok {
		return v
	}
	return exampleFor(p)
}

func exampleFor(p string) any {
	if v, ok := examples[p]; ok {
		return v
	}
	return "..."
}
