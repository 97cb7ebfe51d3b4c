package classical

import (
	"slices"
	"testing"
)

func TestZZVoicePitch(t *testing.T) {
	for _, v := range []string{"en-us+m3", "en-gb+f4", "en-us+f3", "en-us", "en-gb", "en-us+m1", "en-us+m2", "en-us+m4", "en-us+m5", "en-us+m6", "en-us+m7", "en-us+m8", "en-gb+m1", "en-gb+m2", "en-us+f1", "en-us+f2", "en-us+f5", "en-gb+f1", "en-gb+f2", "en-gb+f5", "en-us+Annie", "en-us+Andrea", "en-us+linda", "en-us+steph", "en-us+grandma", "en-us+Alicia", "en-us+belinda"} {
		x := speak(t, v, 150, "My lower back has been hurting for about two weeks now.")
		p, n := pitchOf(t, x)
		slices.Sort(p)
		if len(p) == 0 {
			t.Logf("%s: none", v)
			continue
		}
		t.Logf("%-16s %.2fs median %.0f Hz  p10 %.0f p90 %.0f voiced %d/%d", v, float64(len(x))/16000, p[len(p)/2], p[len(p)/10], p[len(p)*9/10], len(p), n)
	}
}
