package web

import (
	"net/http"

	"boxd/web/api"

	"boxd/internal/version"
)

// LLMRoute is the model route of a self-hosted box: no gateway.
const LLMRoute = "direct"

// Health is the body of GET /healthz (contract section 4).
type Health struct {
	OK           bool   `json:"ok"`
	ASR          bool   `json:"asr"`
	LLM          bool   `json:"llm"`
	LLMError     string `json:"llm_error,omitempty"`
	LiveSessions int    `json:"live_sessions"`
	Queue        int    `json:"queue"`
	LLMRoute     string `json:"llm_route"`
	Version      string `json:"version"`
	Diarize      bool   `json:"diarize"`
	// Diarizer names what pass 2 diarizes with (a model's name, or the
	// model-free boxd-classical-1); absent when it cannot diarize.
	Diarizer     string       `json:"diarizer,omitempty"`
	DemoSessions DemoSessions `json:"demo_sessions"`
	// RandomWeights names the loaded models with random weights (the
	// quick start's generated test models: they run, and say noise);
	// absent when there are none.
	RandomWeights []string `json:"random_weights,omitempty"`
}

// DemoSessions are the two demo-session limits (docs/decisions.md).
type DemoSessions struct {
	PerAddressPerHour int `json:"per_address_per_hour"`
	PerHour           int `json:"per_hour"`
}

// Health reports the server's state as /healthz does.
func (s *Server) Health() Health {
	var llmErr string
	if s.probes.LLMError != nil {
		llmErr = s.probes.LLMError()
	}
	return Health{
		OK:           !s.api.Draining(),
		ASR:          callBool(s.probes.ASRReady),
		LLM:          callBool(s.probes.LLMReady) && llmErr == "",
		LLMError:     llmErr,
		LiveSessions: callInt(s.probes.LiveSessions),
		Queue:        callInt(s.probes.Queue),
		LLMRoute:     LLMRoute,
		Version:      version.Version,
		Diarize:      s.probes.Diarizer != "",
		Diarizer:     s.probes.Diarizer,
		DemoSessions: DemoSessions{
			PerAddressPerHour: s.cfg.Limits.SessionsPerAddressPerHour,
			PerHour:           s.cfg.Limits.SessionsPerHour,
		},
		RandomWeights: s.probes.RandomWeights,
	}
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	api.WriteJSON(w, http.StatusOK, s.Health())
}
