package live

import (
	"context"
	"regexp"
	"strings"

	"boxd/engine/asr"
	"boxd/engine/asr/stream"
	"boxd/engine/asr/tokenizer"
	"boxd/internal/problem"
)

// SpeechTranscriber starts live transcribers on the box's speech engine:
// Whisper in the session's spoken language ("auto" detects) with the
// transcribe task (translate sessions are translated by the text model),
// run by a stream.Stream on its own goroutine. A nil engine gives a nil
// StartTranscriber: live sockets then close 1011.
func SpeechTranscriber(e *stream.Engine) StartTranscriber {
	if e == nil {
		return nil
	}
	return func(ctx context.Context, lang string, emit func(stream.Event)) (Transcriber, error) {
		o, err := e.Options(lang, asr.TaskTranscribe)
		if err != nil {
			// The language is the caller's to change (4400 before ready),
			// never a failure to retry.
			if !e.Model.Tokenizer().Multilingual {
				return nil, problem.Wrap(problem.Invalid, err, "lang %s: this box's speech model (%s) is English-only: it transcribes en (lang=en, or auto, which is en on it); to translate from other languages the operator installs a multilingual Whisper model (models.asr.path)", lang, e.Model.Name())
			}
			return nil, problem.Wrap(problem.Invalid, err, "lang %s: %v", lang, err)
		}
		return stream.Start(ctx, e.Session(o), emit), nil
	}
}

// langTag is a language code as clients send it: a base of two or three
// letters and optional subtags (pt-BR, zh-Hans, es_419).
var langTag = regexp.MustCompile(`^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*$`)

// language checks a lang or target value and maps it to its base code
// (pt-BR → pt); auto is allowed for the spoken language only.
func language(name, value string, auto bool) (string, error) {
	if strings.EqualFold(value, "auto") {
		if auto {
			return "auto", nil
		}
		return "", problem.New(problem.Invalid, "%s cannot be auto: name the language to translate into, one of %s (en and es are tested end to end)", name, strings.Join(tokenizer.SpokenLanguages, ", "))
	}
	accepted := strings.Join(tokenizer.SpokenLanguages, ", ")
	if auto {
		accepted = "auto, " + accepted
	}
	if !langTag.MatchString(value) {
		return "", problem.New(problem.Invalid, "%s %q is not a language code; use one of %s (a region such as pt-BR is accepted)", name, value, accepted)
	}
	base := strings.ToLower(value[:strings.IndexFunc(value+"-", func(r rune) bool { return r == '-' || r == '_' })])
	for _, l := range tokenizer.SpokenLanguages {
		if base == l {
			return base, nil
		}
	}
	return "", problem.New(problem.Invalid, "%s %q is not supported; use one of %s", name, value, accepted)
}

// Languages checks translate's lang and target as clients send them (""
// takes the defaults auto and en; a region such as pt-BR maps to its base
// code). Its errors are problem.Invalid and say what to send.
func Languages(lang, target string) (string, string, error) {
	if lang == "" {
		lang = "auto"
	}
	if target == "" {
		target = "en"
	}
	l, err := language("lang", lang, true)
	if err != nil {
		return "", "", err
	}
	tg, err := language("target", target, false)
	if err != nil {
		return "", "", err
	}
	return l, tg, nil
}
