package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Node numbers of transaction ids (internal/domain/txid): 10 bits.
const (
	MinNode = 0
	MaxNode = 1023
)

// ErrNoFreeNode is returned when every node of the asked range is leased by
// a live process (or its lease ended less than the grace period ago).
var ErrNoFreeNode = errors.New("no free transaction-id node")

// NodeLease is a transaction-id node held by one running process until
// ExpiresAt; the process renews it while it runs. Times are Postgres's own
// clock (now()), so the processes' clocks never decide who holds a node.
type NodeLease struct {
	Node       int       `gorm:"primaryKey;autoIncrement:false"`
	Holder     string    `gorm:"not null"`
	AcquiredAt time.Time `gorm:"not null"`
	ExpiresAt  time.Time `gorm:"not null"`
}

// TableName is the lease table's name.
func (NodeLease) TableName() string { return "node_leases" }

// NodeLeases leases transaction-id nodes in Postgres for one holder, a name
// unique to the running process.
type NodeLeases struct {
	DB     *gorm.DB
	Holder string
	// Min and Max bound the nodes this holder may take (a configured node
	// sets both to it).
	Min, Max int
	// Grace is how long after a lease expired its node stays unused: ids
	// carry their process's wall-clock time, so the grace covers a clock
	// skew between the old and the new holder.
	Grace time.Duration
}

// acquireSQL takes one node of [min, max] that no live lease holds: a new row
// for a node never leased, or an expired row taken over. Two processes racing
// for the same node both reach the ON CONFLICT branch or the insert; Postgres
// locks the row and re-checks the WHERE on the committed version, so only one
// of them gets a row back. The other gets none and tries again.
const acquireSQL = `
INSERT INTO node_leases AS l (node, holder, acquired_at, expires_at)
SELECT n, @holder, now(), now() + make_interval(secs => @ttl)
FROM generate_series(CAST(@lo AS integer), CAST(@hi AS integer)) AS n
WHERE NOT EXISTS (
	SELECT 1 FROM node_leases x
	WHERE x.node = n AND x.expires_at + make_interval(secs => @grace) > now()
)
ORDER BY random()
LIMIT 1
ON CONFLICT (node) DO UPDATE
	SET holder = EXCLUDED.holder, acquired_at = EXCLUDED.acquired_at, expires_at = EXCLUDED.expires_at
	WHERE l.expires_at + make_interval(secs => @grace) <= now()
RETURNING node`

// acquireAttempts bounds the tries of Acquire when other processes take the
// nodes it picked.
const acquireAttempts = 100

// Acquire leases a free node of the holder's range for ttl and returns it.
// It returns ErrNoFreeNode when every node of the range is held.
func (l *NodeLeases) Acquire(ctx context.Context, ttl time.Duration) (uint16, error) {
	if l.Min < MinNode || l.Max > MaxNode || l.Min > l.Max {
		return 0, fmt.Errorf("lease a node: range %d..%d is not within %d..%d", l.Min, l.Max, MinNode, MaxNode)
	}
	args := map[string]any{
		"holder": l.Holder, "ttl": ttl.Seconds(), "grace": l.Grace.Seconds(), "lo": l.Min, "hi": l.Max,
	}
	for range acquireAttempts {
		var nodes []int
		if err := l.DB.WithContext(ctx).Raw(acquireSQL, args).Scan(&nodes).Error; err != nil {
			return 0, fmt.Errorf("lease a node: %w", err)
		}
		if len(nodes) == 1 {
			return uint16(nodes[0]), nil
		}
		// Either every node is held, or another process took the one
		// picked: tell the two apart before trying again.
		free, err := l.anyFree(ctx)
		if err != nil {
			return 0, err
		}
		if !free {
			break
		}
	}
	return 0, l.noFree(ctx)
}

func (l *NodeLeases) anyFree(ctx context.Context) (bool, error) {
	var n int64
	err := l.DB.WithContext(ctx).Raw(`SELECT count(*) FROM generate_series(CAST(@lo AS integer), CAST(@hi AS integer)) AS n
WHERE NOT EXISTS (SELECT 1 FROM node_leases x WHERE x.node = n AND x.expires_at + make_interval(secs => @grace) > now())`,
		map[string]any{"lo": l.Min, "hi": l.Max, "grace": l.Grace.Seconds()}).Scan(&n).Error
	if err != nil {
		return false, fmt.Errorf("lease a node: %w", err)
	}
	return n > 0, nil
}

// noFree describes ErrNoFreeNode; for a single node it names the holder.
func (l *NodeLeases) noFree(ctx context.Context) error {
	if l.Min != l.Max {
		return fmt.Errorf("%w in %d..%d", ErrNoFreeNode, l.Min, l.Max)
	}
	var held NodeLease
	if err := l.DB.WithContext(ctx).Where("node = ?", l.Min).Take(&held).Error; err != nil {
		return fmt.Errorf("%w: node %d", ErrNoFreeNode, l.Min)
	}
	return fmt.Errorf("%w: node %d is leased by %s until %s (plus %s grace)", ErrNoFreeNode,
		l.Min, held.Holder, held.ExpiresAt.UTC().Format(time.RFC3339), l.Grace)
}

// Renew extends the holder's lease of node to ttl from now. It returns false
// when the holder no longer has that lease: it was released, or another
// process took the node after it expired. A lease that expired but was
// not taken is still the holder's: nobody else has used the node since.
func (l *NodeLeases) Renew(ctx context.Context, node uint16, ttl time.Duration) (bool, error) {
	res := l.DB.WithContext(ctx).Exec(`UPDATE node_leases SET expires_at = now() + make_interval(secs => @ttl)
WHERE node = @node AND holder = @holder`, map[string]any{"ttl": ttl.Seconds(), "node": int(node), "holder": l.Holder})
	if res.Error != nil {
		return false, fmt.Errorf("renew node %d: %w", node, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// Release ends the holder's lease of node. The node is free again once the
// grace period has passed. Releasing a lease the holder no longer has is
// not an error.
func (l *NodeLeases) Release(ctx context.Context, node uint16) error {
	err := l.DB.WithContext(ctx).Exec(`UPDATE node_leases SET expires_at = now() WHERE node = @node AND holder = @holder`,
		map[string]any{"node": int(node), "holder": l.Holder}).Error
	if err != nil {
		return fmt.Errorf("release node %d: %w", node, err)
	}
	return nil
}
