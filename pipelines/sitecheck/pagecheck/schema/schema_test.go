package schema

import (
	"testing"
)

func TestDateProblem(t *testing.T) {
	cases := []struct{ in, want string }{
		{"2024-01-05", ""},
		{"2024-02-29", ""},
		{"2000-02-29", ""},
		{"1900-02-29", "bad_date"},
		{"2023-02-29", "bad_date"},
		{"2024-04-31", "bad_date"},
		{"2024-12-31", ""},
		{"2024-13-01", "bad_date"},
		{"2024-00-10", "bad_date"},
		{"2024-01-00", "bad_date"},
		{"2024-1-5", "bad_date"},
		{"24-01-05", "bad_date"},
		{"2024/01/05", "bad_date"},
		{"05.01.2024", "bad_date"},
		{"January 5, 2024", "bad_date"},
		{"2024-01-05T08:00", "missing_timezone"},
		{"2024-01-05T08:00:00", "missing_timezone"},
		{"2024-01-05T08:00:00.123456", "missing_timezone"},
		{"2024-01-05T08:00:00Z", ""},
		{"2024-01-05T08:00Z", ""},
		{"2024-01-05T08:00:00+01:00", ""},
		{"2024-01-05T08:00:00-0530", ""},
		{"2024-01-05T08:00:00+01", ""},
		{"2024-01-05T23:59:59+23:59", ""},
		{"2024-01-05T24:00:00Z", "bad_date"},
		{"2024-01-05T08:60:00Z", "bad_date"},
		{"2024-01-05T08:00:60Z", "bad_date"},
		{"2024-01-05T08:00:00+24:00", "bad_date"},
		{"2024-01-05T08:00:00+01:60", "bad_date"},
		{"2024-01-05T08:00:00+1", "bad_date"},
		{"2024-01-05t08:00:00Z", "bad_date"},
		{"2024-01-05 08:00:00Z", "bad_date"},
		{"2024-01-05T08", "bad_date"},
		{"2024-01-05Z", "bad_date"},
		{"2024-01-05T08:00:00z", "bad_date"},
		{"2024-01-05T08:00:00.Z", "bad_date"},
		{"", "bad_date"},
		{"２０２４-01-05", "bad_date"},
	}
	for _, c := range cases {
		if got := dateProblem(c.in); got != c.want {
			t.Errorf("dateProblem(%q) = %q, want %q", c.in, got, c.want)
		}
		if got, want := IsISODate(c.in), c.want != "bad_date"; got != want {
			t.Errorf("IsISODate(%q) = %v, want %v", c.in, got, want)
		}
	}
}

func TestIsAbsoluteURL(t *testing.T) {
	cases := []struct {
		in   string
		want bool
	}{
		{"https://a.example", true},
		{"https://a.example/", true},
		{"HTTP://A.EXAMPLE/x?y#z", true},
		{"https://a.example?q", true},
		{"https://a.example#f", true},
		{"https://user@a.example:8443/p", true},
		{"https://", false},
		{"https:///path", false},
		{"https://a.example/with space", false},
		{" https://a.example/", false},
		{"ftp://a.example/", false},
		{"//a.example/", false},
		{"/path", false},
		{"a.example", false},
		{"mailto:a@b.example", false},
		{"https:a.example", false},
	}
	for _, c := range cases {
		if got := IsAbsoluteURL(c.in); got != c.want {
			t.Errorf("IsAbsoluteURL(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestNormalizeURL(t *testing.T) {
	cases := []struct{ in, want string }{
		{"HTTPS://WWW.A.Example", "https://www.a.example/"},
		{"https://a.example:443/X#f", "https://a.example/X"},
		{"http://a.example:80/", "http://a.example/"},
		{"http://a.example:443/", "http://a.example:443/"},
		{"https://a.example:80/", "https://a.example:80/"},
		{"https://a.example/?q=1#f", "https://a.example/?q=1"},
		{"/relative", "/relative"},
	}
	for _, c := range cases {
		if got := NormalizeURL(c.in); got != c.want {
			t.Errorf("NormalizeURL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestResolveURL(t *testing.T) {
	base := "HTTP://A.example/blog/post.html?x#y"
	cases := []struct{ base, ref, want string }{
		{base, "/img/a.png", "http://A.example/img/a.png"},
		{base, "img/a.png", "http://A.example/blog/img/a.png"},
		{base, "../a.png", "http://A.example/blog/../a.png"},
		{base, "?page=2", "http://A.example/blog/post.html?page=2"},
		{base, "#top", "http://A.example/blog/post.html#top"},
		{base, "//cdn.example/a.png", "http:" + "//cdn.example/a.png"},
		{base, "www.facebook.com/page", "https://www.facebook.com/page"},
		{base, "facebook.com/page", "https://facebook.com/page"},
		{base, "facebook.com", "http://A.example/blog/facebook.com"},
		{"https://a.example", "x", "https://a.example/x"},
		{"", "/x", "https://<your-domain>/x"},
		{"", "x", "https://<your-domain>/x"},
		{"not a url", "?q", "https://<your-domain>/?q"},
	}
	for _, c := range cases {
		if got := resolveURL(c.base, c.ref); got != c.want {
			t.Errorf("resolveURL(%q, %q) = %q, want %q", c.base, c.ref, got, c.want)
		}
	}
}
