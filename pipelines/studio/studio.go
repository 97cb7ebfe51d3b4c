// Package studio is the media studio route family without HTTP: job
// requests and their validation, the prompt policy (a deterministic rule
// layer and a model judge over the chat service), the in-memory job queue
// and its state machine, abuse reports stored under the state directory,
// and the gallery listing of rendered files that exist on disk.
//
// This version of boxd runs no render worker: jobs are accepted, checked
// against the policy and queued, and stay queued with a note that says so.
// The queue's transitions (Start, Finish, Fail) are what a worker drives.
package studio

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"unicode/utf8"

	"boxd/internal/problem"
)

// Kind is what a job renders.
type Kind string

// The job kinds of the contract.
const (
	Music Kind = "music"
	Image Kind = "image"
	Video Kind = "video"
)

// Limits of a job request.
const (
	MaxPromptChars = 2000
	MaxLyricsChars = 4000
	MaxEngineChars = 64
	MaxVideoSec    = 5  // the video model renders up to 5 s at 16 fps
	MaxMusicSec    = 60 // music up to 60 s
	DefaultVideoS  = 5
	DefaultMusicS  = 30
	JobsPerToken   = 3
	// AltMusicEngine selects the alternative music engine; any other
	// engine value uses the default.
	AltMusicEngine = "alt-music"
)

// Aspects of an image.
var Aspects = []string{"square", "landscape", "portrait"}

// Params are a job's optional parameters.
type Params struct {
	Seed    *int64   `json:"seed"`
	Seconds *float64 `json:"seconds"`
	Lyrics  *string  `json:"lyrics"`
	Aspect  *string  `json:"aspect"`
	Engine  *string  `json:"engine"`
}

// Request is the body of POST /studio/jobs.
type Request struct {
	Kind   *string `json:"kind"`
	Prompt *string `json:"prompt"`
	Params *Params `json:"params"`
}

// Spec is a validated job request with its defaults filled in.
type Spec struct {
	Kind    Kind
	Prompt  string
	Lyrics  string // music only
	Seed    uint32
	SeedSet bool
	Seconds float64 // music and video
	Aspect  string  // image only
	Engine  string  // "default" or AltMusicEngine
}

// InputError is a request the caller must fix (400).
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

func inputErr(format string, args ...any) *InputError {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

var engineName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// Validate checks a request and returns its spec, or an *InputError.
func Validate(req Request) (Spec, error) {
	sp, err := validate(req)
	return sp, invalid(err)
}

// invalid is an *InputError as the problem.Invalid it is told as (the
// *InputError stays in the chain); other errors pass through.
func invalid(err error) error {
	var ie *InputError
	if errors.As(err, &ie) {
		return problem.Wrap(problem.Invalid, ie, "%s", ie.Msg)
	}
	return err
}

func validate(req Request) (Spec, error) {
	var sp Spec
	if req.Kind == nil || *req.Kind == "" {
		return sp, inputErr("kind is required: music, image or video")
	}
	switch k := Kind(*req.Kind); k {
	case Music, Image, Video:
		sp.Kind = k
	default:
		return sp, inputErr("kind %q: use music, image or video", *req.Kind)
	}
	if req.Prompt == nil || strings.TrimSpace(*req.Prompt) == "" {
		return sp, inputErr("prompt is required: describe what to make")
	}
	if err := checkText("prompt", *req.Prompt, MaxPromptChars); err != nil {
		return sp, err
	}
	sp.Prompt = strings.TrimSpace(*req.Prompt)
	sp.Engine = "default"
	switch sp.Kind {
	case Music:
		sp.Seconds = DefaultMusicS
	case Video:
		sp.Seconds = DefaultVideoS
	case Image:
		sp.Aspect = "square"
	}
	p := req.Params
	if p == nil {
		return sp, nil
	}
	if p.Seed != nil {
		if *p.Seed < 0 || *p.Seed > math.MaxUint32 {
			return sp, inputErr("params.seed is %d; use a whole number from 0 to %d", *p.Seed, uint32(math.MaxUint32))
		}
		sp.Seed, sp.SeedSet = uint32(*p.Seed), true
	}
	if p.Seconds != nil {
		s := *p.Seconds
		switch sp.Kind {
		case Image:
			return sp, inputErr("params.seconds applies to music and video, not images; remove it")
		case Video:
			if s <= 0 || s > MaxVideoSec {
				return sp, inputErr("params.seconds is %g; video is up to %d seconds (more than 0)", s, MaxVideoSec)
			}
		case Music:
			if s <= 0 || s > MaxMusicSec {
				return sp, inputErr("params.seconds is %g; music is up to %d seconds (more than 0)", s, MaxMusicSec)
			}
		}
		sp.Seconds = s
	}
	if p.Lyrics != nil {
		if sp.Kind != Music {
			return sp, inputErr("params.lyrics applies to music only; remove it")
		}
		if err := checkText("params.lyrics", *p.Lyrics, MaxLyricsChars); err != nil {
			return sp, err
		}
		sp.Lyrics = strings.TrimSpace(*p.Lyrics)
	}
	if p.Aspect != nil {
		if sp.Kind != Image {
			return sp, inputErr("params.aspect applies to images only; remove it")
		}
		ok := false
		for _, a := range Aspects {
			ok = ok || a == *p.Aspect
		}
		if !ok {
			return sp, inputErr("params.aspect %q: use %s", *p.Aspect, strings.Join(Aspects, ", "))
		}
		sp.Aspect = *p.Aspect
	}
	if p.Engine != nil {
		e := *p.Engine
		if e == "" || len(e) > MaxEngineChars || !engineName.MatchString(e) {
			return sp, inputErr("params.engine must be 1 to %d letters, digits, dots, dashes or underscores (%q selects the alternative music engine)", MaxEngineChars, AltMusicEngine)
		}
		if e == AltMusicEngine && sp.Kind == Music {
			sp.Engine = AltMusicEngine
		}
	}
	return sp, nil
}

// checkText refuses invalid UTF-8, control characters other than line
// breaks and tabs, and text longer than max characters.
func checkText(name, s string, max int) *InputError {
	if !utf8.ValidString(s) {
		return inputErr("%s is not valid UTF-8", name)
	}
	if n := utf8.RuneCountInString(s); n > max {
		return inputErr("%s holds %d characters; the limit is %d", name, n, max)
	}
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' && r != '\r' || r == 0x7f {
			return inputErr("%s holds a control character (U+%04X); send plain text", name, r)
		}
	}
	return nil
}
