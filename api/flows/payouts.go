package flows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/paygate/paygate/internal/domain/money"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/internal/domain/payout"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// TemporalPayouts starts payout workflows on Temporal and wakes them.
type TemporalPayouts struct {
	Client client.Client
	// RailCallbacks: the rail calls back when a transfer moves, so the
	// payouts started here wait for its word (workflows.PayoutInput).
	RailCallbacks bool
	// Eager: this process runs a worker of its own (PAYGATE_EAGER_START),
	// and a payout's first workflow task (its record, price, reservation
	// and the transfer's submission) comes to it in the start's answer.
	Eager bool
}

// ErrPayoutNotRunning: no payout workflow runs under the id.
var ErrPayoutNotRunning = errors.New("no payout runs under this id")

// TransferMoved wakes the payout run under id: its rail says the transfer
// moved, and the payout asks the rail.
func (t *TemporalPayouts) TransferMoved(ctx context.Context, id string) error {
	err := t.Client.SignalWorkflow(ctx, id, "", workflows.SignalPayoutTransferMoved, nil)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return ErrPayoutNotRunning
	}
	if err != nil {
		return fmt.Errorf("wake payout %s: %w", id, err)
	}
	return nil
}

// Start starts the payout's first run, or leaves the run already under its
// workflow id (running or closed) as it is: a repeated request_id never
// starts a second payout. A re-run is StartPayoutRun's.
func (t *TemporalPayouts) Start(ctx context.Context, in workflows.PayoutInput) error {
	in.RailCallbacks = t.RailCallbacks
	opts := payoutStartOptions(in, enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE)
	// A payout already under the id comes back without a task; the SDK
	// then gives the slot it held back.
	opts.EnableEagerStart = t.Eager
	_, err := t.Client.ExecuteWorkflow(ctx, opts, workflows.PayoutWorkflowType, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("start payout %s: %w", in.ID, err)
	}
	return nil
}

func payoutStartOptions(in workflows.PayoutInput, reuse enumspb.WorkflowIdReusePolicy) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                       in.ID,
		TaskQueue:                workflows.TaskQueue,
		WorkflowIDReusePolicy:    reuse,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			workflows.SearchMerchantID.ValueSet(in.MerchantID),
			workflows.SearchAccountID.ValueSet(in.AccountID),
			workflows.SearchRequestID.ValueSet(in.RequestID),
			workflows.SearchTransactionID.ValueSet(in.TransactionID),
			workflows.SearchPayoutStatus.ValueSet(string(payout.StatusNew)),
		),
	}
}

// PayoutRunInput builds the input of the next run of a stored payout: the
// same workflow id (so the same idempotency key at the rail), transaction
// id, short reference and validated request, and the run number one higher.
func PayoutRunInput(p *models.Payout, schedule notify.Schedule) (workflows.PayoutInput, error) {
	if p.PersonalErasedAt != nil {
		// Its beneficiary is gone: there is no one to pay any more.
		return workflows.PayoutInput{}, fmt.Errorf("payout %s: its beneficiary's data was erased", p.ID)
	}
	var in payout.Instruction
	if err := json.Unmarshal(p.Request, &in); err != nil {
		return workflows.PayoutInput{}, fmt.Errorf("payout %s: stored request: %w", p.ID, err)
	}
	charges, err := recordedCharges(p, in)
	if err != nil {
		return workflows.PayoutInput{}, err
	}
	return workflows.PayoutInput{
		ID: p.ID, MerchantID: p.MerchantID, AccountID: p.AccountID, RequestID: p.RequestID,
		TransactionID: p.TransactionID, ShortReferenceID: p.ShortReferenceID, Instruction: in,
		NotifyURL: p.NotifyURL, Mode: p.Mode, Run: p.Run + 1, NotifySchedule: schedule, Charges: charges,
		Shape: workflows.CurrentPayoutShape,
	}, nil
}

