package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// Pipeline sends statements to Postgres in one write and reads their
// answers in one go: one round trip for all of them where each would take
// its own. Each statement is its own implicit transaction (a Sync follows
// it), so each commits before the next begins, exactly as if they were sent
// one after the other: what one writes the next sees, and a statement that
// fails fails alone.
//
// Statements are built by gorm in a dry run, so its callbacks (the sealing
// of personal data, the statement counter) run for each as they would for
// a statement gorm sends.
type Pipeline struct {
	db    *gorm.DB
	steps []*PipelineStep
}

// PipelineStep is one statement of a Pipeline; Err is set once the
// pipeline is sent.
type PipelineStep struct {
	sql  string
	args []any
	read func(*PipelineResult) error
	rows int64
	// Err is the statement's failure: it could not be built, Postgres
	// refused it, its answer could not be read, or the pipeline was not
	// sent.
	Err error
}

// PipelineResult is a statement's answer as Postgres gave it.
type PipelineResult struct {
	// RowsAffected is the count of the command tag (rows inserted,
	// updated, deleted or selected).
	RowsAffected int64
	rows         [][][]byte
	fields       []pgconn.FieldDescription
	types        *pgtype.Map
}

// NewPipeline returns an empty pipeline over db.
func NewPipeline(db *gorm.DB) *Pipeline { return &Pipeline{db: db} }

// Over reports whether the pipeline sends its statements to db.
func (p *Pipeline) Over(db *gorm.DB) bool { return p.db == db }

// Add queues the statement build makes of a dry-run session of the
// pipeline's database (tx.Create(row), tx.Exec(sql, args...)); read, when
// set, is given its answer while the pipeline is sent, and its error is the
// step's.
func (p *Pipeline) Add(ctx context.Context, build func(tx *gorm.DB) *gorm.DB, read func(*PipelineResult) error) *PipelineStep {
	step := &PipelineStep{read: read}
	p.steps = append(p.steps, step)
	// The dry run's own trace would log every statement as taking no
	// time; Send traces each with the pipeline's time instead.
	tx := build(p.db.Session(&gorm.Session{DryRun: true, NewDB: true, Context: ctx, Logger: logger.Discard}))
	if tx.Error != nil {
		step.Err = tx.Error
		return step
	}
	step.sql, step.args = tx.Statement.SQL.String(), tx.Statement.Vars
	return step
}

// Send sends every step that was built and reads every answer. It returns
// an error only when the pipeline as a whole failed (no connection, a
// broken one), which every step not yet answered holds too.
func (p *Pipeline) Send(ctx context.Context) error {
	pending := make([]*PipelineStep, 0, len(p.steps))
	for _, s := range p.steps {
		if s.Err == nil {
			pending = append(pending, s)
		}
	}
	if len(pending) == 0 {
		return nil
	}
	fail := func(err error) error {
		for _, s := range pending {
			if s.Err == nil {
				s.Err = err
			}
		}
		return err
	}
	sqlDB, err := p.db.DB()
	if err != nil {
		return fail(fmt.Errorf("pipeline: %w", err))
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		return fail(fmt.Errorf("pipeline: %w", err))
	}
	defer conn.Close()
	begin := time.Now()
	// The database's logger sees each statement as if sent alone, with the
	// pipeline's time (a slow pipeline logs each of its statements as slow).
	defer func() {
		for _, s := range pending {
			p.db.Logger.Trace(ctx, begin, func() (string, int64) { return s.sql, s.rows }, s.Err)
		}
	}()
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("pipeline: the driver's connection is a %T, not pgx's", dc)
		}
		return sendPipeline(ctx, c.Conn(), pending)
	})
	if err != nil {
		return fail(err)
	}
	return nil
}

