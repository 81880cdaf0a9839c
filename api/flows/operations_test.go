package flows

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/domain/codes"
	"github.com/paygate/paygate/workflows"
)

func TestClassifyOperation(t *testing.T) {
	refusedWith := func(id, msg string) *ErrEntryRefused { return &ErrEntryRefused{Code: id, Message: msg} }
	cases := []struct {
		name        string
		err         error
		wantRefused *ErrEntryRefused
		wantUnknown bool
	}{
		{
			name:        "validator refusal with its code",
			err:         temporal.NewApplicationError("Entry does not match the order: amount", workflows.ErrTypeEntryRefused, "I0019"),
			wantRefused: refusedWith("I0019", "Entry does not match the order: amount"),
		},
		{
			name:        "validator refusal without a code",
			err:         temporal.NewApplicationError("order is paid (3000)", workflows.ErrTypeEntryRefused),
			wantRefused: refusedWith("I0018", "order is paid (3000)"),
		},
		{
			name:        "workflow closed",
			err:         serviceerror.NewNotFound("workflow execution already completed"),
			wantRefused: refusedWith("I0018", "Operation not allowed in the order's current state"),
		},
		{
			name:        "update timed out",
			err:         client.NewWorkflowUpdateServiceTimeoutOrCanceledError(errors.New("deadline")),
			wantUnknown: true,
		},
		{name: "context deadline", err: fmt.Errorf("poll: %w", context.DeadlineExceeded), wantUnknown: true},
		{name: "another application error", err: temporal.NewApplicationError("mismatch", workflows.ErrTypeOrderMismatch)},
		{name: "service unavailable", err: serviceerror.NewUnavailable("no frontend")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := classifyOperation(context.Background(), "capture", c.err)
			var refused *ErrEntryRefused
			isRefused := errors.As(got, &refused)
			switch {
			case c.wantRefused != nil:
				if !isRefused || *refused != *c.wantRefused {
					t.Errorf("error = %v, want %v", got, c.wantRefused)
				}
			case isRefused:
				t.Errorf("error = %v, want not refused", got)
			}
			if errors.Is(got, ErrOutcomeUnknown) != c.wantUnknown {
				t.Errorf("error = %v, outcome unknown %v, want %v", got, !c.wantUnknown, c.wantUnknown)
			}
			if !isRefused && !errors.Is(got, c.err) {
				t.Errorf("error = %v does not wrap %v", got, c.err)
			}
		})
	}
}

func TestContentUpdateID(t *testing.T) {
	ref := workflows.EntryRef{TransactionID: txA, OrderNo: "ORD-984", Currency: "USD", Amount: 10000}
	full := contentUpdateID(workflows.UpdateCapture, workflows.CaptureRequest{Entry: ref})
	cases := []struct {
		name string
		id   string
		same bool
	}{
		{"identical request", contentUpdateID(workflows.UpdateCapture, workflows.CaptureRequest{Entry: ref}), true},
		{"partial capture", contentUpdateID(workflows.UpdateCapture, workflows.CaptureRequest{Entry: ref, CaptureAmount: 500}), false},
		{"another order", contentUpdateID(workflows.UpdateCapture, workflows.CaptureRequest{Entry: workflows.EntryRef{TransactionID: txB}}), false},
		{"cancel of the same entry", contentUpdateID(workflows.UpdateCancel, workflows.CancelRequest{Entry: ref}), false},
	}
	if !strings.HasPrefix(full, "capture-") || len(full) != len("capture-")+updateIDLength {
		t.Errorf("id = %q, want capture- and %d hex digits", full, updateIDLength)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if (c.id == full) != c.same {
				t.Errorf("id %q vs %q: same = %v, want %v", c.id, full, c.id == full, c.same)
			}
		})
	}
	approve := contentUpdateID(workflows.UpdateReview, workflows.ReviewRequest{Entry: ref, Approve: true})
	reject := contentUpdateID(workflows.UpdateReview, workflows.ReviewRequest{Entry: ref})
	if approve == reject {
		t.Errorf("approve and reject share update id %q", approve)
	}
}

