package scripts

// The eight demo dialogues. Every person, business, place and address in
// them is invented; nothing describes a real patient or customer. Numbers
// are written the way a speaker says them so that the synthesised speech
// and the known text agree. "A: " lines are spoken by the first speaker,
// "B: " lines by the second.

var clinicalBackPain = []string{
	"A: Good morning, I'm Doctor Ada Quillfeather. What brings you in today?",
	"B: Hi, I'm Jordan Pimbleton. My lower back has hurt for about two weeks, ever since I lifted a heavy box of books.",
	"A: Does the pain travel anywhere, like down your legs?",
	"B: It shoots down the back of my left leg to the knee, and my left foot tingles sometimes. I have no weakness and no trouble with my bladder.",
	"A: How bad is it from zero to ten?",
	"B: About a six most days, and an eight when I sit for a long drive.",
	"A: What have you taken for it?",
	"B: Ibuprofen 400 milligrams three times a day with food. I also take lisinopril 10 milligrams once a day for blood pressure.",
	"A: Any allergies to medicines?",
	"B: Penicillin gives me a rash.",
	"A: Let me examine you. Your blood pressure is 132 over 84. The lower back muscles are tender on the left. Straight leg raise is positive on the left at 40 degrees. Strength and reflexes are normal in both legs.",
	"B: So what is it?",
	"A: This is acute low back pain with left sided sciatica, most likely an irritated nerve root. There are no red flags, so we don't need an MRI today.",
	"A: Keep taking ibuprofen 400 milligrams three times a day for one more week, and add cyclobenzaprine 5 milligrams at bedtime for the muscle spasm. I'm also referring you to physical therapy twice a week for six weeks.",
	"B: Can I keep working? I drive a delivery van.",
	"A: Yes, but walk for a few minutes every hour, and don't lift more than 20 pounds for two weeks. If your leg gets weak or you lose bladder control, go to the emergency department. Otherwise I'll see you in four weeks.",
}

var clinicalDiabetes = []string{
	"A: Hello Mister Tobias Wrenfield, good to see you again. This is your three month diabetes follow up.",
	"B: Morning, Doctor Marisol Vantreece. I've been better about my diet, but my feet bother me at night.",
	"A: Tell me about your feet.",
	"B: Both feet feel numb and tingly, mostly the toes, for about two months. It's worse when I lie down.",
	"A: How are your sugar readings at home?",
	"B: Mornings are usually around 150, sometimes 170. I had one low of 65 after skipping lunch.",
	"A: Your A1C came back at 7.6 percent, down from 8.4 in June. That's real progress.",
	"A: Which medicines are you taking now?",
	"B: Metformin 1000 milligrams twice a day, atorvastatin 20 milligrams at night, and lisinopril 20 milligrams in the morning.",
	"A: Any side effects?",
	"B: Some loose stools from the metformin, but it's better with food.",
	"A: Your blood pressure today is 138 over 86 and you weigh 212 pounds, six pounds less than last time. On the foot exam, monofilament sensation is reduced in both feet, and the pulses are normal. There are no sores.",
	"A: So, type 2 diabetes is improving, but you now have diabetic peripheral neuropathy. Your cholesterol is controlled on the statin.",
	"A: I'll add empagliflozin 10 milligrams every morning and continue the metformin. I'm referring you to podiatry, and please book your yearly eye exam.",
	"B: Will the new pill cause lows?",
	"A: Not on its own. Drink plenty of water, and call if you get a urinary infection. We'll check your A1C and kidney function in three months.",
}

var salesDiscovery = []string{
	"A: Thanks for making time, Marcus. I'm Priya Castellane from Routewise Freight Software. Could you walk me through how deliveries run today?",
	"B: Sure. I'm operations director at Bluefen Home Goods. We run 40 trucks out of two warehouses, and dispatch plans routes in spreadsheets every morning.",
	"A: What's the biggest pain with that?",
	"B: Late deliveries. About 12 percent of our drops miss their window, and customers call us to complain.",
	"A: What have you tried so far?",
	"B: We rolled out another routing tool two years ago, and the drivers hated it. Adoption is my main worry this time.",
	"A: That's fair. Our driver app works offline and needs one tap per stop. Does it have to connect to your warehouse system?",
	"B: Yes, we use StackPoint for warehouse management, and orders must flow in automatically.",
	"A: We have a StackPoint connector already. Have you set aside a budget?",
	"B: Somewhere between 60 and 80 thousand dollars a year. Honestly, your list price looked high.",
	"A: Understood. Most customers recover that from fuel savings within a year. Who else is involved in the decision?",
	"B: Our finance director, Helen Strathmore, signs off. She'll want a security review too.",
	"A: And the timeline?",
	"B: We need a pilot running before peak season starts in October, so we'd decide by the end of August.",
	"A: Then here's a plan. I'll send our security questionnaire today, and next Tuesday we'll demo the driver app for your dispatchers. After that I'll propose a six week pilot at one warehouse.",
	"B: That works. Please send the invite to me and Helen.",
}

