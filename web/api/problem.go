package api

import (
	"net/http"
	"strconv"

	"boxd/internal/problem"
)

// answer is how one problem kind is told to a caller: the HTTP status of
// a refusal before any output, and the WebSocket close code of a socket
// that ends with it (contract document 1 section 7).
type answer struct {
	status int
	close  int
}

// answers is the one table from problem kinds to statuses and close codes.
// Nothing outside web names a status: pipelines return *problem.Error.
var answers = map[problem.Kind]answer{
	problem.Internal:      {http.StatusInternalServerError, 1011},
	problem.Invalid:       {http.StatusBadRequest, 4400},
	problem.Unauthorized:  {http.StatusUnauthorized, 4401},
	problem.Budget:        {http.StatusPaymentRequired, 4402},
	problem.Forbidden:     {http.StatusForbidden, 4403},
	problem.NotFound:      {http.StatusNotFound, 4404},
	problem.Conflict:      {http.StatusConflict, 4409},
	problem.TooLarge:      {http.StatusRequestEntityTooLarge, 1009},
	problem.Unsupported:   {http.StatusUnsupportedMediaType, 4415},
	problem.Unprocessable: {http.StatusUnprocessableEntity, 4422},
	problem.RateLimited:   {http.StatusTooManyRequests, 4429},
	problem.Upstream:      {http.StatusBadGateway, 1011},
	problem.Unavailable:   {http.StatusServiceUnavailable, 1011},
	problem.Busy:          {http.StatusServiceUnavailable, 4429},
	problem.ShuttingDown:  {http.StatusServiceUnavailable, 1001},
	problem.Timeout:       {http.StatusRequestTimeout, 4408},

	problem.MethodNotAllowed:    {http.StatusMethodNotAllowed, 4405},
	problem.Misdirected:         {http.StatusMisdirectedRequest, 4421},
	problem.UpgradeRequired:     {http.StatusUpgradeRequired, 4426},
	problem.RangeNotSatisfiable: {http.StatusRequestedRangeNotSatisfiable, 4416},
	problem.PreconditionFailed:  {http.StatusPreconditionFailed, 4412},
}

// closeCodeOf is the WebSocket close code of err.
func CloseCodeOf(err error) int { return CloseOf(problem.KindOf(err)) }

// closeOf is the WebSocket close code of kind k.
func CloseOf(k problem.Kind) int { return answers[k].close }

// CloseNormal closes a socket after done.
const CloseNormal = 1000

// writeProblem answers err before any output: its status, Retry-After
// (whole seconds rounded up, at least 1) when waiting helps, and
// {"error": message} plus the problem's extra fields.
func WriteProblem(w http.ResponseWriter, err error) {
	p, ok := problem.As(err)
	if !ok {
		p = problem.Wrap(problem.Internal, err, "%s", err.Error())
	}
	if p.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(problem.RetrySeconds(p.RetryAfter)))
	}
	status := answers[p.Kind].status
	if len(p.Fields) == 0 {
		WriteError(w, status, p.Message)
		return
	}
	body := make(map[string]any, len(p.Fields)+1)
	for k, v := range p.Fields {
		body[k] = v
	}
	body["error"] = p.Message
	WriteJSON(w, status, body)
}

// ModelFailure is err as a caller is told it: a *problem.Error as it is
// (a pipeline's or the platform's refusal), any other error as the
// model's failure (502).
func ModelFailure(err error) error {
	if _, ok := problem.As(err); ok {
		return err
	}
	return problem.Wrap(problem.Upstream, err, "the model failed: %s", err.Error())
}