// fakeUpdateClient is a Temporal client that only answers Update-with-Start.
type fakeUpdateClient struct {
	client.Client
	mu       sync.Mutex
	starts   []fakeStart
	options  []client.UpdateWorkflowOptions
	deadline []time.Duration
	result   workflows.OperationResult
	errs     []error // returned by the calls in turn, the last one from then on
	getErr   error   // returned by the handle's Get
}

// fakeStart is the start operation an Update-with-Start carried.
type fakeStart struct {
	client.WithStartWorkflowOperation
	options client.StartWorkflowOptions
	input   workflows.OrderInput
}

func (f *fakeUpdateClient) NewWithStartWorkflowOperation(o client.StartWorkflowOptions, workflow any, args ...any) client.WithStartWorkflowOperation {
	return fakeStart{options: o, input: args[0].(workflows.OrderInput)}
}

func (f *fakeUpdateClient) UpdateWithStartWorkflow(ctx context.Context, o client.UpdateWithStartWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.starts = append(f.starts, o.StartWorkflowOperation.(fakeStart))
	f.options = append(f.options, o.UpdateOptions)
	if d, ok := ctx.Deadline(); ok {
		f.deadline = append(f.deadline, time.Until(d))
	}
	if n := len(f.errs); n > 0 {
		err := f.errs[min(len(f.options), n)-1]
		if err != nil {
			return nil, err
		}
	}
	return fakeUpdateHandle{result: f.result, err: f.getErr}, nil
}

type fakeUpdateHandle struct {
	client.WorkflowUpdateHandle
	result workflows.OperationResult
	err    error
}

func (h fakeUpdateHandle) Get(_ context.Context, v any) error {
	if h.err != nil {
		return h.err
	}
	*(v.(*workflows.OperationResult)) = h.result
	return nil
}

