// Package txid generates transaction ids: 19-digit decimal numbers that are
// unique and ordered by creation time.
//
// An id is a 63-bit number laid out as
//
//	milliseconds since 2015-01-01T00:00:00Z << 22 | node << 12 | sequence
//
// with a 10-bit node number and a 12-bit per-millisecond sequence. Ids have
// exactly 19 digits from mid-2022 until 2084.
//
// Ids are unique across processes only if no two running processes use the
// same node. A process's node is configured or leased (Lease, through a
// LeaseStore such as the Postgres table of models.NodeLeases); it is never
// derived from a host name, since hashes of names collide.
package txid

import (
	"strconv"
	"sync"
	"time"
)

const (
	nodeBits     = 10
	sequenceBits = 12
	nodeMask     = 1<<nodeBits - 1
	sequenceMask = 1<<sequenceBits - 1
	timeShift    = nodeBits + sequenceBits
	idDigits     = 19
)

// epoch is the zero point of the id clock.
var epoch = time.Date(2015, time.January, 1, 0, 0, 0, 0, time.UTC)

// Generator produces transaction ids for one node. It is safe for
// concurrent use. Each node must use a distinct node number for ids to be
// unique across nodes.
type Generator struct {
	mu     sync.Mutex
	node   int64
	lease  *Lease // When set, the node comes from it.
	lastMS int64
	seq    int64
	now    func() time.Time // The clock; replaced in tests.
	sleep  func(time.Duration)
}

// NewGenerator returns a Generator for node. Only the low 10 bits of node are
// used, so node numbers range from 0 to 1023.
func NewGenerator(node uint16) *Generator {
	return &Generator{
		node:   int64(node & nodeMask),
		lastMS: -1, // So that the first id may use millisecond 0.
		now:    time.Now,
		sleep:  time.Sleep,
	}
}

// NewLeasedGenerator returns a Generator whose node is the one l holds at
// each call. Next panics with ErrNoNode while l holds none: an id is then
// refused rather than risked as a duplicate of another process's.
func NewLeasedGenerator(l *Lease) *Generator {
	g := NewGenerator(0)
	g.lease = l
	return g
}

// millis returns the milliseconds elapsed since epoch on the generator's
// clock, or 0 if the clock is before epoch.
func (g *Generator) millis() int64 {
	return max(g.now().Sub(epoch).Milliseconds(), 0)
}

// Next returns a new id of exactly 19 decimal digits, greater than every id
// this Generator returned before. If the clock moves backwards, the last
// millisecond is kept. When the 4096 sequence numbers of a millisecond are
// used up, Next waits for the clock's next millisecond; if the clock is
// behind the last millisecond used, Next moves on to the following
// millisecond without waiting.
func (g *Generator) Next() string {
	g.mu.Lock()
	defer g.mu.Unlock()

	ms := g.millis()
	node := g.node
	if g.lease != nil {
		// Asked after the clock was read: the id's time is never later
		// than a moment the lease was known to hold.
		n, ok := g.lease.Node()
		if !ok {
			panic(ErrNoNode)
		}
		node = int64(n & nodeMask)
	}
	if ms <= g.lastMS {
		ms = g.lastMS
		g.seq = (g.seq + 1) & sequenceMask
		if g.seq == 0 {
			ms = g.nextMillis()
		}
	} else {
		g.seq = 0
	}
	g.lastMS = ms

	id := ms<<timeShift | node<<sequenceBits | g.seq
	s := strconv.FormatInt(id, 10)
	if len(s) < idDigits {
		// Only before mid-2022, for example with a wrong clock.
		s = zeros[:idDigits-len(s)] + s
	}
	return s
}

// zeros pads ids to idDigits.
const zeros = "0000000000000000000"

// nextMillis returns the first millisecond after g.lastMS. It waits for the
// clock to reach it, unless the clock has gone backwards past g.lastMS.
func (g *Generator) nextMillis() int64 {
	for {
		ms := g.millis()
		switch {
		case ms > g.lastMS:
			return ms
		case ms < g.lastMS:
			return g.lastMS + 1
		}
		g.sleep(100 * time.Microsecond)
	}
}
