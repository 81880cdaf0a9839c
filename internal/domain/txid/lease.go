package txid

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// ErrNoNode is the panic value of a leased Generator's Next while its
// process holds no node: an id made then could be another process's.
var ErrNoNode = errors.New("txid: no node lease held")

// LeaseStore keeps node leases for one process; models.NodeLeases is one.
type LeaseStore interface {
	// Acquire leases a free node for ttl.
	Acquire(ctx context.Context, ttl time.Duration) (uint16, error)
	// Renew extends the lease of node to ttl from now. It returns false
	// when the lease is no longer this process's, and an error when the
	// store could not be asked.
	Renew(ctx context.Context, node uint16, ttl time.Duration) (bool, error)
	// Release ends the lease of node.
	Release(ctx context.Context, node uint16) error
}

// LeaseOptions tune a Lease; zero values take the defaults.
type LeaseOptions struct {
	// TTL is how long each acquisition or renewal holds the node
	// (DefaultLeaseTTL). The lease is renewed every third of it.
	TTL time.Duration
	// Logger reports renewal failures and lost leases (none by default).
	Logger *slog.Logger

	now func() time.Time // The clock; replaced in tests.
}

// DefaultLeaseTTL is the default lifetime of a node lease.
const DefaultLeaseTTL = 30 * time.Second

// retryEvery is how often a Lease retries a failed renewal or acquisition.
const retryEvery = 2 * time.Second

// Lease is a node held through a LeaseStore. It knows, on its own clock,
// until when it surely holds the node: the store sets the expiry from its
// own clock at or after the moment the request was sent, so counting the
// TTL (less a tenth) from the send time never overshoots. Past that moment,
// or once a renewal is refused, the node is not used until a lease is held
// again, possibly of another node.
type Lease struct {
	store  LeaseStore
	ttl    time.Duration
	logger *slog.Logger
	now    func() time.Time

	mu    sync.Mutex
	node  uint16
	until time.Time // zero when no node is held
}

// AcquireLease leases a node from store and returns the Lease. Keep must
// then run for as long as the node is used.
func AcquireLease(ctx context.Context, store LeaseStore, opts LeaseOptions) (*Lease, error) {
	l := &Lease{store: store, ttl: opts.TTL, logger: opts.Logger, now: opts.now}
	if l.ttl <= 0 {
		l.ttl = DefaultLeaseTTL
	}
	if l.logger == nil {
		l.logger = slog.New(slog.DiscardHandler)
	}
	if l.now == nil {
		l.now = time.Now
	}
	if err := l.acquire(ctx); err != nil {
		return nil, err
	}
	return l, nil
}

// validFor is how long after a request was sent the lease surely holds: the
// TTL less a tenth for the request's transit and clock rate differences.
func (l *Lease) validFor() time.Duration { return l.ttl - l.ttl/10 }

func (l *Lease) acquire(ctx context.Context) error {
	sent := l.now()
	node, err := l.store.Acquire(ctx, l.ttl)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.node, l.until = node, sent.Add(l.validFor())
	l.mu.Unlock()
	return nil
}

// Node returns the node held now, and whether one is held.
func (l *Lease) Node() (uint16, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.until.IsZero() || !l.now().Before(l.until) {
		return 0, false
	}
	return l.node, true
}

// state returns the node and whether it was given up.
func (l *Lease) state() (node uint16, dropped bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.node, l.until.IsZero()
}

// tick does what Keep does at each tick: it renews the lease or, when the
// node was given up, leases a node again. It returns how long to wait
// before the next tick.
func (l *Lease) tick(ctx context.Context) time.Duration {
	node, dropped := l.state()
	if dropped {
		if err := l.acquire(ctx); err != nil {
			l.logger.Error("no transaction-id node: new orders are refused until one is leased", "error", err)
			return retryEvery
		}
		node, _ = l.state()
		l.logger.Warn("transaction-id node leased again", "node", node)
		return l.ttl / 3
	}
	sent := l.now()
	ok, err := l.store.Renew(ctx, node, l.ttl)
	switch {
	case err != nil:
		if _, held := l.Node(); held {
			l.logger.Warn("renew transaction-id node lease; retrying", "node", node, "error", err)
			return retryEvery
		}
		l.drop()
		l.logger.Error("transaction-id node lease ran out while it could not be renewed; leasing one again", "node", node, "error", err)
		return retryEvery
	case !ok:
		l.drop()
		l.logger.Error("transaction-id node lease lost; leasing another", "node", node)
		return 0
	}
	l.mu.Lock()
	l.until = sent.Add(l.validFor())
	l.mu.Unlock()
	return l.ttl / 3
}

func (l *Lease) drop() {
	l.mu.Lock()
	l.until = time.Time{}
	l.mu.Unlock()
}

// Keep renews the lease every third of its TTL until ctx ends, then
// releases it. When a renewal is refused or the lease runs out, the node is
// given up and a new lease (of any node the store offers) is sought every
// few seconds.
func (l *Lease) Keep(ctx context.Context) {
	timer := time.NewTimer(l.ttl / 3)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			l.release()
			return
		case <-timer.C:
		}
		timer.Reset(l.tick(ctx))
	}
}

// release gives the node back, with a short deadline of its own since the
// keeping context has ended.
func (l *Lease) release() {
	node, dropped := l.state()
	l.drop()
	if dropped {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := l.store.Release(ctx, node); err != nil {
		l.logger.Warn("release transaction-id node", "node", node, "error", err)
	}
}
