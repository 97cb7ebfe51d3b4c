package studio

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestValidateReport(t *testing.T) {
	bad := []struct {
		name string
		in   ReportInput
		want string
	}{
		{"neither", ReportInput{Category: ptr("other")}, "item or job is required"},
		{"both", ReportInput{Item: ptr("a"), Job: ptr("b"), Category: ptr("other")}, "not both"},
		{"empty item", ReportInput{Item: ptr(""), Category: ptr("other")}, "item must be an id"},
		{"odd id", ReportInput{Job: ptr("../x"), Category: ptr("other")}, "job must be an id"},
		{"no category", ReportInput{Item: ptr("a")}, "category is none"},
		{"job category", ReportInput{Item: ptr("a"), Category: ptr("real_artist")}, `category is "real_artist"; use one of copyright`},
		{"long details", ReportInput{Item: ptr("a"), Category: ptr("other"), Details: ptr(strings.Repeat("d", MaxDetailsChars+1))}, "details holds"},
		{"long contact", ReportInput{Item: ptr("a"), Category: ptr("other"), Contact: ptr(strings.Repeat("c", MaxContactChars+1))}, "contact holds"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := ValidateReport(c.in)
			var ie *InputError
			if !errors.As(err, &ie) || !strings.Contains(ie.Msg, c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
	r, err := ValidateReport(ReportInput{Job: ptr("job_1"), Category: ptr("privacy"), Details: ptr(" shows my house "), Contact: ptr("a@b.c")})
	if err != nil || r.Job != "job_1" || r.Item != "" || r.Category != "privacy" || r.Details != "shows my house" || r.Contact != "a@b.c" {
		t.Errorf("ValidateReport = %+v, %v", r, err)
	}
}

func TestReportsFileAndLimit(t *testing.T) {
	clk := newTClock()
	dir := filepath.Join(t.TempDir(), "studio", "reports")
	rs := &Reports{Dir: dir, Now: clk.now}
	in := Report{Item: "item-1", Category: "copyright", Details: "copies a poster", Contact: "me@example.org"}
	var first Report
	for i := range ReportsPerHour {
		r, err := rs.File("127.0.0.1", in)
		if err != nil {
			t.Fatalf("report %d: %v", i+1, err)
		}
		if i == 0 {
			first = r
		}
		if !strings.HasPrefix(r.ReportID, "rp_") || r.Received != clk.now().Unix() {
			t.Errorf("report = %+v", r)
		}
		clk.add(time.Minute)
	}
	// The same network from another port, and an IPv6 neighbour in the same /64.
	_, err := rs.File("127.0.0.1", in)
	var re *RateError
	if !errors.As(err, &re) || re.Count != ReportsPerHour || re.RetryAfter != 55*time.Minute {
		t.Fatalf("6th report: %v %+v", err, re)
	}
	if _, err := rs.File("127.0.0.2", in); err != nil {
		t.Errorf("another address: %v", err)
	}
	for i := range ReportsPerHour {
		if _, err := rs.File("2001:db8::/64", in); err != nil {
			t.Fatalf("v6 %d: %v", i, err)
		}
	}
	if _, err := rs.File("2001:db8::/64", in); !errors.As(err, &re) {
		t.Errorf("same /64: %v", err)
	}
	clk.add(55 * time.Minute)
	if _, err := rs.File("127.0.0.1", in); err != nil {
		t.Errorf("after the window: %v", err)
	}

	// Stored: one 0600 file per report in a 0700 directory, nothing else.
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("dir: %v %v", fi.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2*ReportsPerHour+2 {
		t.Errorf("%d files stored", len(entries))
	}
	for _, e := range entries {
		info, _ := e.Info()
		if info.Mode().Perm() != 0o600 || !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			t.Errorf("%s: %v", e.Name(), info.Mode())
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, first.ReportID+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(raw, &back); err != nil || back != first {
		t.Errorf("stored %+v, %v; want %+v", back, err, first)
	}
}

func TestReportsUnwritableStoresNothing(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	rs := &Reports{Dir: filepath.Join(file, "reports")}
	if _, err := rs.File("127.0.0.1", Report{Item: "a", Category: "other"}); err == nil {
		t.Fatal("a report under a file was stored")
	}
	if rs.recent != nil && rs.recent.Keys() != 0 {
		t.Error("a report not stored counts toward the limit")
	}
}

// TestReportsStoreBound: at most MaxStored reports are kept, counting the
// files already there after a restart.
func TestReportsStoreBound(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "reports")
	rs := &Reports{Dir: dir, MaxStored: 2}
	in := Report{Item: "a", Category: "other"}
	for i, network := range []string{"10.0.0.1", "10.0.0.2"} {
		if _, err := rs.File(network, in); err != nil {
			t.Fatalf("report %d: %v", i, err)
		}
	}
	if _, err := rs.File("10.0.0.3", in); !errors.Is(err, ErrReportsFull) {
		t.Errorf("third report: %v, want ErrReportsFull", err)
	}
	// After a restart the stored files are counted.
	if _, err := (&Reports{Dir: dir, MaxStored: 2}).File("10.0.0.4", in); !errors.Is(err, ErrReportsFull) {
		t.Errorf("after a restart: %v", err)
	}
	if _, err := (&Reports{Dir: dir, MaxStored: 3}).File("10.0.0.4", in); err != nil {
		t.Errorf("with room: %v", err)
	}
}

// TestReportsStoreRecounts: a full store is counted again at each report,
// so reports the operator removed make room without a restart.
func TestReportsStoreRecounts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "reports")
	rs := &Reports{Dir: dir, MaxStored: 1}
	first, err := rs.File("10.0.0.1", Report{Item: "a", Category: "other"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.File("10.0.0.2", Report{Item: "a", Category: "other"}); !errors.Is(err, ErrReportsFull) {
		t.Fatalf("full: %v", err)
	}
	if err := os.Remove(filepath.Join(dir, first.ReportID+".json")); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.File("10.0.0.2", Report{Item: "a", Category: "other"}); err != nil {
		t.Errorf("after the operator removed one: %v", err)
	}
}
