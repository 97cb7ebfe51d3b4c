package fill

import (
	"context"

	"boxd/engine/browser"
	"boxd/pipelines/fill/form"
)

// The form's parts as package form reads them.
type (
	// Field is one field of the form as the page shows it.
	Field = form.Field
	// Option is one choice of a select (or a radio group).
	Option = form.Option
	// Flag is page text aimed at an AI agent: withheld from the model,
	// and Submit stays locked until the person acknowledges it by number.
	Flag = form.Flag
)

// Type enters the decided values into the page (form.Type): a field
// filled is typed, a select's option chosen (StatusChosen); a field not
// filled, or one that asks for a secret, is not touched. It returns the
// FIDs of the fields it typed (or chose) into.
func Type(ctx context.Context, tab *browser.Tab, ds []Decided) (map[string]bool, error) {
	es := make([]form.Entry, len(ds))
	for i, d := range ds {
		es[i] = form.Entry{Field: d.Field, Value: d.Value, Fill: d.Filled, Choose: d.Status == StatusChosen}
	}
	return form.Type(ctx, tab, es)
}
