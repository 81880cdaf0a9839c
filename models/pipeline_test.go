package models_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/domain/status"
	"github.com/paygate/paygate/models"
)

// TestPipeline: statements sent together in one pipeline end as they
// would one by one: each commits before the next begins, a refused one
// fails alone, gorm's callbacks (personal data sealed) run for each, and
// answers scan as database/sql's would.
func TestPipeline(t *testing.T) {
	db := protectedDB(t)
	exec := func(query string, args ...any) func(*gorm.DB) *gorm.DB {
		return func(tx *gorm.DB) *gorm.DB { return tx.Exec(query, args...) }
	}
	count := func(dst *int64) func(*models.PipelineResult) error {
		return func(r *models.PipelineResult) error { return r.Scan(0, dst) }
	}

	t.Run("each statement sees what the one before it wrote", func(t *testing.T) {
		p := models.NewPipeline(db)
		o := pipelineOrder("PIPE-1", "9100000000000000001")
		inserted, insert := models.QueueInsertOrder(t.Context(), p, o)
		var n int64
		seen := p.Add(t.Context(), exec("SELECT count(*) FROM orders WHERE transaction_id = ?", o.TransactionID), count(&n))
		if err := p.Send(t.Context()); err != nil {
			t.Fatal(err)
		}
		if insert.Err != nil || seen.Err != nil || !*inserted || n != 1 {
			t.Fatalf("insert %v (inserted %t), count %v = %d; want inserted and counted 1", insert.Err, *inserted, seen.Err, n)
		}
	})

	t.Run("an order inserted in a pipeline is sealed as gorm's insert seals it", func(t *testing.T) {
		o := pipelineOrder("PIPE-2", "9100000000000000002")
		o.Details = shopperDetails("PIPE-2", "adaline@example.com")
		p := models.NewPipeline(db)
		inserted, insert := models.QueueInsertOrder(t.Context(), p, o)
		if err := p.Send(t.Context()); err != nil || insert.Err != nil || !*inserted {
			t.Fatalf("send %v, insert %v, inserted %t", err, insert.Err, *inserted)
		}
		if raw := rawRow(t, db, "orders", "transaction_id = ?", o.TransactionID); strings.Contains(raw, "Adaline") || strings.Contains(raw, "adaline@example.com") {
			t.Fatalf("the row holds the shopper in the clear: %s", raw)
		}
		got, err := models.FindOrderByNo(t.Context(), db, "A1", "PIPE-2")
		if err != nil {
			t.Fatal(err)
		}
		if got.Details.ShopperEmail != "adaline@example.com" || got.Details.FirstName != "Adaline" {
			t.Fatalf("details read back = %+v", got.Details)
		}
	})

	t.Run("an insert of a row already there writes nothing", func(t *testing.T) {
		p := models.NewPipeline(db)
		inserted, insert := models.QueueInsertOrder(t.Context(), p, pipelineOrder("PIPE-1", "9100000000000000001"))
		if err := p.Send(t.Context()); err != nil || insert.Err != nil || *inserted {
			t.Fatalf("send %v, insert %v, inserted %t; want nothing inserted", err, insert.Err, *inserted)
		}
	})

	t.Run("a statement Postgres refuses fails alone: what came before stays committed, what comes after runs", func(t *testing.T) {
		p := models.NewPipeline(db)
		block := "INSERT INTO blocked_cards (fingerprint, reason, created_at) VALUES (?, 'test', now())"
		first := p.Add(t.Context(), exec(block, "fp-pipe"), nil)
		second := p.Add(t.Context(), exec(block, "fp-pipe"), nil)
		var n int64
		after := p.Add(t.Context(), exec("SELECT count(*) FROM blocked_cards WHERE fingerprint = ?", "fp-pipe"), count(&n))
		if err := p.Send(t.Context()); err != nil {
			t.Fatal(err)
		}
		if first.Err != nil || !models.IsDataError(second.Err) || after.Err != nil || n != 1 {
			t.Fatalf("first %v, second %v (want a unique violation), after %v with %d rows (want 1)", first.Err, second.Err, after.Err, n)
		}
	})

	t.Run("a statement gorm cannot build fails alone", func(t *testing.T) {
		p := models.NewPipeline(db)
		bad := p.Add(t.Context(), func(tx *gorm.DB) *gorm.DB {
			return tx.Model(&models.Order{}).Updates(map[string]any{"result_code": "x"})
		}, nil)
		var n int64
		good := p.Add(t.Context(), exec("SELECT 41 + 1"), count(&n))
		if err := p.Send(t.Context()); err != nil {
			t.Fatal(err)
		}
		if !errors.Is(bad.Err, gorm.ErrMissingWhereClause) || good.Err != nil || n != 42 {
			t.Fatalf("bad %v (want %v), good %v = %d", bad.Err, gorm.ErrMissingWhereClause, good.Err, n)
		}
	})

	t.Run("answers scan as database/sql's would", func(t *testing.T) {
		p := models.NewPipeline(db)
		var (
			none             error
			sealed           []byte
			text             sql.NullString
			num              int
			flag             bool
			rows, rowsOfNone int
		)
		p.Add(t.Context(), exec("SELECT NULL::bytea, NULL::text, 7::bigint, EXISTS (SELECT 1)"), func(r *models.PipelineResult) error {
			rows = r.Rows()
			return r.Scan(0, &sealed, &text, &num, &flag)
		})
		p.Add(t.Context(), exec("SELECT 1 WHERE false"), func(r *models.PipelineResult) error {
			rowsOfNone = r.Rows()
			none = r.Scan(0, &num)
			return nil
		})
		if err := p.Send(t.Context()); err != nil {
			t.Fatal(err)
		}
		if rows != 1 || sealed != nil || text.Valid || flag != true || rowsOfNone != 0 || !errors.Is(none, sql.ErrNoRows) {
			t.Fatalf("rows %d, bytea %v, text %v, bool %t; no rows %d with %v", rows, sealed, text, flag, rowsOfNone, none)
		}
	})

	t.Run("a pipeline that cannot be sent leaves its error on every step", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		p := models.NewPipeline(db)
		a := p.Add(ctx, exec("SELECT 1"), nil)
		b := p.Add(ctx, exec("SELECT 2"), nil)
		err := p.Send(ctx)
		if err == nil || a.Err == nil || b.Err == nil {
			t.Fatalf("send %v, steps %v and %v; want all failed", err, a.Err, b.Err)
		}
	})
}

// pipelineOrder is a new order of account A1.
func pipelineOrder(orderNo, txID string) *models.Order {
	now := time.Now()
	return &models.Order{
		TransactionID: txID, WorkflowID: "order/M1/" + orderNo, MerchantID: "M1", AccountID: "A1", OrderNo: orderNo,
		Currency: "USD", Amount: 1000, PaymentStatus: status.Pending, OrderStatus: status.OrderPending,
		CaptureMode: models.CaptureAuto, CardMasked: "424242******4242", CardToken: "vault-" + orderNo,
		RequestFingerprint: "fp", CreatedAt: now, UpdatedAt: now,
	}
}
