package worker

import (
	"context"
	"errors"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
)

// localFailureLog logs every failed attempt of a local activity. The SDK
// logs a regular activity's failures itself but not a local one's, and
// most of the gateway's steps are local: without this a payout rail that
// is down retried for up to fifteen minutes, and a store that refused a
// save retried, without a line in the log.
type localFailureLog struct {
	interceptor.WorkerInterceptorBase
}

func (*localFailureLog) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &localFailureLogActivity{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}}
}

type localFailureLogActivity struct {
	interceptor.ActivityInboundInterceptorBase
}

// ExecuteActivity runs the activity and logs its error, when it has one,
// with the SDK's activity logger: its lines name the workflow, the
// activity and the attempt. Error messages are already fit for a log:
// they reach the workflow's history too, so they never hold card data.
func (a *localFailureLogActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	out, err := a.Next.ExecuteActivity(ctx, in)
	if err == nil || !activity.IsActivity(ctx) || !activity.GetInfo(ctx).IsLocalActivity {
		return out, err
	}
	level, retryable, kind := failureLevel(ctx, err)
	logger := activity.GetLogger(ctx)
	msg := "local activity attempt failed"
	switch level {
	case levelDebug:
		logger.Debug(msg, "retryable", retryable, "error_type", kind, "error", err)
	case levelInfo:
		logger.Info(msg, "retryable", retryable, "error_type", kind, "error", err)
	default:
		logger.Warn(msg, "retryable", retryable, "error_type", kind, "error", err)
	}
	return out, err
}

type logLevel int

const (
	levelDebug logLevel = iota
	levelInfo
	levelWarn
)

// failureLevel says how loud a failed attempt is. A retryable error is a
// step that did not happen and is tried again: a warning. A non-retryable
// one is the activity's answer, which the workflow records as data (a
// refusal, a card no longer stored): information. A cancelled attempt
// (its workflow stopped waiting) and a benign error are no news.
func failureLevel(ctx context.Context, err error) (level logLevel, retryable bool, kind string) {
	if errors.Is(err, context.Canceled) || temporal.IsCanceledError(err) || ctx.Err() == context.Canceled {
		return levelDebug, false, "Canceled"
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		switch {
		case app.Category() == temporal.ApplicationErrorCategoryBenign:
			return levelDebug, !app.NonRetryable(), app.Type()
		case app.NonRetryable():
			return levelInfo, false, app.Type()
		}
		return levelWarn, true, app.Type()
	}
	return levelWarn, true, ""
}