var salesRenewal = []string{
	"A: Hi Dana, it's Owen Halloway from Ledgerleaf. Thanks for joining. Your contract renews on March 31, so I wanted to plan that with you.",
	"B: Thanks, Owen. As IT director at Pinecrest Dental Group, I have to tell you that renewal is not automatic this year.",
	"A: I appreciate the honesty. What's changed?",
	"B: Two things. First, the quote shows an 8 percent price increase, and our budget is frozen at last year's 54 thousand dollars.",
	"B: Second, our new compliance officer needs your SOC 2 Type 2 report and proof that patient files stay in the United States.",
	"A: Both are fair. The SOC 2 report is current, and all customer data stays in our US data centers. Are you using single sign on yet?",
	"B: No, and we want SAML with our identity provider. Right now staff share passwords for the billing module, which worries me.",
	"A: SAML is included in the business tier. How many seats do you need?",
	"B: We're at 120 seats, and a new clinic opens in May, so maybe 140.",
	"A: Are you looking at other vendors?",
	"B: Vaultora quoted us about 15 percent less, but migrating five years of records would be painful.",
	"A: Understood. If you sign a two year term, I can hold your current price and add the 20 new seats at the same rate.",
	"B: That could fit the budget. I'd need to see it in writing.",
	"A: Great. Today I'll send the SOC 2 report and a data residency letter. On Thursday our security engineer can walk your compliance officer through SAML setup, and I'll send the two year proposal by Friday.",
	"B: Perfect. Send the invite to me and to Ravi Sundqvist, our compliance officer.",
}

var fieldRoof = []string{
	"A: This is Rafe Tillinghast, roof inspection at 1422 Larkspur Lane for the owner, Gwen Abernathy. It's an asphalt shingle roof, about 15 years old.",
	"B: Thanks for coming. We noticed a water stain on the upstairs ceiling after the last storm.",
	"A: Let's go through the checklist. Shingles first. Several shingles are cracked on the north slope near the ridge. That's a minor issue, but they should be replaced.",
	"A: Now the chimney flashing. The step flashing on the uphill side of the chimney is missing, and the attic decking below it has a water stain. That's a major issue and the likely source of your leak.",
	"A: Code reference for that is International Residential Code section R905.2.8.3, flashing where the roof meets a wall or chimney.",
	"B: How about the soft spot near the back?",
	"A: I measured moisture in the decking near the south valley at 28 percent. The spec is below 19 percent, so it's out of spec. The decking there feels soft, a major issue.",
	"A: Roof slope measures 6 in 12. Minimum for standard shingles is 2 in 12, so that's within spec.",
	"A: Gutters. The east gutter is pulling away from the fascia by the downspout, a minor issue. Its slope is only one sixteenth of an inch per 10 feet, and the spec is at least one quarter inch per 10 feet.",
	"A: Attic ventilation. The ridge vent is clear and the soffit vents are open. That passes, per code section R806.",
	"A: Plumbing vent boots are sealed and in good shape, and the drip edge is present along all the eaves. Both pass.",
	"B: Is the roof safe for now?",
	"A: Yes. Overall condition is fair. Fix the chimney flashing and replace the wet decking within a month. Replace the cracked shingles and rehang the east gutter at the same time.",
	"B: I'll call a roofer this week.",
}

