package workflows

import "go.temporal.io/sdk/workflow"

// CurrentOrderShape is the shape new orders are started with (OrderInput.Shape).
//
// A change to the order workflow is found in a running order's history with
// workflow.GetVersion, which on a new order records a marker and upserts the
// TemporalChangeVersion search attribute: two events and a visibility write
// per change per order, paid on every payment. An order born after a change
// needs neither: its input says which code it was started with, and the
// input is in its history for every replay. Orders started before shapes
// (Shape 0) keep asking GetVersion, exactly as they were recorded.
const CurrentOrderShape = shapeChargeWithRecord

// settled is a change a workflow takes without a marker from a shape on:
// a run of that shape or a later one takes version, a run of an earlier
// shape asks GetVersion, as it was recorded. A change made after a shape
// names a later shape, so the earlier shape's runs keep asking for it.
type settled struct {
	fromShape int
	version   workflow.Version
}

// settledVersion is the version the change takes in a run of shape, and
// whether the shape settles it.
func settledVersion(changes map[string]settled, shape int, changeID string) (workflow.Version, bool) {
	if c, ok := changes[changeID]; ok && shape >= c.fromShape {
		return c.version, true
	}
	return 0, false
}

// orderSettled are the order's changes settled by a shape.
var orderSettled = map[string]settled{
	changeLedgerPosting:   {1, 2},
	changeContinueAsNew:   {1, 1},
	changeCallbackInquiry: {1, 1},
	changeStoredCards:     {1, 1},
}

// shapeLeanFirstTask (shape 2) trims a payment's first workflow task: the
// order's record and its risk check are one local activity, the CVV drop and
// the outcome's write another, a paid order's ledger credit runs beside that
// write rather than after it, and the coroutines that deliver
// notifications and take the shopper's callbacks start only when the order
// has use for them. Every coroutine runs, and yields, on every round of a
// workflow task, and the SDK walks the stack on each yield.
const shapeLeanFirstTask = 2

// lean reports whether the order takes shape 2's changes.
func (w *orderWorkflow) lean() bool { return w.in.Shape >= shapeLeanFirstTask }

// version is workflow.GetVersion for the order's changes, answered from the
// order's shape when the shape settles the change.
func (w *orderWorkflow) version(ctx workflow.Context, changeID string, maxSupported workflow.Version) workflow.Version {
	if v, ok := settledVersion(orderSettled, w.in.Shape, changeID); ok {
		return v
	}
	return workflow.GetVersion(ctx, changeID, workflow.DefaultVersion, maxSupported)
}