// recordedCharges rebuilds the charges a payout's run recorded, or nil
// when it was never priced (it failed before, so the re-run prices it).
// A re-run must send the rail the same transfer under the same key: priced
// again at changed rates, the rail would refuse the key's other body.
func recordedCharges(p *models.Payout, in payout.Instruction) (*payout.Charges, error) {
	if len(p.Quote) == 0 || string(p.Quote) == "null" {
		return nil, nil
	}
	var q payout.Quote
	if err := json.Unmarshal(p.Quote, &q); err != nil {
		return nil, fmt.Errorf("payout %s: stored quote: %w", p.ID, err)
	}
	source := in.SourceCurrency
	return &payout.Charges{
		Quote:               q,
		FeePaidBy:           in.FeePaidBy,
		Fee:                 money.FromMinor(p.FeeAmount, source),
		PayerPays:           money.FromMinor(p.PayerPaysAmount, source),
		Transfer:            money.FromMinor(p.TransferAmount, source),
		BeneficiaryReceives: money.FromMinor(p.BeneficiaryReceivesAmount, q.PaymentCurrency),
	}, nil
}

// StartPayoutRun starts a new run of a stored payout's workflow: what a
// finance re-run does. It refuses a payout whose status payout.Rerun refuses
// (completed or in flight) with that error, and returns the run's id. A
// re-run already running under the id is left alone and its run id
// returned, so a re-run command killed half-way can be run again safely; a
// failed run still closing is waited for (awaitFailedRunClosed). With
// railCallbacks the run waits for the rail's word.
func StartPayoutRun(ctx context.Context, c client.Client, p *models.Payout, schedule notify.Schedule, railCallbacks bool) (string, error) {
	if _, err := payout.Rerun(payout.Status(p.Status)); err != nil {
		return "", fmt.Errorf("re-run payout %s: %w", p.ID, err)
	}
	in, err := PayoutRunInput(p, schedule)
	if err != nil {
		return "", err
	}
	in.RailCallbacks = railCallbacks
	if err := awaitFailedRunClosed(ctx, c, in.ID); err != nil {
		return "", err
	}
	run, err := c.ExecuteWorkflow(ctx, payoutStartOptions(in, enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE),
		workflows.PayoutWorkflowType, in)
	if err != nil {
		return "", fmt.Errorf("re-run payout %s: %w", p.ID, err)
	}
	return run.GetRunID(), nil
}

// failedRunCloseWait bounds how long a re-run waits for the failed run to
// close; that run has only its notification to hand over.
var failedRunCloseWait = 30 * time.Second

// awaitFailedRunClosed waits until the payout's failed run has closed. A run
// records FAILED, then hands its notification to a workflow of its own, then
// ends; a re-run started in between would find it running and, by the
// conflict policy that keeps re-runs idempotent, take it for the new run:
// nothing would be paid and the payout would stay failed. A running run
// that has not failed (a re-run already under way) is left to the start.
func awaitFailedRunClosed(ctx context.Context, c client.Client, workflowID string) error {
	d, err := c.DescribeWorkflowExecution(ctx, workflowID, "")
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("re-run payout %s: %w", workflowID, err)
	}
	info := d.GetWorkflowExecutionInfo()
	if info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return nil
	}
	runID := info.GetExecution().GetRunId()
	// A query needs a worker; without one it would wait for good.
	qctx, qcancel := context.WithTimeout(ctx, failedRunCloseWait)
	defer qcancel()
	v, err := c.QueryWorkflow(qctx, workflowID, runID, workflows.QueryPayoutState)
	if err != nil {
		return fmt.Errorf("re-run payout %s: read its running run: %w", workflowID, err)
	}
	var st workflows.PayoutState
	if err := v.Get(&st); err != nil {
		return fmt.Errorf("re-run payout %s: read its running run: %w", workflowID, err)
	}
	if st.Status != payout.StatusFailed {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, failedRunCloseWait)
	defer cancel()
	// The run's own result does not matter here, only that it has ended.
	if err := c.GetWorkflow(wctx, workflowID, runID).Get(wctx, nil); err != nil && wctx.Err() != nil {
		return fmt.Errorf("re-run payout %s: its failed run %s has not closed after %s: %w", workflowID, runID, failedRunCloseWait, wctx.Err())
	}
	return nil
}
