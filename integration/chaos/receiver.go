package chaos

import (
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// Receiver is a merchant's notification endpoint that refuses a share of
// the requests it gets, as a busy shop does. It remembers every notify_id
// and the order each order's notifications were first taken in.
type Receiver struct {
	failRate float64

	mu      sync.Mutex
	rnd     *rand.Rand
	seen    map[string]int      // notify_id → deliveries taken
	byOrder map[string][]string // subject → notify_ids, first taken first
	refused int
}

// NewReceiver returns a receiver that refuses failRate of the requests.
func NewReceiver(failRate float64) *Receiver {
	return &Receiver{failRate: failRate, rnd: rand.New(rand.NewPCG(7, 13)),
		seen: map[string]int{}, byOrder: map[string][]string{}}
}

func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.rnd.Float64() < rc.failRate {
		rc.refused++
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	f, _ := url.ParseQuery(string(body))
	id := f.Get("notify_id")
	if rc.seen[id] == 0 {
		rc.byOrder[subjectOf(id)] = append(rc.byOrder[subjectOf(id)], id)
	}
	rc.seen[id]++
	w.WriteHeader(http.StatusOK)
}

// snapshot copies what the receiver took.
func (rc *Receiver) snapshot() (seen map[string]int, byOrder map[string][]string, refused int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	seen = make(map[string]int, len(rc.seen))
	for k, v := range rc.seen {
		seen[k] = v
	}
	byOrder = make(map[string][]string, len(rc.byOrder))
	for k, v := range rc.byOrder {
		byOrder[k] = append([]string(nil), v...)
	}
	return seen, byOrder, rc.refused
}

// subjectOf is what a notification is about: the order's or payout's
// transaction id, which its notify_id starts with ("<id>-n01", "<id>-r01").
func subjectOf(notifyID string) string {
	if i := strings.LastIndexByte(notifyID, '-'); i > 0 {
		return notifyID[:i]
	}
	return notifyID
}
