package axe

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoadCriteria: the WCAG criteria CSV (the one CSV reader of the
// box; it ships in the data directory, which an operator may replace)
// never panics the reader, whatever its columns, quoting or row lengths:
// it loads at least 80 criteria, each under its own number, or says why
// not.
func FuzzLoadCriteria(f *testing.F) {
	var b strings.Builder
	b.WriteString("num,title,level,since,url\n")
	for i := range 86 {
		fmt.Fprintf(&b, "%d.%d.%d,\"Title, %d\",AA,2.0,https://www.w3.org/TR/WCAG22/#c%d\n", i/30+1, i/10%3+1, i%10+1, i, i)
	}
	f.Add(b.String())
	f.Add("url,level,title,num\nx,A,T,1.1.1\n")
	f.Add("num,title,level,url\n1.1.1,\"unclosed,A,u\n")
	f.Add("num,title,level,url\n1.1.1,a\n")
	f.Add("num,num,title,level,url\n1,2,t,A,u\n")
	f.Add("\ufeffnum,title,level,url\r\n1.1.1,t,A,u\r\n")
	f.Add("")
	dir := f.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "wcag"), 0o755); err != nil {
		f.Fatal(err)
	}
	path := filepath.Join(dir, "wcag", "wcag22-success-criteria.csv")
	f.Fuzz(func(t *testing.T, csv string) {
		if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := LoadCriteria(dir)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "axe: WCAG 2.2 criteria: ") {
				t.Fatalf("error %q", err)
			}
			return
		}
		if len(got) < 80 {
			t.Fatalf("loaded %d criteria", len(got))
		}
		for num, c := range got {
			if c.SC != num {
				t.Fatalf("criterion %q filed under %q", c.SC, num)
			}
		}
	})
}