// sendPipeline sends steps on conn and reads their answers.
func sendPipeline(ctx context.Context, conn *pgx.Conn, steps []*PipelineStep) error {
	// Each statement is prepared once per connection and kept (its SQL is
	// its name), so only a connection's first use of one costs a round
	// trip of its own.
	descs := make([]*pgconn.StatementDescription, len(steps))
	for i, s := range steps {
		sd, err := conn.Prepare(ctx, s.sql, s.sql)
		if err != nil {
			if conn.IsClosed() {
				return fmt.Errorf("pipeline: prepare: %w", err)
			}
			s.Err = err
			continue
		}
		descs[i] = sd
	}
	pl := conn.PgConn().StartPipeline(ctx)
	sent := make([]bool, len(steps))
	var eqb pgx.ExtendedQueryBuilder
	for i, s := range steps {
		if descs[i] == nil {
			continue
		}
		if err := eqb.Build(conn.TypeMap(), descs[i], s.args); err != nil {
			s.Err = fmt.Errorf("pipeline: arguments: %w", err)
			continue
		}
		// The values are copied into the send buffer here, so the
		// builder may be used again for the next step.
		pl.SendQueryStatement(descs[i], eqb.ParamValues, eqb.ParamFormats, eqb.ResultFormats)
		pl.SendPipelineSync()
		sent[i] = true
	}
	if err := pl.Flush(); err != nil {
		_ = pl.Close()
		return fmt.Errorf("pipeline: send: %w", err)
	}
	for i, s := range steps {
		if !sent[i] {
			continue
		}
		if err := readStep(pl, conn.TypeMap(), descs[i], s); err != nil {
			_ = pl.Close()
			return err
		}
	}
	if err := pl.Close(); err != nil {
		return fmt.Errorf("pipeline: close: %w", err)
	}
	return nil
}

// readStep reads one sent step's answer and the Sync after it. A statement
// Postgres refused sets the step's error; only a broken pipeline is
// returned.
func readStep(pl *pgconn.Pipeline, types *pgtype.Map, sd *pgconn.StatementDescription, s *PipelineStep) error {
	res, err := pl.GetResults()
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr):
		s.Err = err
	case err != nil:
		return fmt.Errorf("pipeline: answer: %w", err)
	default:
		rr, ok := res.(*pgconn.ResultReader)
		if !ok {
			return fmt.Errorf("pipeline: answer is a %T, not a statement's", res)
		}
		r := rr.Read()
		if r.Err != nil {
			if !errors.As(r.Err, &pgErr) {
				return fmt.Errorf("pipeline: answer: %w", r.Err)
			}
			s.Err = r.Err
			break
		}
		s.rows = r.CommandTag.RowsAffected()
		if s.read != nil {
			s.Err = s.read(&PipelineResult{RowsAffected: r.CommandTag.RowsAffected(), rows: r.Rows, fields: sd.Fields, types: types})
		}
	}
	res, err = pl.GetResults()
	if err != nil {
		return fmt.Errorf("pipeline: sync: %w", err)
	}
	if _, ok := res.(*pgconn.PipelineSync); !ok {
		return fmt.Errorf("pipeline: sync: got a %T", res)
	}
	return nil
}

// Rows is the number of rows the statement returned.
func (r *PipelineResult) Rows() int { return len(r.rows) }

// Scan copies the columns of the statement's row i into dst, as
// database/sql's Scan would; a row that is not there is sql.ErrNoRows.
func (r *PipelineResult) Scan(i int, dst ...any) error {
	if i >= len(r.rows) {
		return sql.ErrNoRows
	}
	row := r.rows[i]
	if len(dst) != len(row) {
		return fmt.Errorf("scan: %d columns into %d values", len(row), len(dst))
	}
	for j, d := range dst {
		f := r.fields[j]
		if err := r.types.Scan(f.DataTypeOID, r.types.FormatCodeForOID(f.DataTypeOID), row[j], d); err != nil {
			return fmt.Errorf("scan column %s: %w", f.Name, err)
		}
	}
	return nil
}
