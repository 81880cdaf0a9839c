// Package localanswer hands a payment's answer from the order workflow's
// local activity to the API request waiting for it in the same process,
// when the API started the order eagerly on its own worker.
//
// An answer is released only once Temporal has recorded the workflow task
// that made it: a task that is not recorded runs again elsewhere, and its
// local activities may answer otherwise there (an acquirer that failed
// the first time charges the second), so the merchant must never have read
// the first run's answer. The local activity stages the answer (Stage); the
// Temporal client's connection says when the task's completion was
// accepted (TaskRecorded), matched by the token of the task the worker
// got (TaskStarted).
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
	waiting map[string]*wait
	tokens  map[string]string // a task's token: its workflow id
}

// wait is one order's requests and what is known of its workflow task.
type wait struct {
	requests []chan order.Result
	// token is the workflow task the order's worker here runs now, as the
	// start's or a poll's answer handed it over.
	token string
	// staged is the answer a task made, and stagedBy that task's token,
	// until Temporal records the task.
	staged   *order.Result
	stagedBy string
	// spoiled is set once a task of the order was run again here: an
	// answer staged then may be the first run's, which is not recorded,
	// so nothing is handed over and the requests ask by the update.
	spoiled bool
}

// New returns an empty board.
func New() *Board {
	return &Board{waiting: map[string]*wait{}, tokens: map[string]string{}}
}

// Expect registers a wait for the answer of the order with workflow id.
// The returned channel receives it at most once; forget ends the wait and
// must be called whatever came.
func (b *Board) Expect(id string) (answer <-chan order.Result, forget func()) {
	ch := make(chan order.Result, 1)
	b.mu.Lock()
	w := b.waiting[id]
	if w == nil {
		w = &wait{}
		b.waiting[id] = w
	}
	w.requests = append(w.requests, ch)
	b.mu.Unlock()
	return ch, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		w, ok := b.waiting[id]
		if !ok {
			return
		}
		w.requests = slices.DeleteFunc(w.requests, func(c chan order.Result) bool { return c == ch })
		if len(w.requests) == 0 {
			b.drop(id, w)
		}
	}
}

// TaskStarted notes that this process's worker got the workflow task with
// token for the order with workflow id: from the start's answer (eager
// start), from a poll, or in the answer to its previous task's completion.
// Nothing is noted for an order nobody here waits for.
//
// A task run again (attempt above 1: the first run timed out, or failed)
// spoils the wait: the first run's local activity may still stage its
// answer, which is not recorded, and nothing tells the two apart.
func (b *Board) TaskStarted(id string, token []byte, attempt int32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	w, ok := b.waiting[id]
	if !ok || w.spoiled {
		return
	}
	if w.token != "" && w.token != w.stagedBy {
		delete(b.tokens, w.token)
	}
	if attempt > 1 {
		delete(b.tokens, w.stagedBy)
		w.token, w.staged, w.stagedBy, w.spoiled = "", nil, "", true
		return
	}
	w.token = string(token)
	b.tokens[w.token] = id
}

// Stage keeps res, the answer the order with workflow id made in the task
// its worker runs now, until Temporal has recorded that task. It reports
// whether anybody here waits for it.
func (b *Board) Stage(id string, res order.Result) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	w, ok := b.waiting[id]
	if !ok || w.token == "" || w.spoiled {
		return false
	}
	if w.stagedBy != "" && w.stagedBy != w.token {
		delete(b.tokens, w.stagedBy)
	}
	w.staged, w.stagedBy = &res, w.token
	return true
}

// TaskRecorded is told that Temporal accepted the completion of the
// workflow task with token. If that task staged its order's answer, the
// answer is now in the order's history and goes to the waiting requests;
// a task that staged nothing (it completed early to keep a long local
// activity alive, or ended waiting for an activity) leaves them waiting
// for a later task's.
func (b *Board) TaskRecorded(token []byte) {
	b.mu.Lock()
	id, ok := b.tokens[string(token)]
	if !ok {
		b.mu.Unlock()
		return
	}
	delete(b.tokens, string(token))
	w, ok := b.waiting[id]
	if !ok {
		b.mu.Unlock()
		return
	}
	if w.token == string(token) {
		w.token = ""
	}
	var requests []chan order.Result
	res := w.staged
	if res != nil && w.stagedBy == string(token) {
		requests = w.requests
		b.drop(id, w)
	}
	b.mu.Unlock()
	for _, ch := range requests {
		ch <- *res
	}
}

// drop forgets the order's wait; b.mu is held.
func (b *Board) drop(id string, w *wait) {
	delete(b.waiting, id)
	delete(b.tokens, w.token)
	delete(b.tokens, w.stagedBy)
}

// Waiting is how many requests wait here now.
func (b *Board) Waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, w := range b.waiting {
		n += len(w.requests)
	}
	return n
}
