package localanswer

import (
	"reflect"
	"testing"

	"github.com/paygate/paygate/internal/domain/order"
)

func TestBoard(t *testing.T) {
	paid := order.Result{OrderNo: "ORD-1", ResultCode: "0000"}
	tests := []struct {
		name string
		// run waits, delivers and forgets in its own order and returns
		// what Deliver reported and what the first wait received.
		run           func(b *Board) (delivered bool, got *order.Result)
		wantDelivered bool
		wantAnswer    bool
		wantLeft      int
	}{
		{
			name: "a waiting request gets its answer",
			run: func(b *Board) (bool, *order.Result) {
				ch, forget := b.Expect("wf-1")
				defer forget()
				ok := b.Deliver("wf-1", paid)
				return ok, received(ch)
			},
			wantDelivered: true, wantAnswer: true,
		},
		{
			name: "nobody waits for another order",
			run: func(b *Board) (bool, *order.Result) {
				ch, forget := b.Expect("wf-1")
				defer forget()
				ok := b.Deliver("wf-2", paid)
				return ok, received(ch)
			},
		},
		{
			name: "a request that gave up gets nothing",
			run: func(b *Board) (bool, *order.Result) {
				ch, forget := b.Expect("wf-1")
				forget()
				ok := b.Deliver("wf-1", paid)
				return ok, received(ch)
			},
		},
		{
			name: "an answer is handed over once",
			run: func(b *Board) (bool, *order.Result) {
				ch, forget := b.Expect("wf-1")
				defer forget()
				b.Deliver("wf-1", paid)
				again := b.Deliver("wf-1", paid)
				return again, received(ch)
			},
			wantAnswer: true,
		},
		{
			name: "two requests for one order both get it",
			run: func(b *Board) (bool, *order.Result) {
				first, forgetFirst := b.Expect("wf-1")
				defer forgetFirst()
				second, forgetSecond := b.Expect("wf-1")
				defer forgetSecond()
				ok := b.Deliver("wf-1", paid)
				if received(second) == nil {
					return false, nil
				}
				return ok, received(first)
			},
			wantDelivered: true, wantAnswer: true,
		},
		{
			name: "one of two requests gave up",
			run: func(b *Board) (bool, *order.Result) {
				first, forgetFirst := b.Expect("wf-1")
				_, forgetSecond := b.Expect("wf-1")
				forgetSecond()
				defer forgetFirst()
				ok := b.Deliver("wf-1", paid)
				return ok, received(first)
			},
			wantDelivered: true, wantAnswer: true,
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
			delivered, got := tc.run(b)
			if delivered != tc.wantDelivered {
				t.Errorf("Deliver reported %v, want %v", delivered, tc.wantDelivered)
			}
			if (got != nil) != tc.wantAnswer {
				t.Fatalf("answer received %v, want %v", got != nil, tc.wantAnswer)
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
func received(ch <-chan order.Result) *order.Result {
	select {
	case r := <-ch:
		return &r
	default:
		return nil
	}
}
