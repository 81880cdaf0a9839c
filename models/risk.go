package models

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
)

// VelocityWindow asks how many orders used one value since a time.
type VelocityWindow struct {
	Value string // "" asks nothing: the count is 0
	Since time.Time
}

// VelocityQuery asks how many other orders of an account used the same
// card, shopper email and shopper IP, each within its own window, and
// whether a card is on the blocked-card list.
type VelocityQuery struct {
	AccountID string
	// ExcludeTransactionID is the payment being checked: it is already
	// recorded and must not count against itself.
	ExcludeTransactionID string
	Card                 VelocityWindow // by card fingerprint
	Email                VelocityWindow // by shopper email, exactly as sent
	IP                   VelocityWindow // by shopper IP
	Device               VelocityWindow // by device fingerprint
	// Blocklist is a card fingerprint to look up on the blocked-card list
	// ("" looks up nothing). It is apart from Card: a test account's test
	// card counts for no velocity, yet a blocked one is still refused.
	Blocklist string
}

// VelocityCounts are the answers to a VelocityQuery.
type VelocityCounts struct {
	Card, Email, IP, Device int
	CardBlocked             bool
}

// CountVelocity counts, in one statement, the account's other orders
// created since each window's start with the window's value, and looks the
// card up on the blocked-card list. Every order counts, whatever its
// outcome: velocity limits attempts, not successes.
func CountVelocity(ctx context.Context, db *gorm.DB, q VelocityQuery) (VelocityCounts, error) {
	var out VelocityCounts
	query, args, dsts, err := velocityStatement(db, q, &out)
	if err != nil || query == "" {
		return out, err
	}
	err = db.WithContext(ctx).Raw(query, args...).Row().Scan(dsts...)
	if err != nil {
		return VelocityCounts{}, fmt.Errorf("count velocity of account %s: %w", q.AccountID, err)
	}
	return out, nil
}

// QueueCountVelocity queues CountVelocity's statement on p: once p is sent,
// counts holds the answers or step.Err why there are none.
func QueueCountVelocity(ctx context.Context, p *Pipeline, q VelocityQuery) (counts *VelocityCounts, step *PipelineStep) {
	var out VelocityCounts
	query, args, dsts, err := velocityStatement(p.db, q, &out)
	if err != nil || query == "" {
		return &out, &PipelineStep{Err: err}
	}
	step = p.Add(ctx, func(tx *gorm.DB) *gorm.DB { return tx.Exec(query, args...) }, func(r *PipelineResult) error {
		if err := r.Scan(0, dsts...); err != nil {
			return fmt.Errorf("count velocity of account %s: %w", q.AccountID, err)
		}
		return nil
	})
	return &out, step
}

// velocityStatement is CountVelocity's statement, its arguments and where
// its columns go in out; "" when q asks nothing.
//
// Each count is a subquery of its own that the value's index (value,
// account_id, created_at) answers with the window's rows alone; one count over the
// values OR-ed together let the planner of a table without statistics read
// the account's every order instead (migration 0027).
func velocityStatement(db *gorm.DB, q VelocityQuery, out *VelocityCounts) (query string, args, dsts []any, err error) {
	pd, err := personalDataOf(db)
	if err != nil {
		return "", nil, nil, err
	}
	// Emails and addresses are stored as keyed hashes only.
	email, ip, device := q.Email, q.IP, q.Device
	email.Value, ip.Value = pd.Hash(HashEmail, email.Value), pd.Hash(HashIP, ip.Value)
	device.Value = pd.Hash(HashDevice, device.Value)
	parts := []struct {
		column string
		w      VelocityWindow
		dst    *int
	}{
		{"card_fingerprint", q.Card, &out.Card},
		{"shopper_email_hash", email, &out.Email},
		{"shopper_ip_hash", ip, &out.IP},
		{"device_fingerprint_hash", device, &out.Device},
	}
	var selects []string
	for _, p := range parts {
		if p.w.Value == "" {
			continue
		}
		selects = append(selects, "(SELECT count(*) FROM orders WHERE "+p.column+
			" = ? AND created_at >= ? AND account_id = ? AND transaction_id <> ?)")
		args = append(args, p.w.Value, p.w.Since, q.AccountID, q.ExcludeTransactionID)
		dsts = append(dsts, p.dst)
	}
	if q.Blocklist != "" {
		selects = append(selects, "EXISTS (SELECT 1 FROM blocked_cards WHERE fingerprint = ?)")
		args = append(args, q.Blocklist)
		dsts = append(dsts, &out.CardBlocked)
	}
	if len(selects) == 0 {
		return "", nil, nil, nil
	}
	return "SELECT " + strings.Join(selects, ", "), args, dsts, nil
}

// RiskVerdict is a risk check's verdict as an order's row keeps it.
type RiskVerdict struct {
	Action  string
	Score   int
	Reasons []RiskReason
	Rule    string
}

// KeepRiskVerdict writes v on the order's row unless a verdict was given
// there before, and answers the verdict that stands: v, or the one given
// before. A check run again for the order (a worker that died after the
// charge was sent) so answers what the charge was made on. A verdict was
// given before when the check wrote one (risk_rule is set), or when the row
// holds an outcome (state_version above 0) with a risk action, as a release
// before this one left it: the check of such an order did not keep its
// rule, so the kept verdict takes v's rule when the actions agree and none
// otherwise. An order not recorded answers v, unwritten. One statement
// when v is written, two when an earlier verdict is read back.
func KeepRiskVerdict(ctx context.Context, db *gorm.DB, transactionID string, v RiskVerdict) (RiskVerdict, error) {
	var reasons any // SQL NULL for none, as the outcome's write leaves it
	if v.Reasons != nil {
		b, err := json.Marshal(v.Reasons)
		if err != nil {
			return RiskVerdict{}, fmt.Errorf("keep risk verdict of %s: %w", transactionID, err)
		}
		reasons = string(b)
	}
	res := db.WithContext(ctx).Exec(`UPDATE orders SET risk_action = ?, risk_score = ?, risk_reasons = CAST(? AS jsonb), risk_rule = ?
		WHERE transaction_id = ? AND risk_rule IS NULL AND (state_version = 0 OR coalesce(risk_action, '') = '')`,
		v.Action, v.Score, reasons, v.Rule, transactionID)
	if res.Error != nil {
		return RiskVerdict{}, fmt.Errorf("keep risk verdict of %s: %w", transactionID, res.Error)
	}
	if res.RowsAffected == 1 {
		return v, nil
	}
	var (
		action, rule sql.NullString
		score        int
		raw          []byte
	)
	err := db.WithContext(ctx).Raw(`SELECT risk_action, risk_score, risk_reasons, risk_rule FROM orders WHERE transaction_id = ?`,
		transactionID).Row().Scan(&action, &score, &raw, &rule)
	if errors.Is(err, sql.ErrNoRows) {
		return v, nil
	}
	if err != nil {
		return RiskVerdict{}, fmt.Errorf("keep risk verdict of %s: %w", transactionID, err)
	}
	kept := RiskVerdict{Action: action.String, Score: score, Rule: rule.String}
	if !rule.Valid && kept.Action == "" {
		// Recorded after the update looked (the order was not there):
		// nothing was given before.
		return v, nil
	}
	if !rule.Valid && kept.Action == v.Action {
		kept.Rule = v.Rule
	}
	if raw != nil {
		if err := json.Unmarshal(raw, &kept.Reasons); err != nil {
			return RiskVerdict{}, fmt.Errorf("keep risk verdict of %s: reasons: %w", transactionID, err)
		}
	}
	return kept, nil
}