var fieldElectrical = []string{
	"A: Inspector Odile Brackenridge, panel inspection at 77 Quarry Road with contractor Cass Fernhill. The main panel is 200 amps, in the garage.",
	"B: Morning. We replaced the service last year.",
	"A: Working clearance first. I measure 30 inches of clear space in front of the panel. The code requires 36 inches under NEC 110.26, so it's out of spec. That's a major issue.",
	"A: Panel labeling. Circuits 9 through 16 have no labels. Minor issue, code section 408.4.",
	"A: Breakers. Circuit 14 is double tapped, with two wires under one screw. That breaker isn't listed for two conductors, so it's a major issue. Code section 110.3 B.",
	"B: That's from the old hot tub. We can add a breaker.",
	"A: There's also a missing knockout cover at the lower left of the panel. Minor issue, code section 110.12.",
	"A: Voltage measures 241 volts line to line. The spec is 240 volts plus or minus 5 percent, so it's within spec.",
	"A: Ground rod resistance measures 18 ohms. The spec is 25 ohms or less, within spec.",
	"A: The main bonding jumper is installed, and the garage outlets have working ground fault protection. Both pass.",
	"A: Now the basement subpanel. The neutrals and grounds share the same bar, and there's no separate ground bar. That's critical, since current can flow on the grounding path. Code section 250.142.",
	"B: We'll fix that first.",
	"A: Arc fault breakers on the bedroom circuits trip when tested. That passes.",
	"A: Overall condition is poor until the subpanel is corrected. Separate the neutrals and grounds this week, then fix the other items. I'll reinspect in two weeks.",
}

var translateRepair = []string{
	"A: Buenas tardes, señora Remedios Alcaraz. Soy Ignacio Belmonte, del Taller Hermanos Quiroga. ¿Qué le pasa a la lavadora?",
	"B: Buenas tardes. La lavadora no desagua. Al final del ciclo queda agua en el tambor y la ropa sale empapada.",
	"A: ¿Desde cuándo ocurre?",
	"B: Desde el lunes. Además hace un ruido fuerte, como un zumbido, cuando intenta vaciar.",
	"A: Vamos a revisar el filtro de pelusa primero. Está aquí abajo, detrás de esta tapa.",
	"A: Mire, el filtro está lleno de pelusa y había una moneda atascada. Eso bloquea la bomba de desagüe.",
	"B: ¡Qué barbaridad! ¿Y la bomba está dañada?",
	"A: El zumbido indica que el motor de la bomba sigue funcionando, pero una de las aspas está rota. Hay que cambiar la bomba.",
	"A: También veo que la junta de la puerta tiene una grieta pequeña. Por eso había humedad en el suelo.",
	"B: ¿Cuánto costaría todo?",
	"A: La bomba nueva cuesta cuarenta y cinco euros y la junta treinta. Con la mano de obra son ciento veinte euros en total, con una garantía de seis meses.",
	"B: Me parece bien. ¿Cuándo puede volver?",
	"A: Pido las piezas hoy y vuelvo el jueves por la mañana, a las diez.",
	"A: Mientras tanto, no use la lavadora, y limpie el filtro de pelusa una vez al mes.",
	"B: Perfecto, muchas gracias, Ignacio. Hasta el jueves.",
}

var translateTour = []string{
	"A: Welcome, everyone. My name is Imogen Tallis, and I'll be your guide through the Old Lantern Quarter of Port Averell this morning.",
	"B: Hi, I'm Rafael. How long does the tour take?",
	"A: About two hours. We'll walk about three kilometers, mostly on cobblestones, so watch your step.",
	"A: Our first stop is the Gallowmere Clock Tower, built in 1783. The clock still runs on its original brass gears, and it chimes every quarter hour.",
	"B: Can we go up to the top?",
	"A: Yes, there are 212 steps to the viewing deck. The climb costs four euros, and it closes at five in the afternoon.",
	"A: Next we cross the Saint Wendeline Footbridge. It used to be a drawbridge for fishing boats, and you can still see the old iron winch.",
	"A: On the other side is the Copper Market, open every day except Monday. Try the smoked mackerel and the honey buns.",
	"B: Where do we have lunch?",
	"A: We'll stop at the Harbor Lantern Museum cafe at noon. The museum itself is free on Sundays.",
	"A: Last, we'll see the tide gates. Twice a day they close to protect the harbor from storm surges.",
	"B: What if we get separated from the group?",
	"A: Our meeting point is the fountain in Tillery Square, right in front of the clock tower. My phone number is on your ticket.",
	"A: Please keep your tickets, because they give you ten percent off at the museum shop. All right, let's begin.",
}
