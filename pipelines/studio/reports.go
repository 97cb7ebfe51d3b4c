package studio

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"boxd/internal/atomicfile"
	"boxd/internal/ids"
	"boxd/internal/problem"
	"boxd/internal/window"
)

// Report limits.
const (
	ReportsPerHour    = 5
	MaxDetailsChars   = 2000
	MaxContactChars   = 200
	MaxReportIDChars  = 128
	reportFilePerm    = 0o600
	reportDirPerm     = 0o700
	reportWindow      = time.Hour
	reportIDPrefix    = "rp_"
	reportIDRandBytes = 12
)

// ReportInput is the body of POST /studio/report.
type ReportInput struct {
	Item     *string `json:"item"`
	Job      *string `json:"job"`
	Category *string `json:"category"`
	Details  *string `json:"details"`
	Contact  *string `json:"contact"`
}

// Report is a validated report as stored.
type Report struct {
	ReportID string `json:"report_id"`
	Received int64  `json:"received"`
	Item     string `json:"item,omitempty"`
	Job      string `json:"job,omitempty"`
	Category string `json:"category"`
	Details  string `json:"details,omitempty"`
	Contact  string `json:"contact,omitempty"`
}

// CheckTargetID checks the id of a reported item or job (field names it):
// nil, or an *InputError that says what to send.
func CheckTargetID(field, id string) error {
	if !itemID.MatchString(id) { // the ids gallery items and jobs have
		return inputErr("%s must be an id of 1 to %d letters, digits, dashes or underscores", field, MaxReportIDChars)
	}
	return nil
}

// ValidateReport checks a report body; errors are *InputError.
func ValidateReport(in ReportInput) (Report, error) {
	r, err := validateReport(in)
	return r, invalid(err)
}

func validateReport(in ReportInput) (Report, error) {
	var r Report
	switch {
	case in.Item != nil && in.Job != nil:
		return r, inputErr("send either item or job, not both")
	case in.Item == nil && in.Job == nil:
		return r, inputErr("item or job is required: the id of the gallery item or job being reported")
	}
	target := in.Item
	name := "item"
	if in.Job != nil {
		target, name = in.Job, "job"
	}
	if err := CheckTargetID(name, *target); err != nil {
		return r, err
	}
	if in.Item != nil {
		r.Item = *in.Item
	} else {
		r.Job = *in.Job
	}
	if in.Category == nil || !IsReportCategory(*in.Category) {
		got := "none"
		if in.Category != nil {
			got = fmt.Sprintf("%q", *in.Category)
		}
		cats := make([]string, len(ReportCategories))
		for i, c := range ReportCategories {
			cats[i] = c.Category
		}
		return r, inputErr("category is %s; use one of %s", got, strings.Join(cats, ", "))
	}
	r.Category = *in.Category
	if in.Details != nil {
		if err := checkText("details", *in.Details, MaxDetailsChars); err != nil {
			return r, err
		}
		r.Details = strings.TrimSpace(*in.Details)
	}
	if in.Contact != nil {
		if err := checkText("contact", *in.Contact, MaxContactChars); err != nil {
			return r, err
		}
		r.Contact = strings.TrimSpace(*in.Contact)
	}
	return r, nil
}

// RateError is a report over the per-address limit.
type RateError struct {
	Count      int
	RetryAfter time.Duration
}

func (e *RateError) Error() string {
	return fmt.Sprintf("this address filed %d reports in the last hour (limit %d); retry after the time in Retry-After", e.Count, ReportsPerHour)
}

// Reports stores reports as one JSON file each (mode 0600) in Dir (mode
// 0700) and limits them per client network.
type Reports struct {
	Dir string
	Now func() time.Time // nil: time.Now
	// MaxStored bounds the reports kept in Dir (0: MaxStoredReports); the
	// hourly limit is per network, and a client with many IPv6 /64s could
	// otherwise fill the disk.
	MaxStored int

	mu      sync.Mutex
	recent  *window.Limiter // per network: reports stored in the last hour
	stored  int             // reports in Dir, once counted
	counted bool
}

// MaxStoredReports is the default bound on stored reports.
const MaxStoredReports = 10000

// ErrReportsFull: the box holds MaxStored reports; the operator reviews
// and removes them.
var ErrReportsFull = errors.New("studio reports: the store is full")

func (rs *Reports) now() time.Time {
	if rs.Now == nil {
		return time.Now()
	}
	return rs.Now()
}

