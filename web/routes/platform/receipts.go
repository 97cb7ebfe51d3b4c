package platform

import (
	"errors"
	"net/http"

	"boxd/internal/problem"
	"boxd/internal/receipts"
	"boxd/web/api"
)

// getReceipt serves GET /receipts/{id}: the stored receipt with its checks
// recomputed (receipts.Record).
func (s *routes) getReceipt(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if len(id) > 128 {
		api.WriteProblem(w, problem.New(problem.NotFound, "%s", "no receipt with that id"))
		return
	}
	rec, err := s.receipts.Read(r.Context(), id)
	if errors.Is(err, receipts.ErrNotFound) {
		api.WriteProblem(w, problem.New(problem.NotFound, "no receipt %q on this box (receipts are kept %d days)", id, s.cfg.Receipts.RetentionDays))
		return
	}
	if err != nil {
		s.log.Error("read receipt", "id", id, "err", err)
		api.WriteProblem(w, problem.New(problem.Internal, "%s", "could not read the receipt; see the server log"))
		return
	}
	api.WriteJSON(w, http.StatusOK, rec)
}
