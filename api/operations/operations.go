package operations

import (
	"context"

	"github.com/paygate/paygate/workflows"
)

// OrderOps sends the batch operations to an order's workflow, one Update per
// entry, and returns the workflow's answer.
type OrderOps interface {
	Capture(ctx context.Context, workflowID string, req workflows.CaptureRequest) (workflows.OperationResult, error)
	Cancel(ctx context.Context, workflowID string, req workflows.CancelRequest) (workflows.OperationResult, error)
	Review(ctx context.Context, workflowID string, req workflows.ReviewRequest) (workflows.OperationResult, error)
	Refund(ctx context.Context, workflowID string, req workflows.RefundRequest) (workflows.OperationResult, error)
}
