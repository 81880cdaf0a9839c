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
const CurrentOrderShape = shapeFoldedSave

// shapeVersions are the versions of the changes an order of each shape takes
// without a marker. A change made after a shape is not in that shape's table:
// its orders ask GetVersion for it, and a later shape can take it in.
var shapeVersions = map[int]map[string]workflow.Version{
	1: {
		changeLedgerPosting:   2,
		changeContinueAsNew:   1,
		changeCallbackInquiry: 1,
		changeStoredCards:     1,
	},
	shapeLeanFirstTask: {
		changeLedgerPosting:   2,
		changeContinueAsNew:   1,
		changeCallbackInquiry: 1,
		changeStoredCards:     1,
	},
	shapeIdleClose: {
		changeLedgerPosting:   2,
		changeContinueAsNew:   1,
		changeCallbackInquiry: 1,
		changeStoredCards:     1,
	},
	shapeFoldedSave: {
		changeLedgerPosting:   2,
		changeContinueAsNew:   1,
		changeCallbackInquiry: 1,
		changeStoredCards:     1,
	},
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
	if v, ok := shapeVersions[w.in.Shape][changeID]; ok {
		return v
	}
	return workflow.GetVersion(ctx, changeID, workflow.DefaultVersion, maxSupported)
}
