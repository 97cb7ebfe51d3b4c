package oral

// Sample is a synthetic transcript for a rubric (GET /oral/samples and
// sample_id).
type Sample struct {
	ID     string   `json:"id"`
	Rubric string   `json:"rubric"`
	Title  string   `json:"title"`
	Expect string   `json:"expect"` // strong or weak
	Lines  []InLine `json:"lines"`
}

func e(t string) InLine { return InLine{Role: Examiner, Text: t} }
func c(t string) InLine { return InLine{Role: Candidate, Text: t} }

// Samples are two transcripts per rubric: a strong and a weak candidate.
// Every name, institution and figure is invented.
func Samples() []Sample {
	return []Sample{
		{ID: "stats-strong", Rubric: "intro-stats-viva", Title: "Statistics viva, a strong candidate", Expect: "strong", Lines: []InLine{
			e("Good morning. Could you introduce yourself?"),
			c("Good morning, my name is Maria Lopez and I am in the second year of the nursing programme."),
			e("Thanks, Maria. Here are waiting times in minutes from our clinic. How would you describe the centre and the spread of this data?"),
			c("The data is right skewed because a few patients waited over an hour, so I would report the median rather than the mean as the centre."),
			c("For the spread I would give the interquartile range, since the standard deviation is pulled up by the outliers in the long tail."),
			e("The study found p = 0.03 for the difference between the two clinics. What does that tell you?"),
			c("If there were really no difference between the clinics, a difference at least this large would turn up about three percent of the time, so we reject the null hypothesis at the five percent level."),
			c("It does not tell us the probability that the null hypothesis is true, and it says nothing about how large the difference is, so I would look at the confidence interval too."),
			e("What has to be true about the data for that test to work?"),
			c("The two samples should be independent random samples, and with samples this small the waiting times should be roughly normal, or I would use a rank test instead."),
			c("I would check normality with a histogram or a normal quantile plot before choosing the test."),
			e("Which method would you use to compare the clinics, and why?"),
			c("A two sample t-test on the log of the waiting times, because the logs look roughly normal; I would compare it with a Mann-Whitney test as a check."),
		}},
		{ID: "stats-weak", Rubric: "intro-stats-viva", Title: "Statistics viva, a weak candidate", Expect: "weak", Lines: []InLine{
			e("Hello. Please tell me your name for the record."),
			c("Hi, I'm Tom."),
			e("Thanks, Tom. How would you describe the centre of this data?"),
			c("I think you just add them up and it is the average, that is the answer."),
			e("The p-value is the probability that the null hypothesis is true, isn't it?"),
			c("Yes, I think so, the p-value is the chance the result is right."),
			e("Surely the data has to be normal for the test, right?"),
			c("Yes."),
			e("Which method would you use to compare the two clinics?"),
			c("Maybe a graph. I am not sure which one."),
		}},
		{ID: "support-strong", Rubric: "support-specialist-interview", Title: "Support interview, a strong candidate", Expect: "strong", Lines: []InLine{
			e("Welcome. Could you introduce yourself briefly?"),
			c("Thank you. I'm Priya and I have worked on a service desk for three years."),
			e("A customer says the app stopped working this morning. What do you do first?"),
			c("I would ask what exactly they see, the error message and the app version, and whether it worked yesterday, then try to reproduce it on the same version."),
			c("If I can reproduce it I check the logs and the status page to isolate the cause before suggesting a fix, and afterwards I ask them to test so I know the fix worked."),
			e("How would you keep the customer informed while you investigate?"),
			c("I would say I understand it is frustrating, tell them what I am checking and when to expect the next update, and follow up at that time even if I have no news."),
			e("When would you pass a problem on to another team?"),
			c("When it affects many customers or needs a code change, I escalate to engineering with a ticket that has the steps to reproduce, the logs, the version and the priority."),
			e("How would you explain a cache to a customer who is not technical?"),
			c("I would explain it in plain words: the app keeps a copy of things it used recently so it does not fetch them again, and I would make sure they understood by asking them to clear it with me step by step."),
		}},
		{ID: "support-weak", Rubric: "support-specialist-interview", Title: "Support interview, a weak candidate", Expect: "weak", Lines: []InLine{
			e("Hi. Before we start, where are you originally from?"),
			c("Oh, from up north."),
			e("A customer says the app stopped working. What do you do?"),
			c("Tell them to reinstall it."),
			e("You'd agree that keeping the customer updated matters, wouldn't you?"),
			c("Yes, sure."),
			e("When would you escalate a problem?"),
			c("I would just send everything to the developers."),
			e("How would you explain a cache?"),
			c("It is the cache, the TTL expires and the CDN invalidates it."),
		}},
	}
}

// SampleByID is a sample, nil when there is none of that id.
func SampleByID(id string) *Sample {
	for _, s := range Samples() {
		if s.ID == id {
			return &s
		}
	}
	return nil
}
