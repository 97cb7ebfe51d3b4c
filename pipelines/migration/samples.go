package migration

import (
	"encoding/json"
	"fmt"

	"boxd/pipelines/migration/scoring"
)

// Sample is a ready-made check (GET /migration/samples): a body to POST
// to /migration/runs as it is. The logged outputs are what a closed model
// might have answered; every one is synthetic.
type Sample struct {
	ID    string  `json:"id"`
	Title string  `json:"title"`
	Task  string  `json:"task"`
	Body  Request `json:"body"`
}

func strInput(s string) json.RawMessage { b, _ := json.Marshal(s); return b }

// Samples are one check per task type.
func Samples() []Sample {
	var out []Sample

	// exact: short factual answers.
	exact := [][2]string{
		{"What is the capital of France?", "Paris."}, {"What is 12 times 12?", "144"}, {"Which planet is known as the red planet?", "Mars"},
		{"What is the chemical symbol for gold?", "Au"}, {"How many days are in a leap year?", "366"}, {"What colour do you get by mixing blue and yellow?", "Green."},
		{"What is the largest ocean on Earth?", "The Pacific Ocean"}, {"How many sides does a hexagon have?", "6"}, {"What is the freezing point of water in Celsius?", "0"},
		{"Who wrote Romeo and Juliet?", "William Shakespeare"}, {"What is the square root of 81?", "9"}, {"What gas do plants take in for photosynthesis?", "Carbon dioxide"},
	}
	b := Request{Title: "Short factual answers (sample)", Task: scoring.Task{Type: scoring.TaskExact},
		Prompt:    Prompt{System: "Answer with the answer only, no explanation.", Template: "{{input}}"},
		Incumbent: Incumbent{Model: "gpt-4o-mini"}, MaxOutputTokens: 16}
	for i, e := range exact {
		b.Examples = append(b.Examples, Example{ID: fmt.Sprintf("q%02d", i+1), Input: strInput(e[0]), Output: e[1]})
	}
	out = append(out, Sample{ID: "faq-exact", Title: b.Title, Task: scoring.TaskExact, Body: b})

	// label: support ticket routing.
	tickets := [][2]string{
		{"I was charged twice for my March invoice.", "billing"}, {"The app crashes when I open the settings page.", "bug"},
		{"Can you add dark mode to the dashboard?", "feature"}, {"My card was declined but the money left my account.", "billing"},
		{"Export to CSV gives an empty file since the update.", "bug"}, {"It would be great to schedule reports weekly.", "feature"},
		{"Please send me a copy of last year's receipts.", "billing"}, {"Login fails with error 500 on Safari.", "bug"},
		{"Could the API return results sorted by date?", "feature"}, {"Why did my subscription price go up?", "billing"},
		{"Search shows deleted items again.", "bug"}, {"Add a Spanish translation of the interface, please.", "feature"},
	}
	b = Request{Title: "Support ticket routing (sample)", Task: scoring.Task{Type: scoring.TaskLabel, Labels: []string{"billing", "bug", "feature"}, Extract: scoring.ExtractFirst},
		Prompt:    Prompt{System: "Route the support ticket. Answer with one word: billing, bug or feature.", Template: "Ticket: {{input}}"},
		Incumbent: Incumbent{Model: "gpt-4.1-mini"}, MaxOutputTokens: 8}
	for i, t := range tickets {
		b.Examples = append(b.Examples, Example{ID: fmt.Sprintf("t%02d", i+1), Input: strInput(t[0]), Output: t[1]})
	}
	out = append(out, Sample{ID: "ticket-label", Title: b.Title, Task: scoring.TaskLabel, Body: b})

	// json: invoice fields from a line of text, named fields.
	invoices := []struct {
		vendor, number, total, currency string
	}{
		{"Acme Tools", "INV-1001", "120.50", "EUR"}, {"Blue Lake Dental", "BL-77", "89.00", "USD"}, {"Nordic Paper AB", "NP-2024-3", "1500", "SEK"},
		{"Greenfield Farm", "GF-12", "45.25", "GBP"}, {"Orbit Cloud", "OC-9981", "310.00", "USD"}, {"Casa Verde", "CV-5", "72.10", "EUR"},
		{"Harbour Freight Co", "HF-300", "980.00", "USD"}, {"Maple Clinic", "MC-44", "150", "CAD"}, {"Sunrise Bakery", "SB-8", "18.60", "EUR"},
		{"Tokyo Print", "TP-210", "5400", "JPY"}, {"Atlas Movers", "AM-17", "640.00", "USD"}, {"Riverbend Vet", "RV-301", "95.40", "GBP"},
	}
	schema := json.RawMessage(`{"type":"object","properties":{"vendor":{"type":"string"},"invoice_number":{"type":"string"},"total":{"type":"number"},"currency":{"type":"string","enum":["EUR","USD","GBP","SEK","CAD","JPY"]}},"required":["vendor","invoice_number","total","currency"],"additionalProperties":false}`)
	b = Request{Title: "Invoice fields (sample)", Task: scoring.Task{Type: scoring.TaskJSON, Schema: schema, Fields: []string{"invoice_number", "total", "currency"}},
		Prompt:    Prompt{System: "Extract the invoice's fields as JSON with vendor, invoice_number, total (a number) and currency (ISO code).", Template: "From: {{vendor}}\nInvoice {{number}}: total due {{total}} {{currency}}."},
		Incumbent: Incumbent{Price: &Price{InputPerM: 0.4, OutputPerM: 1.6}}, MaxOutputTokens: 96}
	for i, v := range invoices {
		in, _ := json.Marshal(map[string]string{"vendor": v.vendor, "number": v.number, "total": v.total, "currency": v.currency})
		outJSON := fmt.Sprintf(`{"vendor": %q, "invoice_number": %q, "total": %s, "currency": %q}`, v.vendor, v.number, v.total, v.currency)
		b.Examples = append(b.Examples, Example{ID: fmt.Sprintf("inv%02d", i+1), Input: in, Output: outJSON})
	}
	out = append(out, Sample{ID: "invoice-json", Title: b.Title, Task: scoring.TaskJSON, Body: b})

	// freetext: one-sentence summaries of customer messages.
	notes := [][2]string{
		{"Hi, the heater in flat 4B stopped working last night and it is very cold. Can someone come today?", "Tenant in 4B reports a broken heater and asks for a same-day repair."},
		{"We would like to move our Thursday delivery to Friday morning this week only.", "Customer asks to move this week's Thursday delivery to Friday morning."},
		{"Your technician left the gate open and our dog got out. Please remind staff to close it.", "Customer complains a technician left the gate open and asks staff to close it."},
		{"Can I pay the remaining balance in two instalments instead of one?", "Customer asks to split the remaining balance into two payments."},
		{"The new printer arrived damaged; the paper tray is cracked.", "Customer reports the new printer arrived with a cracked paper tray."},
		{"Please cancel my appointment on the 12th, I will call to rebook.", "Patient cancels the appointment on the 12th and will call to rebook."},
		{"Thank you for the quick fix yesterday, everything works now.", "Customer thanks the team; yesterday's fix works."},
		{"Our invoice lists 10 hours but the job took 6. Please correct it.", "Customer disputes an invoice of 10 hours for a 6-hour job."},
		{"Is the clinic open on the public holiday next Monday?", "Patient asks whether the clinic is open next Monday's public holiday."},
		{"The office wifi drops every afternoon around 3 pm.", "Office reports the wifi drops daily around 3 pm."},
	}
	b = Request{Title: "Message summaries (sample)", Task: scoring.Task{Type: scoring.TaskFreetext, Rubric: "The summary names who writes, what they report or ask, and any date or number; nothing invented."},
		Prompt:    Prompt{System: "Summarise the customer's message in one sentence.", Template: "{{input}}"},
		Incumbent: Incumbent{Model: "gpt-4o"}, MaxOutputTokens: 48}
	for i, n := range notes {
		b.Examples = append(b.Examples, Example{ID: fmt.Sprintf("m%02d", i+1), Input: strInput(n[0]), Output: n[1]})
	}
	out = append(out, Sample{ID: "message-freetext", Title: b.Title, Task: scoring.TaskFreetext, Body: b})
	return out
}