// File stores a validated report from a client in network (its address
// grouped as the demo-session limits group it: platform.Network) and
// returns it with its id and time. Over ReportsPerHour per network it
// returns a *RateError and stores nothing.
func (rs *Reports) File(network string, r Report) (Report, error) {
	now := rs.now()
	rs.mu.Lock()
	defer rs.mu.Unlock() // held across the write: the count and the file agree
	if rs.recent == nil {
		rs.recent = window.New(reportWindow)
	}
	if v := rs.recent.Check(network, ReportsPerHour, now); !v.OK {
		re := &RateError{Count: v.Count, RetryAfter: v.RetryAfter}
		return Report{}, problem.Wrap(problem.RateLimited, re, "%s", re.Error()).Retry(re.RetryAfter)
	}
	if !rs.counted {
		n, err := countReports(rs.Dir)
		if err != nil {
			return Report{}, err
		}
		rs.stored, rs.counted = n, true
	}
	max := rs.MaxStored
	if max <= 0 {
		max = MaxStoredReports
	}
	if rs.stored >= max {
		// The operator may have removed reports since they were counted.
		n, err := countReports(rs.Dir)
		if err != nil {
			return Report{}, err
		}
		if rs.stored = n; n >= max {
			return Report{}, problem.Wrap(problem.Unavailable, fmt.Errorf("%w: %d reports in %s", ErrReportsFull, n, rs.Dir),
				"this box holds the most studio reports it keeps; the operator must review them before more are taken")
		}
	}
	r.ReportID = newReportID()
	r.Received = now.Unix()
	if err := rs.write(r); err != nil {
		return Report{}, err
	}
	rs.stored++
	rs.recent.Record(network, now)
	return r, nil
}

// countReports counts the stored reports in dir (none when it does not
// exist yet).
func countReports(dir string) (int, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("studio reports: %w", err)
	}
	n := 0
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".json") {
			n++
		}
	}
	return n, nil
}

// write stores r atomically: a temporary file, synced, renamed into place.
func (rs *Reports) write(r Report) error {
	if err := os.MkdirAll(rs.Dir, reportDirPerm); err != nil {
		return fmt.Errorf("studio reports: %w", err)
	}
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("studio reports: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(rs.Dir, r.ReportID+".json"), append(raw, '\n'), reportFilePerm); err != nil {
		return fmt.Errorf("studio reports: write %s: %w", r.ReportID, err)
	}
	return nil
}

func newReportID() string { return ids.New(reportIDPrefix, reportIDRandBytes) }

// PolicyInfo is GET /studio/policy.
type PolicyInfo struct {
	PolicyURL        string      `json:"policy_url"`
	Text             string      `json:"text"`
	PromptCategories []Described `json:"prompt_categories"`
	ReportCategories []Described `json:"report_categories"`
	Limits           Limits      `json:"limits"`
	RenderWorker     bool        `json:"render_worker"`
}

// Limits are the studio's limits (contract section 8).
type Limits struct {
	JobsPerToken             int     `json:"jobs_per_token"`
	ReportsPerAddressPerHour int     `json:"reports_per_address_per_hour"`
	PromptChars              int     `json:"prompt_chars"`
	LyricsChars              int     `json:"lyrics_chars"`
	VideoSeconds             float64 `json:"video_seconds"`
	MusicSeconds             float64 `json:"music_seconds"`
}

// Info is the studio's policy and limits (GET /studio/policy).
func Info() PolicyInfo {
	return PolicyInfo{
		PolicyURL: PolicyURL, Text: PolicyText,
		PromptCategories: JobCategories, ReportCategories: ReportCategories,
		Limits: Limits{
			JobsPerToken: JobsPerToken, ReportsPerAddressPerHour: ReportsPerHour,
			PromptChars: MaxPromptChars, LyricsChars: MaxLyricsChars,
			VideoSeconds: MaxVideoSec, MusicSeconds: MaxMusicSec,
		},
	}
}

// ReportForm is GET /studio/report: how to file a report about one item
// or job.
type ReportForm struct {
	Method     string            `json:"method"`
	Action     string            `json:"action"`
	Target     map[string]string `json:"target"`
	Fields     []ReportField     `json:"fields"`
	Categories []Described       `json:"categories"`
	Limit      int               `json:"reports_per_address_per_hour"`
	PolicyURL  string            `json:"policy_url"`
}

// ReportField is one field of the report body.
type ReportField struct {
	Name     string   `json:"name"`
	Type     string   `json:"type"`
	Required bool     `json:"required"`
	Value    string   `json:"value,omitempty"`
	Values   []string `json:"values,omitempty"`
	MaxChars int      `json:"max_chars,omitempty"`
}

// NewReportForm says how to file a report about item or job id (field
// "item" or "job"; GET /studio/report).
func NewReportForm(field, id string) ReportForm {
	cats := make([]string, len(ReportCategories))
	for i, c := range ReportCategories {
		cats[i] = c.Category
	}
	return ReportForm{
		Method: "POST", Action: "/studio/report", Target: map[string]string{field: id},
		Fields: []ReportField{
			{Name: field, Type: "string", Required: true, Value: id},
			{Name: "category", Type: "string", Required: true, Values: cats},
			{Name: "details", Type: "string", MaxChars: MaxDetailsChars},
			{Name: "contact", Type: "string", MaxChars: MaxContactChars},
		},
		Categories: ReportCategories, Limit: ReportsPerHour, PolicyURL: PolicyURL,
	}
}