func TestTemporalOrdersOperations(t *testing.T) {
	ref := workflows.EntryRef{TransactionID: txA, OrderNo: "ORD-984", Currency: "USD", Amount: 10000}
	capture := workflows.CaptureRequest{Entry: ref, CaptureAmount: 500}
	cancel := workflows.CancelRequest{Entry: ref}
	review := workflows.ReviewRequest{Entry: ref, Approve: true}
	refund := workflows.RefundRequest{Entry: ref, RefundAmount: 100, Reason: "r"}
	cases := []struct {
		name       string
		call       func(o *TemporalOrders) (workflows.OperationResult, error)
		wantName   string
		wantArg    any
		wantUpdate string
	}{
		{"capture", func(o *TemporalOrders) (workflows.OperationResult, error) {
			return o.Capture(context.Background(), "wf", capture)
		},
			workflows.UpdateCapture, capture, contentUpdateID(workflows.UpdateCapture, capture)},
		{"cancel", func(o *TemporalOrders) (workflows.OperationResult, error) {
			return o.Cancel(context.Background(), "wf", cancel)
		},
			workflows.UpdateCancel, cancel, contentUpdateID(workflows.UpdateCancel, cancel)},
		{"review", func(o *TemporalOrders) (workflows.OperationResult, error) {
			return o.Review(context.Background(), "wf", review)
		},
			workflows.UpdateReview, review, contentUpdateID(workflows.UpdateReview, review)},
		{"refund has an update id of its own", func(o *TemporalOrders) (workflows.OperationResult, error) {
			return o.Refund(context.Background(), "wf", refund)
		}, workflows.UpdateRefund, refund, "refund-"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fc := &fakeUpdateClient{result: workflows.OperationResult{Status: workflows.EntryDone, ResultCode: "0000", ResultMessage: "Success"}}
			orders := &TemporalOrders{Client: fc, Wait: 5 * time.Second}
			res, err := c.call(orders)
			if err != nil || res != fc.result {
				t.Fatalf("result = %+v, %v; want %+v", res, err, fc.result)
			}
			if len(fc.options) != 1 {
				t.Fatalf("%d calls, want 1", len(fc.options))
			}
			got := fc.options[0]
			if c.wantUpdate == "refund-" && strings.HasPrefix(got.UpdateID, "refund-") && len(got.UpdateID) == len("refund-")+32 {
				got.UpdateID = "refund-"
			}
			want := client.UpdateWorkflowOptions{UpdateName: c.wantName, UpdateID: c.wantUpdate,
				Args: []any{c.wantArg}, WaitForStage: client.WorkflowUpdateStageCompleted}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("update options = %+v\nwant %+v", got, want)
			}
			// The start reopens the order if its workflow closed when idle.
			start := fc.starts[0]
			wantInput := workflows.OrderInput{TransactionID: txA, OrderNo: "ORD-984", Shape: workflows.CurrentOrderShape, Reopen: true}
			if start.options.ID != "wf" || start.options.TaskQueue != workflows.TaskQueue ||
				start.options.WorkflowIDConflictPolicy != enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING ||
				start.options.WorkflowIDReusePolicy != enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE ||
				!reflect.DeepEqual(start.input, wantInput) {
				t.Errorf("start = %+v, input %+v; want a reopen of wf with %+v", start.options, start.input, wantInput)
			}
			if len(fc.deadline) != 1 || fc.deadline[0] > 5*time.Second || fc.deadline[0] < 4*time.Second {
				t.Errorf("deadline = %v, want about 5s", fc.deadline)
			}
		})
	}
	t.Run("refusal from the handle", func(t *testing.T) {
		fc := &fakeUpdateClient{getErr: temporal.NewApplicationError("order is cancelled (5000)", workflows.ErrTypeEntryRefused, "I0018")}
		_, err := (&TemporalOrders{Client: fc}).Capture(context.Background(), "wf", capture)
		var refused *ErrEntryRefused
		if !errors.As(err, &refused) || *refused != (ErrEntryRefused{Code: "I0018", Message: "order is cancelled (5000)"}) {
			t.Errorf("error = %v, want I0018 refusal", err)
		}
	})
	closed := serviceerror.NewNotFound("workflow execution already completed")
	sentAgain := []struct {
		name      string
		errs      []error
		wantCalls int
		wantCode  string // "" for the workflow's answer
	}{
		{"closed as the refund arrived: sent again, reopens", []error{closed, nil}, 2, ""},
		{"closed every time: refused as an ended order", []error{closed}, reopenRetries, codes.InvalidState.ID},
		{"the update's workflow task failed: sent again", []error{
			serviceerror.NewWorkflowNotReady("Unable to perform workflow execution update due to unexpected workflow task failure."), nil}, 2, ""},
		{"unavailable: not sent again", []error{serviceerror.NewUnavailable("no frontend")}, 1, codes.SystemError.ID},
	}
	for _, c := range sentAgain {
		t.Run(c.name, func(t *testing.T) {
			fc := &fakeUpdateClient{errs: c.errs, result: workflows.OperationResult{Status: workflows.EntryDone, ResultCode: "0000"}}
			res, err := (&TemporalOrders{Client: fc}).Refund(context.Background(), "wf", refund)
			if len(fc.options) != c.wantCalls {
				t.Fatalf("%d calls, want %d", len(fc.options), c.wantCalls)
			}
			for _, o := range fc.options[1:] {
				if o.UpdateID != fc.options[0].UpdateID {
					t.Errorf("update ids %q and %q: a refund sent again must be the same update", fc.options[0].UpdateID, o.UpdateID)
				}
			}
			var refused *ErrEntryRefused
			switch {
			case c.wantCode == "" && (err != nil || res.ResultCode != "0000"):
				t.Errorf("result = %+v, %v; want done", res, err)
			case c.wantCode == codes.InvalidState.ID && (!errors.As(err, &refused) || refused.Code != c.wantCode):
				t.Errorf("error = %v, want %s refusal", err, c.wantCode)
			case c.wantCode == codes.SystemError.ID && (err == nil || errors.As(err, &refused)):
				t.Errorf("error = %v, want a system error", err)
			}
		})
	}
}

// txA is a test order's transaction id.
const (
	txA = "1379868670095785984"
	txB = "1379868670095785985"
)
