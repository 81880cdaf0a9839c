// Package dispute holds the rules of a cardholder's dispute of a payment:
// its stages and statuses, the moves between them, the money each move
// holds, releases or takes, and when the merchant is reminded of its
// evidence deadline. It is pure, so workflows may call it.
package dispute

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/domain/money"
)

// Stage is how far the cardholder's claim has gone at the acquirer.
type Stage string

// The stages, in the order a dispute may go through them.
const (
	// Inquiry: the issuer asks for information; no money moves yet, and
	// it may never become a chargeback.
	Inquiry Stage = "inquiry"
	// Chargeback: the acquirer has taken the money back; the merchant may
	// answer with evidence.
	Chargeback Stage = "chargeback"
	// PreArbitration: the issuer refused the merchant's evidence and asks
	// again; a second answer is due.
	PreArbitration Stage = "pre_arbitration"
)

// Status is where a dispute stands for the merchant.
type Status string

// The statuses. The last four are final.
const (
	// NeedsResponse: the merchant's evidence is due by the deadline.
	NeedsResponse Status = "needs_response"
	// UnderReview: the evidence went to the acquirer, which decides.
	UnderReview Status = "under_review"
	// Won: the issuer withdrew; held money goes back to the merchant.
	Won Status = "won"
	// Lost: the issuer prevailed, or no evidence came in time; the
	// money and the fee are the merchant's loss.
	Lost Status = "lost"
	// Accepted: the merchant accepted the dispute; as lost.
	Accepted Status = "accepted"
	// Closed: an inquiry the issuer closed without a chargeback; nothing
	// moved.
	Closed Status = "closed"
)

// Final reports whether the dispute has ended.
func (s Status) Final() bool { return s == Won || s == Lost || s == Accepted || s == Closed }

// Code is the status as a number, for the Temporal UI's DisputeStatus:
// 1 needs_response, 2 under_review, 3 won, 4 lost, 5 accepted, 6 closed;
// 0 for none.
func (s Status) Code() int {
	return slices.Index([]Status{NeedsResponse, UnderReview, Won, Lost, Accepted, Closed}, s) + 1
}

// Known reports whether s is one of the statuses.
func (s Status) Known() bool {
	return slices.Contains([]Status{NeedsResponse, UnderReview, Won, Lost, Accepted, Closed}, s)
}

// transitions is the table of moves: from a status, the statuses it may go
// to. A dispute under review goes back to needs_response when it escalates
// to pre-arbitration.
var transitions = map[Status][]Status{
	NeedsResponse: {UnderReview, Won, Lost, Accepted, Closed},
	UnderReview:   {NeedsResponse, Won, Lost, Closed},
}

// ErrIllegalMove wraps every move the table refuses.
var ErrIllegalMove = errors.New("illegal dispute move")

// Check returns nil when a dispute may move from one status to another;
// staying where it is is no move and always allowed.
func Check(from, to Status) error {
	if from == to || slices.Contains(transitions[from], to) {
		return nil
	}
	return fmt.Errorf("%w: %s to %s", ErrIllegalMove, from, to)
}

// Money is what an outcome does with the merchant's held money.
type Money int

// The money moves of an outcome.
const (
	// Keep: nothing moves.
	Keep Money = iota
	// Release: the hold goes back to the merchant (won).
	Release
	// Take: the hold is the merchant's loss: the amount stays with the
	// acquirer and the fee is the gateway's (lost, accepted).
	Take
)

// NeedsHold reports whether a dispute at stage and status must now hold the
// merchant's money: the acquirer has taken it back (every stage but an
// inquiry, and an inquiry once lost or accepted) and it is not held yet.
// The hold is the disputed amount and the fee, from the merchant's
// available balance; a lost inquiry's is taken at once (Settle).
func NeedsHold(held bool, stage Stage, status Status) bool {
	return !held && (stage != Inquiry || status == Lost || status == Accepted)
}

// BlocksRefund reports whether a dispute at stage and status refuses a
// refund of its payment: the acquirer has taken the money back, or is
// deciding a chargeback that takes it, so a refund would pay the
// cardholder twice. An open inquiry does not (refunding is how a merchant
// settles one), nor does a dispute won or an inquiry closed.
func BlocksRefund(stage Stage, status Status) bool {
	return status != Won && status != Closed && NeedsHold(false, stage, status)
}

// Settle is what a dispute's final status does with its held money.
func Settle(held bool, final Status) Money {
	switch {
	case !held:
		return Keep
	case final == Won:
		return Release
	case final == Lost || final == Accepted:
		return Take
	}
	return Keep
}

// FeeMajor is the dispute fee the merchant pays on a chargeback whose
// acquirer reports no fee of its own, in major units of the payment's
// currency: 15.00 USD, 15.00 EUR, 15 JPY.
const FeeMajor = 15

// Fee is the dispute fee in minor units of currency (money.Parse's
// exponent).
func Fee(currency string) (money.Amount, error) {
	return money.Parse(fmt.Sprint(FeeMajor), currency)
}

// Reminders are how long before its evidence deadline the merchant is
// reminded, farthest first.
var Reminders = []time.Duration{72 * time.Hour, 24 * time.Hour}

// RemindersBefore lists the reminder times of a deadline that are still
// ahead of now, earliest first.
func RemindersBefore(deadline, now time.Time) []time.Time {
	var out []time.Time
	for _, d := range Reminders {
		if at := deadline.Add(-d); at.After(now) {
			out = append(out, at)
		}
	}
	return out
}

// Read maps an acquirer's stage and status words onto ours; ok is false for
// words the table does not know, which the dispute then leaves as they are.
func Read(stage, status string) (Stage, Status, bool) {
	st := Stage(stage)
	if st != Inquiry && st != Chargeback && st != PreArbitration {
		return "", "", false
	}
	s := Status(status)
	if !s.Known() || s == Accepted {
		return "", "", false
	}
	return st, s, true
}

// The kinds of file a merchant's evidence may hold. A file named after a
// kind (its name, lower-cased, without its extension, spaces and hyphens as
// underscores: "Receipt.pdf", "shipping-documentation.png") is evidence of
// that kind; any other name is FileOther. Acquirers take one file of each
// kind (Stripe has a field for each), so a dispute's answer sends the newest
// file of each kind.
const (
	FileReceipt                      = "receipt"
	FileCustomerCommunication        = "customer_communication"
	FileCustomerSignature            = "customer_signature"
	FileShippingDocumentation        = "shipping_documentation"
	FileServiceDocumentation         = "service_documentation"
	FileRefundPolicy                 = "refund_policy"
	FileCancellationPolicy           = "cancellation_policy"
	FileDuplicateChargeDocumentation = "duplicate_charge_documentation"
	FileOther                        = "uncategorized_file"
)

// FileKinds are the kinds of evidence file, FileOther last.
var FileKinds = []string{FileReceipt, FileCustomerCommunication, FileCustomerSignature, FileShippingDocumentation,
	FileServiceDocumentation, FileRefundPolicy, FileCancellationPolicy, FileDuplicateChargeDocumentation, FileOther}

// FileKind is the kind of evidence a file of this name is.
func FileKind(name string) string {
	base := strings.ToLower(strings.TrimSpace(name))
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		base = base[:i]
	}
	base = strings.NewReplacer(" ", "_", "-", "_").Replace(strings.TrimSpace(base))
	if slices.Contains(FileKinds, base) {
		return base
	}
	return FileOther
}
