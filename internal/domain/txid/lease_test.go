package txid

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"
)

// fakeStore is a LeaseStore whose answers the test sets.
type fakeStore struct {
	nodes      []uint16 // handed out by Acquire in turn
	acquireErr error
	renewOK    bool
	renewErr   error
	released   []uint16
	ttls       []time.Duration
}

func (s *fakeStore) Acquire(_ context.Context, ttl time.Duration) (uint16, error) {
	s.ttls = append(s.ttls, ttl)
	if s.acquireErr != nil {
		return 0, s.acquireErr
	}
	n := s.nodes[0]
	s.nodes = s.nodes[1:]
	return n, nil
}

func (s *fakeStore) Renew(_ context.Context, _ uint16, ttl time.Duration) (bool, error) {
	s.ttls = append(s.ttls, ttl)
	return s.renewOK, s.renewErr
}

func (s *fakeStore) Release(_ context.Context, node uint16) error {
	s.released = append(s.released, node)
	return nil
}

func newTestLease(t *testing.T, store *fakeStore, ttl time.Duration) (*Lease, *fakeClock) {
	t.Helper()
	c := &fakeClock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	l, err := AcquireLease(t.Context(), store, LeaseOptions{TTL: ttl, now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	return l, c
}

func TestLeaseLifecycle(t *testing.T) {
	errDown := errors.New("store down")
	type step struct {
		name     string
		advance  time.Duration
		renewOK  bool
		renewErr error
		acqErr   error
		tick     bool // run one tick of Keep
		wantNode int  // -1: none held
		wantWait time.Duration
	}
	tests := []struct {
		name  string
		nodes []uint16
		steps []step
	}{
		{"renewed in time keeps the node", []uint16{7}, []step{
			{name: "fresh", wantNode: 7},
			{name: "renewal", advance: 20 * time.Second, renewOK: true, tick: true, wantNode: 7, wantWait: 20 * time.Second},
			{name: "still held 50s after the renewal", advance: 50 * time.Second, wantNode: 7},
			{name: "not held 54s after the renewal", advance: 4 * time.Second, wantNode: -1},
		}},
		{"lease ends 54s after acquisition without renewal", []uint16{7}, []step{
			{name: "53s", advance: 53 * time.Second, wantNode: 7},
			{name: "54s", advance: time.Second, wantNode: -1},
		}},
		{"refused renewal drops the node at once and leases another", []uint16{7, 9}, []step{
			{name: "refused", advance: 20 * time.Second, renewOK: false, tick: true, wantNode: -1, wantWait: 0},
			{name: "leased again", tick: true, wantNode: 9, wantWait: 20 * time.Second},
		}},
		{"store down: node kept while the lease lasts", []uint16{7, 3}, []step{
			{name: "first failure", advance: 20 * time.Second, renewErr: errDown, tick: true, wantNode: 7, wantWait: retryEvery},
			{name: "later failure", advance: 30 * time.Second, renewErr: errDown, tick: true, wantNode: 7, wantWait: retryEvery},
			{name: "lease ran out", advance: 5 * time.Second, renewErr: errDown, tick: true, wantNode: -1, wantWait: retryEvery},
			{name: "store still down", advance: retryEvery, acqErr: errDown, tick: true, wantNode: -1, wantWait: retryEvery},
			{name: "store back", advance: retryEvery, tick: true, wantNode: 3, wantWait: 20 * time.Second},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &fakeStore{nodes: tt.nodes}
			l, c := newTestLease(t, store, time.Minute)
			for _, st := range tt.steps {
				c.advance(st.advance)
				store.renewOK, store.renewErr, store.acquireErr = st.renewOK, st.renewErr, st.acqErr
				if st.tick {
					if got := l.tick(t.Context()); got != st.wantWait {
						t.Errorf("%s: tick waits %s, want %s", st.name, got, st.wantWait)
					}
				}
				node, held := l.Node()
				switch {
				case st.wantNode < 0 && held:
					t.Errorf("%s: holds node %d, want none", st.name, node)
				case st.wantNode >= 0 && (!held || int(node) != st.wantNode):
					t.Errorf("%s: Node() = %d, %v; want %d", st.name, node, held, st.wantNode)
				}
			}
			for _, ttl := range store.ttls {
				if ttl != time.Minute {
					t.Errorf("store asked for ttl %s, want 1m", ttl)
				}
			}
		})
	}
}

func TestAcquireLeaseError(t *testing.T) {
	errFull := errors.New("no free node")
	if _, err := AcquireLease(t.Context(), &fakeStore{acquireErr: errFull}, LeaseOptions{}); !errors.Is(err, errFull) {
		t.Fatalf("err = %v, want %v", err, errFull)
	}
}

func TestLeaseDefaultTTL(t *testing.T) {
	store := &fakeStore{nodes: []uint16{1}}
	if _, err := AcquireLease(t.Context(), store, LeaseOptions{}); err != nil {
		t.Fatal(err)
	}
	if store.ttls[0] != DefaultLeaseTTL {
		t.Fatalf("ttl = %s, want %s", store.ttls[0], DefaultLeaseTTL)
	}
}

func TestKeepReleasesOnStop(t *testing.T) {
	store := &fakeStore{nodes: []uint16{5}, renewOK: true}
	l, _ := newTestLease(t, store, time.Minute)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		l.Keep(ctx)
		close(done)
	}()
	cancel()
	<-done
	if len(store.released) != 1 || store.released[0] != 5 {
		t.Fatalf("released %v, want [5]", store.released)
	}
	if _, held := l.Node(); held {
		t.Fatal("a released lease still holds its node")
	}
}

func TestLeasedGenerator(t *testing.T) {
	store := &fakeStore{nodes: []uint16{5, 6}}
	l, c := newTestLease(t, store, time.Minute)
	g := NewLeasedGenerator(l)
	g.now = func() time.Time { return epoch.Add(400_000_000_000 * time.Millisecond) }

	nodeOf := func(id string) int64 {
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n >> sequenceBits & nodeMask
	}
	if got := nodeOf(g.Next()); got != 5 {
		t.Fatalf("node of the id = %d, want 5", got)
	}

	c.advance(time.Minute) // The lease runs out.
	func() {
		defer func() {
			if r := recover(); r != ErrNoNode {
				t.Fatalf("Next without a lease: recovered %v, want ErrNoNode", r)
			}
		}()
		g.Next()
		t.Fatal("Next made an id without a lease")
	}()

	l.tick(t.Context()) // The store refuses the renewal: node 5 is given up...
	l.tick(t.Context()) // ... and node 6 leased.
	if got := nodeOf(g.Next()); got != 6 {
		t.Fatalf("node of the id after the new lease = %d, want 6", got)
	}
}
