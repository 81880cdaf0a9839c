package localanswer

import (
	"reflect"
	"testing"

	"github.com/paygate/paygate/internal/domain/order"
)

func TestBoard(t *testing.T) {
	paid := order.Result{OrderNo: "ORD-1", ResultCode: "0000"}
	tok := []byte("task-token-1")
	tests := []struct {
		name string
		// run drives the board and returns what Stage reported and what
		// the first request has received.
		run        func(b *Board) (staged bool, got *order.Result)
		wantStaged bool
		wantAnswer bool
		wantLeft   int
	}{
		{
			name: "the answer goes once its task is recorded",
			run: func(b *Board) (bool, *order.Result) {
				ch, forget := b.Expect("wf-1")
				defer forget()
				b.TaskStarted("wf-1", tok, 1)
				ok := b.Stage("wf-1", paid)
				if received(ch) != nil {
					return ok, &order.Result{ResultCode: "released before its task was recorded"}
				}
				b.TaskRecorded(tok)
				return ok, received(ch)
			},
			wantStaged: true, wantAnswer: true,
		},
		{
			name: "an answer whose task is not recorded never goes",
			run: func(b *Board) (bool, *order.Result) {
				ch, forget := b.Expect("wf-1")
				defer forget()
				b.TaskStarted("wf-1", tok, 1)
				ok := b.Stage("wf-1", paid)
				b.TaskRecorded([]byte("another task"))
				return ok, received(ch)
			},
			wantStaged: true,
		},
		{
			name: "the first task recorded before the answer: a later task's answer goes once recorded",
			run: func(b *Board) (bool, *order.Result) {
				ch, forget := b.Expect("wf-1")
				defer forget()
				b.TaskStarted("wf-1", tok, 1)
				b.TaskRecorded(tok) // completed early, waiting for an inquiry
				if b.Stage("wf-1", paid) {
					return true, &order.Result{ResultCode: "staged with no task running"}
				}
				b.TaskStarted("wf-1", []byte("task-token-2"), 1) // the next task, polled
				ok := b.Stage("wf-1", paid)
				b.TaskRecorded(tok)
				if received(ch) != nil {
					return ok, &order.Result{ResultCode: "released by the first task's record"}
				}
				b.TaskRecorded([]byte("task-token-2"))
				return ok, received(ch)
			},
			wantStaged: true, wantAnswer: true,
		},
		{
			name: "a task run again spoils the wait: the first run's late answer never goes",
			run: func(b *Board) (bool, *order.Result) {
				ch, forget := b.Expect("wf-1")
				defer forget()
				b.TaskStarted("wf-1", tok, 1)
				// The first run timed out at Temporal and its retry came
				// here while the first run's local activity still ran.
				b.TaskStarted("wf-1", []byte("task-token-2"), 2)
				ok := b.Stage("wf-1", paid) // the first run's answer
				b.TaskRecorded([]byte("task-token-2"))
				return ok, forgottenOr(b, ch)
			},
		},
		{
			name: "a task recorded after its request gave up changes nothing",
			run: func(b *Board) (bool, *order.Result) {
				ch, forget := b.Expect("wf-1")
				b.TaskStarted("wf-1", tok, 1)
				b.Stage("wf-1", paid)
				forget()
				b.TaskRecorded(tok)
				return false, received(ch)
			},
		},
		{
			name: "no first task came back here: nobody waits for the answer",
			run: func(b *Board) (bool, *order.Result) {
				ch, forget := b.Expect("wf-1")
				defer forget()
				ok := b.Stage("wf-1", paid)
				return ok, received(ch)
			},
		},
		{
			name: "nobody waits for another order",
			run: func(b *Board) (bool, *order.Result) {
				ch, forget := b.Expect("wf-1")
				defer forget()
				b.TaskStarted("wf-2", tok, 1)
				ok := b.Stage("wf-2", paid)
				b.TaskRecorded(tok)
				return ok, received(ch)
			},
		},
		{
			name: "a request that gave up gets nothing and its task is forgotten",
			run: func(b *Board) (bool, *order.Result) {
				ch, forget := b.Expect("wf-1")
				b.TaskStarted("wf-1", tok, 1)
				forget()
				ok := b.Stage("wf-1", paid)
				b.TaskRecorded(tok)
				return ok, forgottenOr(b, ch)
			},
		},
		{
			name: "two requests for one order both get it",
			run: func(b *Board) (bool, *order.Result) {
				first, forgetFirst := b.Expect("wf-1")
				defer forgetFirst()
				second, forgetSecond := b.Expect("wf-1")
				defer forgetSecond()
				b.TaskStarted("wf-1", tok, 1)
				ok := b.Stage("wf-1", paid)
				b.TaskRecorded(tok)
				if received(second) == nil {
					return false, nil
				}
				return ok, received(first)
			},
			wantStaged: true, wantAnswer: true,
		},
		{
			name: "a request still waiting is counted",
			run: func(b *Board) (bool, *order.Result) {
				b.Expect("wf-1")
				return false, nil
			},
			wantLeft: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := New()
			staged, got := tc.run(b)
			if staged != tc.wantStaged {
				t.Errorf("Stage reported %v, want %v", staged, tc.wantStaged)
			}
			if (got != nil) != tc.wantAnswer {
				t.Fatalf("answer received %+v, want one: %v", got, tc.wantAnswer)
			}
			if got != nil && !reflect.DeepEqual(*got, paid) {
				t.Errorf("answer %+v, want %+v", *got, paid)
			}
			if n := b.Waiting(); n != tc.wantLeft {
				t.Errorf("%d requests left waiting, want %d", n, tc.wantLeft)
			}
		})
	}
}

// received is what ch holds now, or nil.
// forgottenOr is the answer sent on ch, once the board has forgotten every
// task token; a token it kept is reported as an answer that no case wants.
func forgottenOr(b *Board, ch <-chan order.Result) *order.Result {
	if len(b.tokens) != 0 {
		return &order.Result{ResultCode: "token kept"}
	}
	return received(ch)
}

func received(ch <-chan order.Result) *order.Result {
	select {
	case r := <-ch:
		return &r
	default:
		return nil
	}
}
