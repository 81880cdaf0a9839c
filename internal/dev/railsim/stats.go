package railsim

// Stats counts the rail's transfers and what they paid. Paid amounts are
// minor units by currency and count completed transfers only: a failed or
// submitted transfer has paid nothing.
type Stats struct {
	Transfers int              `json:"transfers"`
	Submitted int              `json:"submitted"`
	Completed int              `json:"completed"`
	Failed    int              `json:"failed"`
	Attempts  int              `json:"attempts"`
	Paid      map[string]int64 `json:"paid"`
	// ByKey has one entry per idempotency key.
	ByKey map[string]KeyStats `json:"by_key"`
	// ByReference groups transfers by their reference, so a test can prove
	// that one payout was paid once even if it had been sent under two keys.
	ByReference map[string]ReferenceStats `json:"by_reference"`
}

// KeyStats is the transfer under one idempotency key.
type KeyStats struct {
	TransferID string `json:"transfer_id"`
	Status     string `json:"status"`
	Attempts   int    `json:"attempts"`
	// Completed is 1 when the transfer completed, else 0.
	Completed int    `json:"completed"`
	Paid      int64  `json:"paid"`
	Currency  string `json:"currency"`
}

// ReferenceStats counts the transfers that carry one reference.
type ReferenceStats struct {
	Transfers int              `json:"transfers"`
	Completed int              `json:"completed"`
	Paid      map[string]int64 `json:"paid"`
}

func (s *Server) statsLocked() Stats {
	st := Stats{
		Paid:        make(map[string]int64),
		ByKey:       make(map[string]KeyStats),
		ByReference: make(map[string]ReferenceStats),
	}
	for _, id := range s.ids {
		r := s.byID[id]
		st.Transfers++
		st.Attempts += r.Attempt
		ks := KeyStats{TransferID: r.ID, Status: r.Status, Attempts: r.Attempt, Currency: r.Currency}
		rs := st.ByReference[r.Reference]
		if rs.Paid == nil {
			rs.Paid = make(map[string]int64)
		}
		rs.Transfers++
		switch r.Status {
		case StatusSubmitted:
			st.Submitted++
		case StatusFailed:
			st.Failed++
		case StatusCompleted:
			st.Completed++
			st.Paid[r.Currency] += r.Amount
			ks.Completed = 1
			ks.Paid = r.Amount
			rs.Completed++
			rs.Paid[r.Currency] += r.Amount
		}
		st.ByKey[r.IdempotencyKey] = ks
		st.ByReference[r.Reference] = rs
	}
	return st
}
