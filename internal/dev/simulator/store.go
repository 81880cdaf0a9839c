package simulator

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// The simulator's store is a JSON-lines file, appended to: each line is a
// record of the latest state of one charge, refund or finished idempotency
// key, and reading the file back in order leaves the latest of each. The
// first line holds the secret the request fingerprints are keyed with, so
// an idempotent repeat after a restart still matches. A line is written
// before the answer it backs is sent; a process that dies mid-write leaves
// a torn last line, which Open skips. Nothing in it is card data beyond the
// BIN and last four digits a charge keeps.
type store struct {
	mu sync.Mutex
	f  *os.File
}

// storeLine is one line of the store.
type storeLine struct {
	Type     string       `json:"t"`
	Secret   string       `json:"secret,omitempty"`
	Charge   *Charge      `json:"charge,omitempty"`
	Refund   *Refund      `json:"refund,omitempty"`
	Idem     *idemLine    `json:"idem,omitempty"`
	Dispute  *disputeLine `json:"dispute,omitempty"`
	Recorded time.Time    `json:"at"`
}

// idemLine is a finished idempotency key: the answer a repeat gets.
type idemLine struct {
	Scope       string `json:"scope"`
	Key         string `json:"key"`
	Fingerprint string `json:"fingerprint"`
	Status      int    `json:"status"`
	Body        []byte `json:"body"`
}

// disputeLine is a dispute with the address its callbacks go to.
type disputeLine struct {
	Dispute
	CallbackURL string `json:"callback_url"`
}

// Open returns a simulator like NewServer that keeps its charges, refunds
// and finished idempotency keys in opts.DataPath (created if missing) and
// starts from what the file holds: the same charges, the same answers to
// repeated keys, pending refunds settling again, disputes with their
// callbacks sent again where the gateway had not taken them, and the dispute
// card's captures not yet disputed disputed after the set delay. Without a
// DataPath it is NewServer. 3-D Secure authentications and APM payments
// stay in memory.
func Open(opts Options) (*Server, error) {
	s := NewServer(opts)
	if opts.DataPath == "" {
		return s, nil
	}
	if err := s.load(opts.DataPath); err != nil {
		s.Close()
		return nil, fmt.Errorf("acquirer simulator store %s: %w", opts.DataPath, err)
	}
	return s, nil
}

// load reads the store at path into s and keeps it open for appends.
func (s *Server) load(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	var lines []storeLine
	r := bufio.NewReader(f)
	var good int64 // bytes of whole lines read
	for {
		b, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			// A last line without its newline was cut short by a crash.
			break
		}
		if err != nil {
			f.Close()
			return err
		}
		var l storeLine
		if jerr := json.Unmarshal(bytes.TrimSpace(b), &l); jerr != nil {
			f.Close()
			return fmt.Errorf("line at byte %d: %w", good, jerr)
		}
		good += int64(len(b))
		lines = append(lines, l)
	}
	// Appends go after the last whole line.
	if err := f.Truncate(good); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.store = &store{f: f}
	if len(lines) == 0 || lines[0].Type != "secret" {
		if good > 0 {
			return errors.New("the file does not start with its secret")
		}
		return s.store.append(storeLine{Type: "secret", Secret: hex.EncodeToString(s.fpSecret)})
	}
	secret, err := hex.DecodeString(lines[0].Secret)
	if err != nil || len(secret) < 32 {
		return errors.New("the file's secret is not 32 hex bytes")
	}
	s.fpSecret = secret
	for _, l := range lines[1:] {
		switch {
		case l.Charge != nil:
			c := *l.Charge
			if old, ok := s.chargesByID[c.ChargeID]; ok {
				*old = c
				continue
			}
			s.charges = append(s.charges, &c)
			s.chargesByID[c.ChargeID] = &c
			s.chargesByKey[c.IdempotencyKey] = &c
		case l.Refund != nil:
			rf := *l.Refund
			if old, ok := s.refundsByID[rf.RefundID]; ok {
				*old = rf
				continue
			}
			s.refunds = append(s.refunds, &rf)
			s.refundsByID[rf.RefundID] = &rf
		case l.Idem != nil:
			s.idem[l.Idem.Scope+"\x00"+l.Idem.Key] = &idemEntry{
				fingerprint: l.Idem.Fingerprint, done: true, status: l.Idem.Status, body: l.Idem.Body, attempts: 1,
			}
		case l.Dispute != nil:
			d := l.Dispute.Dispute
			d.callbackURL = l.Dispute.CallbackURL
			if s.disputes == nil {
				s.disputes = map[string]*Dispute{}
			}
			s.disputes[d.DisputeID] = &d
		}
	}
	disputed := map[string]bool{}
	for _, d := range s.disputes {
		disputed[d.ChargeID] = true
		if d.CallbackPending {
			go s.retryDispute(d.DisputeID)
		}
	}
	for _, c := range s.charges {
		if !disputed[c.ChargeID] {
			s.scheduleDispute(c)
		}
	}
	for _, rf := range s.refunds {
		if rf.Status == RefundPending {
			id := rf.RefundID
			s.timers[id] = time.AfterFunc(s.settleDelay, func() { s.settle(id) })
		}
	}
	return nil
}

// append writes one line; the caller sends its answer only after it.
func (st *store) append(l storeLine) error {
	l.Recorded = time.Now().UTC()
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.f == nil {
		return errors.New("store closed")
	}
	_, err = st.f.Write(append(b, '\n'))
	return err
}

func (st *store) close() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.f != nil {
		_ = st.f.Close()
		st.f = nil
	}
}

// keepCharge and keepRefund record the latest state of a charge or refund;
// s.mu is held. Without a store they do nothing. A write that fails is
// logged: the simulator's answer still stands, as a real acquirer's would.
func (s *Server) keepCharge(c *Charge) {
	if s.store == nil {
		return
	}
	cp := *c
	if err := s.store.append(storeLine{Type: "charge", Charge: &cp}); err != nil {
		s.logger.Error("acquirer simulator: store charge", "charge_id", c.ChargeID, "error", err)
	}
}

func (s *Server) keepRefund(rf *Refund) {
	if s.store == nil {
		return
	}
	cp := copyRefund(rf)
	if err := s.store.append(storeLine{Type: "refund", Refund: &cp}); err != nil {
		s.logger.Error("acquirer simulator: store refund", "refund_id", rf.RefundID, "error", err)
	}
}

// keepDispute records the latest state of a dispute; s.mu is held.
func (s *Server) keepDispute(d *Dispute) {
	if s.store == nil {
		return
	}
	if err := s.store.append(storeLine{Type: "dispute", Dispute: &disputeLine{Dispute: *d, CallbackURL: d.callbackURL}}); err != nil {
		s.logger.Error("acquirer simulator: store dispute", "dispute_id", d.DisputeID, "error", err)
	}
}

// keepIdem records a finished idempotency key.
func (s *Server) keepIdem(scope, key string, e *idemEntry) {
	if s.store == nil {
		return
	}
	l := &idemLine{Scope: scope, Key: key, Fingerprint: e.fingerprint, Status: e.status, Body: e.body}
	if err := s.store.append(storeLine{Type: "idem", Idem: l}); err != nil {
		s.logger.Error("acquirer simulator: store idempotency key", "error", err)
	}
}
