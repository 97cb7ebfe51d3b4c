package fill

import (
	"testing"

	"boxd/internal/run"
)

// TestAnsweredCountsFields: as the model's answer comes, in pieces cut
// anywhere (inside the "fid" key too), the run's progress counts the
// fields answered: an answer is whole once the next begins, a "fid"
// inside a value is not an answer, and the count never passes the total.
func TestAnsweredCountsFields(t *testing.T) {
	answer := `{"answers":[{"fid":"f1","doc":"a.txt","line":2,"value":"Ana"},{"fid":"f2","doc":"a.txt","line":0,"value":"he wrote \"fid\""},{"fid":"f3","doc":"a.txt","line":3,"value":"x"}]}`
	for _, size := range []int{1, 2, 3, 4, 7, 500} {
		em := run.NewEmitter(func(run.Event) error { return nil }, nil, 0)
		stream := answered(em, 3)
		if p := em.ProgressNow(); p.Unit != "fields" || p.Done != 0 || p.Total != 3 {
			t.Fatalf("before the answer: %+v", p)
		}
		var seen []int
		for i := 0; i < len(answer); i += size {
			_ = stream(answer[i:min(i+size, len(answer))])
			seen = append(seen, em.ProgressNow().Done)
		}
		if last := seen[len(seen)-1]; last != 2 {
			t.Errorf("pieces of %d bytes: %d fields done at the end of the answer (the last one is whole when the call ends), want 2: %v", size, last, seen)
		}
		for i := 1; i < len(seen); i++ {
			if seen[i] < seen[i-1] {
				t.Errorf("pieces of %d bytes: the count went back: %v", size, seen)
				break
			}
		}
		em.Close()
	}
	em := run.NewEmitter(func(run.Event) error { return nil }, nil, 0)
	defer em.Close()
	stream := answered(em, 1)
	_ = stream(`{"fid":"f1"},{"fid":"f1"},{"fid":"f1"},{"fid":"f1"}`)
	if p := em.ProgressNow(); p.Done != 1 || p.Total != 1 {
		t.Errorf("more answers than fields: %+v", p)
	}
}
