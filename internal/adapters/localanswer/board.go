// Package localanswer hands a payment's answer from the order workflow's
// local activity to the API request waiting for it in the same process,
// when the API started the order eagerly on its own worker.
package localanswer

import (
	"slices"
	"sync"

	"github.com/paygate/paygate/internal/domain/order"
)

// Board holds the requests waiting for their order's answer in this
// process, by the order's workflow id.
type Board struct {
	mu      sync.Mutex
	waiting map[string][]chan order.Result
}

// New returns an empty board.
func New() *Board { return &Board{waiting: map[string][]chan order.Result{}} }

// Expect registers a wait for the answer of the order with workflow id.
// The returned channel receives it at most once; forget ends the wait and
// must be called whatever came. Requests for the same order may wait at
// once (a merchant's retry while the first is in flight): each gets the
// answer, as only one of them started the order here.
func (b *Board) Expect(id string) (answer <-chan order.Result, forget func()) {
	ch := make(chan order.Result, 1)
	b.mu.Lock()
	b.waiting[id] = append(b.waiting[id], ch)
	b.mu.Unlock()
	return ch, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		rest := slices.DeleteFunc(b.waiting[id], func(c chan order.Result) bool { return c == ch })
		if len(rest) == 0 {
			delete(b.waiting, id)
		} else {
			b.waiting[id] = rest
		}
	}
}

// Deliver hands res to every request waiting for the order with workflow
// id and reports whether one was waiting here. The workflow may run in
// another process, or run again after the requests gave up: nobody waits
// then, and the answer is the one Temporal's update and the record give.
func (b *Board) Deliver(id string, res order.Result) bool {
	b.mu.Lock()
	waiting := b.waiting[id]
	delete(b.waiting, id)
	b.mu.Unlock()
	for _, ch := range waiting {
		ch <- res
	}
	return len(waiting) > 0
}

// Waiting is how many requests wait here now.
func (b *Board) Waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, w := range b.waiting {
		n += len(w)
	}
	return n
}
