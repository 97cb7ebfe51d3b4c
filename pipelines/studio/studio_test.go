package studio

import (
	"errors"
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

func TestValidate(t *testing.T) {
	long := strings.Repeat("a", MaxPromptChars+1)
	bad := []struct {
		name string
		req  Request
		want string
	}{
		{"no kind", Request{Prompt: ptr("x")}, "kind is required"},
		{"bad kind", Request{Kind: ptr("poem"), Prompt: ptr("x")}, `kind "poem"`},
		{"no prompt", Request{Kind: ptr("image")}, "prompt is required"},
		{"blank prompt", Request{Kind: ptr("image"), Prompt: ptr("  \n")}, "prompt is required"},
		{"long prompt", Request{Kind: ptr("image"), Prompt: &long}, "the limit is 2000"},
		{"control char", Request{Kind: ptr("image"), Prompt: ptr("a\x00b")}, "control character"},
		{"bad utf8", Request{Kind: ptr("image"), Prompt: ptr("a\xffb")}, "UTF-8"},
		{"negative seed", Request{Kind: ptr("image"), Prompt: ptr("x"), Params: &Params{Seed: ptr(int64(-1))}}, "params.seed"},
		{"huge seed", Request{Kind: ptr("image"), Prompt: ptr("x"), Params: &Params{Seed: ptr(int64(1) << 33)}}, "params.seed"},
		{"video 6 s", Request{Kind: ptr("video"), Prompt: ptr("x"), Params: &Params{Seconds: ptr(5.5)}}, "video is up to 5 seconds"},
		{"video 0 s", Request{Kind: ptr("video"), Prompt: ptr("x"), Params: &Params{Seconds: ptr(0.0)}}, "video is up to 5 seconds"},
		{"music 61 s", Request{Kind: ptr("music"), Prompt: ptr("x"), Params: &Params{Seconds: ptr(61.0)}}, "music is up to 60 seconds"},
		{"image seconds", Request{Kind: ptr("image"), Prompt: ptr("x"), Params: &Params{Seconds: ptr(2.0)}}, "not images"},
		{"lyrics on video", Request{Kind: ptr("video"), Prompt: ptr("x"), Params: &Params{Lyrics: ptr("la")}}, "music only"},
		{"long lyrics", Request{Kind: ptr("music"), Prompt: ptr("x"), Params: &Params{Lyrics: ptr(strings.Repeat("l", MaxLyricsChars+1))}}, "params.lyrics holds"},
		{"aspect on music", Request{Kind: ptr("music"), Prompt: ptr("x"), Params: &Params{Aspect: ptr("square")}}, "images only"},
		{"bad aspect", Request{Kind: ptr("image"), Prompt: ptr("x"), Params: &Params{Aspect: ptr("wide")}}, "square, landscape, portrait"},
		{"bad engine", Request{Kind: ptr("music"), Prompt: ptr("x"), Params: &Params{Engine: ptr("a b")}}, "params.engine"},
		{"empty engine", Request{Kind: ptr("music"), Prompt: ptr("x"), Params: &Params{Engine: ptr("")}}, "params.engine"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := Validate(c.req)
			var ie *InputError
			if !errors.As(err, &ie) || !strings.Contains(ie.Msg, c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
	good := []struct {
		name string
		req  Request
		want Spec
	}{
		{"image defaults", Request{Kind: ptr("image"), Prompt: ptr("  a kite ")}, Spec{Kind: Image, Prompt: "a kite", Aspect: "square", Engine: "default"}},
		{"video defaults", Request{Kind: ptr("video"), Prompt: ptr("waves")}, Spec{Kind: Video, Prompt: "waves", Seconds: 5, Engine: "default"}},
		{"music full", Request{Kind: ptr("music"), Prompt: ptr("folk"), Params: &Params{Seed: ptr(int64(7)), Seconds: ptr(60.0), Lyrics: ptr("la la"), Engine: ptr("alt-music")}},
			Spec{Kind: Music, Prompt: "folk", Lyrics: "la la", Seed: 7, SeedSet: true, Seconds: 60, Engine: AltMusicEngine}},
		{"other engine is the default", Request{Kind: ptr("music"), Prompt: ptr("folk"), Params: &Params{Engine: ptr("fast")}}, Spec{Kind: Music, Prompt: "folk", Seconds: 30, Engine: "default"}},
		{"alt-music on video is the default", Request{Kind: ptr("video"), Prompt: ptr("x"), Params: &Params{Engine: ptr("alt-music"), Seconds: ptr(5.0)}}, Spec{Kind: Video, Prompt: "x", Seconds: 5, Engine: "default"}},
		{"portrait", Request{Kind: ptr("image"), Prompt: ptr("x"), Params: &Params{Aspect: ptr("portrait"), Seed: ptr(int64(4294967295))}}, Spec{Kind: Image, Prompt: "x", Aspect: "portrait", Seed: 4294967295, SeedSet: true, Engine: "default"}},
	}
	for _, c := range good {
		t.Run(c.name, func(t *testing.T) {
			sp, err := Validate(c.req)
			if err != nil || sp != c.want {
				t.Errorf("Validate = %+v, %v; want %+v", sp, err, c.want)
			}
		})
	}
}
