// Package reconcile runs the reconciliation of a connector's settlement
// day: it reads the acquirer's report and what the record says is owed,
// has the matching engine (internal/domain/recon) classify both, stores
// the result (models.ReconRun, ReconItem), posts the settled money to the
// ledger, and carries out finance's actions on the exceptions. Every step
// is idempotent: a day run again gives the same items and posts nothing
// twice.
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"gorm.io/gorm"

	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/domain/recon"
	"github.com/paygate/paygate/models"
)

// Source reads an acquirer's settlement report of a day.
type Source interface {
	Settlement(ctx context.Context, day time.Time) ([]recon.Line, error)
}

// Terms are a connector's settlement contract: it settles a day's captures
// and refunds Days days later (T+1, T+2), for Fees.
type Terms struct {
	Days int
	Fees recon.FeeSchedule
}

// Connector is one connector's report and contract.
type Connector struct {
	Source Source
	Terms  Terms
}

// ErrUnknownConnector: the connector does not settle here (not run, or
// without settlement reports).
var ErrUnknownConnector = errors.New("no settlement reports from that connector")

// ErrNotAllowed: the action does not apply to the item's class.
var ErrNotAllowed = errors.New("that action does not apply to this exception")

// ErrConnectorBusy: a day of the exception's connector is being
// reconciled, and the action did not wait for it to end.
var ErrConnectorBusy = models.ErrReconLockBusy

// DefaultActWait is how long finance's action on an exception waits for a
// reconciliation of its connector to end: well inside the console's 90 s
// to write its page.
const DefaultActWait = 30 * time.Second

// Service reconciles.
type Service struct {
	DB         *gorm.DB
	Ledger     *ledger.Ledger
	Connectors map[string]Connector
	Now        func() time.Time
	// ActWait bounds Act's wait for its connector's lock (DefaultActWait
	// when zero).
	ActWait time.Duration
}

// Summary is one reconciliation of a day: the run as stored, and its items
// per class.
type Summary struct {
	Connector  string         `json:"connector"`
	Day        string         `json:"day"`
	Lines      int            `json:"lines"`
	Owed       int            `json:"owed"`
	Exceptions int            `json:"exceptions"`
	Classes    map[string]int `json:"classes"`
}

// PostSummary is what posting a day's settled money did.
type PostSummary struct {
	Posted   int `json:"posted"`
	Unposted int `json:"unposted"`
}

// Day is the settlement day of t: its UTC date at midnight.
func Day(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

func (s *Service) connector(name string) (Connector, error) {
	c, ok := s.Connectors[name]
	if !ok {
		return Connector{}, fmt.Errorf("%w: %q", ErrUnknownConnector, name)
	}
	return c, nil
}

// Reconcile reads the connector's report of day and the settlements owed
// for it (the captures and refunds of the day Terms.Days before), matches
// them and stores the run. A day is reconciled whole: a report that cannot
// be read stores nothing.
func (s *Service) Reconcile(ctx context.Context, connector string, day time.Time) (Summary, error) {
	c, err := s.connector(connector)
	if err != nil {
		return Summary{}, err
	}
	day = Day(day)
	lines, err := c.Source.Settlement(ctx, day)
	if err == nil {
		err = recon.CheckLines(lines)
	}
	if err != nil {
		err = fmt.Errorf("settlement report of %s %s: %w", connector, day.Format(time.DateOnly), err)
		if errors.Is(err, recon.ErrBadReport) {
			// Kept for finance; the day stays due for a corrected report.
			if rerr := models.RefuseReconRun(ctx, s.DB, connector, day, err.Error(), s.now()); rerr != nil {
				return Summary{}, rerr
			}
		}
		return Summary{}, err
	}
	// The report is read before the lock: a slow acquirer holds no other
	// day back.
	unlock, err := models.LockReconConnector(ctx, s.DB, connector)
	if err != nil {
		return Summary{}, err
	}
	defer unlock()
	owed, writtenOff, err := s.owed(ctx, connector, day, c.Terms.Days)
	if err != nil {
		return Summary{}, err
	}
	if err := s.refundsGivenBack(ctx, lines); err != nil {
		return Summary{}, err
	}
	// Chargebacks, fee adjustments and refunds given back name orders of
	// any day.
	var named []string
	for _, l := range lines {
		if l.Type == recon.Chargeback || l.Type == recon.FeeAdjustment || l.Type == recon.RefundFailure {
			named = append(named, l.OrderKey)
		}
	}
	found, err := orderOwners(ctx, s.DB, named)
	if err != nil {
		return Summary{}, err
	}
	known := make(map[string]bool, len(found))
	for k := range found {
		known[k] = true
	}
	elsewhere, err := s.chargebacksElsewhere(ctx, connector, day, lines)
	if err != nil {
		return Summary{}, err
	}
	rep := recon.Reconcile(day.AddDate(0, 0, 1), lines, owed,
		recon.Config{SettleWithin: time.Duration(c.Terms.Days) * 24 * time.Hour, Fees: c.Terms.Fees, Orders: known,
			ChargebacksElsewhere: elsewhere})
	settledLate(rep, writtenOff)
	items, err := s.items(ctx, connector, day, rep)
	if err != nil {
		return Summary{}, err
	}
	// A neighbour's settlement this day's line settled: where its own day
	// already holds it (missing at the acquirer, a line late), that item is
	// the one marked settled, and this day makes none of its own.
	var neighbours []string
	for _, e := range rep.Expected {
		if e.Neighbour {
			neighbours = append(neighbours, owedItemKey(e.Expected))
		}
	}
	held, err := models.ReconOwedHeldElsewhere(ctx, s.DB, connector, day, day.AddDate(0, 0, -2*neighbourDays), day.AddDate(0, 0, 2*neighbourDays), neighbours)
	if err != nil {
		return Summary{}, err
	}
	items = slices.DeleteFunc(items, func(it models.ReconItem) bool { return it.Source == models.ReconSourceOwed && held[it.ItemKey] != nil })
	sum := Summary{Connector: connector, Day: day.Format(time.DateOnly), Lines: len(rep.Lines), Owed: len(rep.Expected),
		Classes: map[string]int{}}
	for _, it := range items {
		if it.Status == models.ReconOpen {
			sum.Exceptions++
		}
		if it.Source == models.ReconSourceLine || it.Class != string(recon.Matched) {
			sum.Classes[it.Class]++
		}
	}
	run := &models.ReconRun{Connector: connector, Day: day, Lines: sum.Lines, Owed: sum.Owed - len(held), Exceptions: sum.Exceptions,
		RanAt: s.now()}
	if err := models.SaveReconRun(ctx, s.DB, run, items); err != nil {
		return Summary{}, err
	}
	var settled []models.ReconSettledElsewhere
	for _, l := range rep.Lines {
		if l.Settles < 0 || rep.Expected[l.Settles].Line != l.No {
			continue // settles nothing, or a duplicate of the line that did
		}
		if it := held[owedItemKey(rep.Expected[l.Settles].Expected)]; it != nil {
			settled = append(settled, models.ReconSettledElsewhere{ID: it.ID, Day: it.Day, Line: l.No, LineDay: day})
		}
	}
	if err := models.SettleReconOwedElsewhere(ctx, s.DB, connector, settled); err != nil {
		return Summary{}, err
	}
	sum.Owed = run.Owed
	return sum, nil
}

// chargebacksElsewhere finds the chargebacks of lines that another day's
// report settled, by the acquirer's reference and direction: an acquirer
// that lists a chargeback again on a later report has not taken the money
// twice, and posted again it would book the cash twice.
func (s *Service) chargebacksElsewhere(ctx context.Context, connector string, day time.Time, lines []recon.Line) (map[recon.OwnLine]string, error) {
	var orders []string
	named := map[string]bool{}
	for _, l := range lines {
		if _, ok := recon.OwnLineOf(l); ok && !named[l.OrderKey] {
			named[l.OrderKey] = true
			orders = append(orders, l.OrderKey)
		}
	}
	if len(orders) == 0 {
		return nil, nil
	}
	items, err := models.ReconChargebacksElsewhere(ctx, s.DB, connector, day, orders)
	if err != nil {
		return nil, err
	}
	out := make(map[recon.OwnLine]string, len(items))
	for _, it := range items {
		k, ok := recon.OwnLineOf(recon.Line{Type: recon.Chargeback, Reference: it.Reference, Gross: it.Gross})
		if _, seen := out[k]; ok && !seen {
			out[k] = fmt.Sprintf("line %d of %s", it.LineNo, it.Day.Format(time.DateOnly))
		}
	}
	return out, nil
}

// neighbourDays is how many days either side of its own an owed settlement
// is offered to a line that names it: an acquirer's day that ends at
// another moment than ours, or a settlement a day late.
const neighbourDays = 1

// owed is what the record says the connector owes for day: the captures and
// refunds of the day settleDays before, and, as neighbours, those of the
// days beside it, less any a line of another day's report already settled
// and any finance wrote off (returned apart: a line that comes for one is
// the gateway's cash, not the order's).
func (s *Service) owed(ctx context.Context, connector string, day time.Time, settleDays int) ([]recon.Expected, map[string]models.ReconItem, error) {
	of := day.AddDate(0, 0, -settleDays)
	owed, err := models.SettlementsOwed(ctx, s.DB, connector, of.AddDate(0, 0, -neighbourDays), of.AddDate(0, 0, 1+neighbourDays))
	if err != nil {
		return nil, nil, err
	}
	from, to := day.AddDate(0, 0, -2*neighbourDays), day.AddDate(0, 0, 2*neighbourDays)
	settled, err := models.ReconOwedSettledElsewhere(ctx, s.DB, connector, day, from, to)
	if err != nil {
		return nil, nil, err
	}
	writtenOff, err := models.ReconOwedWrittenOff(ctx, s.DB, connector, from, to)
	if err != nil {
		return nil, nil, err
	}
	end := of.AddDate(0, 0, 1)
	out := owed[:0]
	for _, e := range owed {
		k := string(e.Type) + "/" + e.Key
		if _, off := writtenOff[k]; off || settled[k] {
			continue
		}
		e.Neighbour = e.At.Before(of) || !e.At.Before(end)
		out = append(out, e)
	}
	return out, writtenOff, nil
}

// settledLate makes a line that names a settlement finance wrote off a
// duplicate of it: the write-off posted the order's settlement, so the cash
// that came is the gateway's, which finance books by writing the line off.
// Matched, the line's posting was taken for a repeat of the write-off and
// the cash was never booked.
func settledLate(rep recon.Report, writtenOff map[string]models.ReconItem) {
	if len(writtenOff) == 0 {
		return
	}
	byRef := map[string]models.ReconItem{}
	for _, it := range writtenOff {
		if it.Reference != "" {
			byRef[it.Type+"/"+it.Reference] = it
		}
	}
	for i := range rep.Lines {
		l := &rep.Lines[i]
		if l.Class != recon.MissingHere {
			continue
		}
		if it, ok := byRef[string(l.Type)+"/"+l.Reference]; ok {
			l.Class = recon.Duplicate
			l.Detail = fmt.Sprintf("settles %s %s, which finance wrote off (%s): its cash is the gateway's", it.Type, it.OwedKey,
				it.Day.Format(time.DateOnly))
		}
	}
}

// owedItemKey is the item key of an owed settlement, the same on every day.
func owedItemKey(e recon.Expected) string { return owedKeyOf(string(e.Type), e.Key) }

// owedKeyOf is the item key of the owed settlement of type typ and our key.
func owedKeyOf(typ, key string) string { return "owed/" + typ + "/" + key }

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// items turns a report into the day's items. A line that settles an owed
// settlement carries its owner and our key of it; a chargeback or fee
// adjustment of an order here carries the order's owner.
func (s *Service) items(ctx context.Context, connector string, day time.Time, rep recon.Report) ([]models.ReconItem, error) {
	var loose []string
	for _, l := range rep.Lines {
		if l.Settles < 0 && (l.Class == recon.Matched || l.Class == recon.RefundReversed) {
			loose = append(loose, l.OrderKey)
		}
	}
	owners, err := orderOwners(ctx, s.DB, loose)
	if err != nil {
		return nil, err
	}
	out := make([]models.ReconItem, 0, len(rep.Lines)+len(rep.Expected))
	for _, l := range rep.Lines {
		it := models.ReconItem{Connector: connector, Day: day, ItemKey: "line/" + strconv.Itoa(l.No), Source: models.ReconSourceLine,
			LineNo: l.No, OrderKey: l.OrderKey, Reference: l.Reference, Type: string(l.Type), Gross: l.Gross, Fee: l.Fee,
			Net: l.Net, Currency: l.Currency, Class: string(l.Class), Detail: l.Detail, Status: status(l.Class)}
		if l.Settles >= 0 {
			e := rep.Expected[l.Settles]
			it.OwedKey, it.MerchantID, it.AccountID = e.Key, e.MerchantID, e.AccountID
		} else if o, ok := owners[l.OrderKey]; ok {
			it.MerchantID, it.AccountID = o[0], o[1]
		}
		out = append(out, it)
	}
	for _, e := range rep.Expected {
		out = append(out, models.ReconItem{Connector: connector, Day: day, ItemKey: owedItemKey(e.Expected),
			Source: models.ReconSourceOwed, LineNo: e.Line, OrderKey: e.OrderKey, OwedKey: e.Key, Reference: e.Reference,
			Type: string(e.Type), Gross: e.Amount, Currency: e.Currency, Class: string(e.Class), MerchantID: e.MerchantID,
			AccountID: e.AccountID, Status: status(e.Class)})
	}
	return out, nil
}

// refundsGivenBack names the order of each refund failure line that does
// not name one (Stripe's names only the refund), from the refund of that
// acquirer reference here, so that finance sees whose refund it was.
func (s *Service) refundsGivenBack(ctx context.Context, lines []recon.Line) error {
	var refs []string
	for _, l := range lines {
		if l.Type == recon.RefundFailure && l.OrderKey == "" && l.Reference != "" {
			refs = append(refs, l.Reference)
		}
	}
	if len(refs) == 0 {
		return nil
	}
	var rows []struct{ AcquirerRef, TransactionID string }
	if err := s.DB.WithContext(ctx).Model(&models.Refund{}).Select("acquirer_ref, transaction_id").
		Where("acquirer_ref IN ?", refs).Scan(&rows).Error; err != nil {
		return fmt.Errorf("refunds given back: %w", err)
	}
	of := make(map[string]string, len(rows))
	for _, r := range rows {
		of[r.AcquirerRef] = r.TransactionID
	}
	for i := range lines {
		if l := &lines[i]; l.Type == recon.RefundFailure && l.OrderKey == "" {
			l.OrderKey = of[l.Reference]
		}
	}
	return nil
}

// status is a new item's status: open for what needs a person.
func status(c recon.Class) string {
	if c == recon.Matched || c == recon.Pending {
		return models.ReconNone
	}
	return models.ReconOpen
}

// orderOwners finds the merchant and account of orders by transaction id.
func orderOwners(ctx context.Context, db *gorm.DB, keys []string) (map[string][2]string, error) {
	out := map[string][2]string{}
	if len(keys) == 0 {
		return out, nil
	}
	var rows []struct{ TransactionID, MerchantID, AccountID string }
	if err := db.WithContext(ctx).Model(&models.Order{}).Select("transaction_id, merchant_id, account_id").
		Where("transaction_id IN ?", keys).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("owners of settled orders: %w", err)
	}
	for _, r := range rows {
		out[r.TransactionID] = [2]string{r.MerchantID, r.AccountID}
	}
	return out, nil
}

// DaysDue lists the days from from to to (inclusive) that have no
// reconciliation yet, whose report was refused, or whose settled money the
// ledger does not all hold (a capture posted late, a posting that stopped
// part way), oldest first.
func (s *Service) DaysDue(ctx context.Context, connector string, from, to time.Time) ([]time.Time, error) {
	from, to = Day(from), Day(to)
	runs, err := models.ReconRuns(ctx, s.DB, connector, from, to.AddDate(0, 0, 1))
	if err != nil {
		return nil, err
	}
	unposted, err := models.ReconDaysUnposted(ctx, s.DB, connector, from, to.AddDate(0, 0, 1))
	if err != nil {
		return nil, err
	}
	done := map[string]bool{}
	for _, r := range runs {
		done[r.Day.UTC().Format(time.DateOnly)] = r.Error == ""
	}
	for _, d := range unposted {
		done[d.UTC().Format(time.DateOnly)] = false
	}
	var out []time.Time
	for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
		if !done[d.Format(time.DateOnly)] {
			out = append(out, d)
		}
	}
	return out, nil
}

// postPage is how many items Post reads at a time.
const postPage = 500

// Post posts the day's settled money to the ledger: every matched line, and
// every exception finance wrote off, not posted yet. An item the ledger
// cannot take yet (the order's capture not posted, a chargeback of an
// order whose dispute is not held yet) keeps its reason and waits for the next run; anything else
// stops the run with an error, to be retried. progress, when set, is told
// each item's id as it is done.
func (s *Service) Post(ctx context.Context, connector string, day time.Time, progress func(id int64)) (PostSummary, error) {
	c, err := s.connector(connector)
	if err != nil {
		return PostSummary{}, err
	}
	day = Day(day)
	pricing := map[[2]string]recon.Pricing{}
	var after int64
	for {
		items, err := models.ReconItemsToPost(ctx, s.DB, connector, day, after, postPage)
		if err != nil {
			return PostSummary{}, err
		}
		if err := s.postPage(ctx, c, items, pricing); err != nil {
			return PostSummary{}, err
		}
		for _, it := range items {
			after = it.ID
			if progress != nil {
				progress(it.ID)
			}
		}
		if len(items) < postPage {
			break
		}
	}
	if err := models.CountReconPosting(ctx, s.DB, connector, day); err != nil {
		return PostSummary{}, err
	}
	var run models.ReconRun
	if err := s.DB.WithContext(ctx).Where("connector = ? AND day = ?", connector, day).Take(&run).Error; err != nil {
		return PostSummary{}, fmt.Errorf("run of %s %s: %w", connector, day.Format(time.DateOnly), err)
	}
	return PostSummary{Posted: run.Posted, Unposted: run.Unposted}, nil
}

// NothingPosted is what a written-off line of no money is marked posted
// with: no journal entry holds it.
const NothingPosted = "nothing: no money"

// postPage posts a page of items: the captures' and refunds' settlements
// in one ledger batch, the rest one by one, and records what became of
// each.
func (s *Service) postPage(ctx context.Context, c Connector, items []models.ReconItem, pricing map[[2]string]recon.Pricing) error {
	marks := make([]models.ReconPosting, 0, len(items))
	var batch []ledger.Settlement
	var batchIDs []int64
	for _, it := range items {
		st, whole, err := s.settlementOf(ctx, c, it, pricing)
		if err != nil {
			return err
		}
		if !whole && (st.Kind == ledger.SettleCapture || st.Kind == ledger.SettleRefund) {
			batch = append(batch, st)
			batchIDs = append(batchIDs, it.ID)
			continue
		}
		if whole && it.Net == 0 {
			// A line of no money written off moves nothing; the ledger
			// takes no empty entry, and the day stayed due for a week.
			marks = append(marks, models.ReconPosting{ID: it.ID, Posted: NothingPosted})
			continue
		}
		var e ledger.Entry
		if whole {
			e, err = s.Ledger.WriteOffLine(ctx, it.Connector, lineRef(it), it.Currency, it.Net)
		} else {
			e, err = s.Ledger.PostSettlement(ctx, st)
		}
		m, err := posting(it.ID, e.Reference, err)
		if err != nil {
			return err
		}
		marks = append(marks, m)
	}
	if len(batch) > 0 {
		res, err := s.Ledger.PostSettlements(ctx, batch)
		if err != nil {
			return err
		}
		for i, r := range res {
			m, err := posting(batchIDs[i], r.Reference, r.Err)
			if err != nil {
				return err
			}
			marks = append(marks, m)
		}
	}
	return models.MarkReconPostedAll(ctx, s.DB, marks)
}

// posting is what an item's posting came to: its entry, or why the ledger
// cannot take it yet; any other error stops the run.
func posting(id int64, reference string, err error) (models.ReconPosting, error) {
	switch {
	case err == nil:
		return models.ReconPosting{ID: id, Posted: reference}, nil
	case errors.Is(err, ledger.ErrNotCredited) || errors.Is(err, ledger.ErrInsufficientFunds) || errors.Is(err, ledger.ErrNotDisputed) ||
		errors.Is(err, ledger.ErrInvalid) || errors.Is(err, ledger.ErrReferenceConflict):
		return models.ReconPosting{ID: id, Error: err.Error()}, nil
	default:
		return models.ReconPosting{}, err
	}
}

// lineRef names a report line across runs: connector, day and number.
func lineRef(it models.ReconItem) string {
	return it.Connector + "/" + it.Day.Format(time.DateOnly) + "/" + strconv.Itoa(it.LineNo)
}

// settlementOf is the settlement an item posts, or whole when the item is a
// line nothing here owed, written off whole.
func (s *Service) settlementOf(ctx context.Context, c Connector, it models.ReconItem, pricing map[[2]string]recon.Pricing) (ledger.Settlement, bool, error) {
	class := recon.Class(it.Class)
	if it.Source == models.ReconSourceLine && (class == recon.Duplicate || class == recon.MissingHere) {
		return ledger.Settlement{}, true, nil
	}
	st := ledger.Settlement{Kind: ledger.SettlementKind(it.Type), OrderKey: it.OrderKey, MerchantID: it.MerchantID,
		AccountID: it.AccountID, Currency: it.Currency, Owed: it.Gross, Net: it.Net, Fee: it.Fee, Line: lineRef(it)}
	switch {
	case it.Source == models.ReconSourceOwed:
		// Written off: never settled, so nothing came and no fee was
		// taken.
		st.Net, st.Fee = 0, 0
	case class == recon.AmountMismatch || class == recon.RefundMismatch:
		// Written off: the record's amount was owed, the line's came.
		owed, err := s.owedOf(ctx, it)
		if err != nil {
			return ledger.Settlement{}, false, err
		}
		st.Owed = owed
	}
	switch st.Kind {
	case ledger.SettleCapture:
		st.OrderKey = it.OwedKey
		p, err := s.pricingOf(ctx, it.MerchantID, it.AccountID, pricing)
		if err != nil {
			return ledger.Settlement{}, false, err
		}
		fee := st.Fee
		if it.Source == models.ReconSourceOwed {
			fee = c.Terms.Fees.Fee(st.Owed)
		}
		st.MerchantFee = p.MerchantFee(st.Owed, fee)
	case ledger.SettleRefund:
		st.RefundKey = it.OwedKey
	case ledger.SettleFeeAdjustment:
		if st.MerchantID == "" {
			// The acquirer's own fee, of no order: the house's cost.
			st.MerchantID, st.AccountID = ledger.HouseMerchant, it.Connector
		}
	}
	return st, false, nil
}

// owedOf is the record's amount of what a mismatched line settled.
func (s *Service) owedOf(ctx context.Context, it models.ReconItem) (int64, error) {
	var owed models.ReconItem
	// Of the days around: a line may settle a neighbouring day's settlement.
	err := s.DB.WithContext(ctx).Where("connector = ? AND day >= ? AND day <= ? AND item_key = ?", it.Connector,
		it.Day.AddDate(0, 0, -2*neighbourDays), it.Day.AddDate(0, 0, 2*neighbourDays), owedKeyOf(it.Type, it.OwedKey)).
		Order("day DESC").Take(&owed).Error
	if err != nil {
		return 0, fmt.Errorf("owed settlement of line %s: %w", lineRef(it), err)
	}
	return owed.Gross, nil
}

// pricingOf reads an account's pricing once per run.
func (s *Service) pricingOf(ctx context.Context, merchantID, accountID string, cache map[[2]string]recon.Pricing) (recon.Pricing, error) {
	k := [2]string{merchantID, accountID}
	if p, ok := cache[k]; ok {
		return p, nil
	}
	var a models.Account
	err := s.DB.WithContext(ctx).Select("pricing").Where("merchant_id = ? AND id = ?", merchantID, accountID).Take(&a).Error
	if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
		return recon.Pricing{}, fmt.Errorf("pricing of %s/%s: %w", merchantID, accountID, err)
	}
	cache[k] = a.Pricing
	return a.Pricing, nil
}

// Act closes an exception as finance decided (resolve with a note, write
// off, mark for the acquirer), audited with the actor; a write-off posts
// its money at once.
func (s *Service) Act(ctx context.Context, id int64, action recon.Action, note, actor string) (models.ReconItem, error) {
	it, err := models.ReconItemByID(ctx, s.DB, id)
	if err != nil {
		return models.ReconItem{}, err
	}
	// A reconciliation of a day beside may be settling this item (a line
	// of its report took it): the action waits for it, as another day's
	// matching would, and reads the item as it left it. A day of many lines
	// takes minutes, so the wait is bounded and finance told to come back,
	// rather than the page timing out.
	wait := s.ActWait
	if wait <= 0 {
		wait = DefaultActWait
	}
	unlock, err := models.LockReconConnectorWithin(ctx, s.DB, it.Connector, wait)
	if errors.Is(err, ErrConnectorBusy) {
		return models.ReconItem{}, fmt.Errorf("%w: try again when it ends", err)
	}
	if err != nil {
		return models.ReconItem{}, err
	}
	defer unlock()
	if it, err = models.ReconItemByID(ctx, s.DB, id); err != nil {
		return models.ReconItem{}, err
	}
	if !recon.Class(it.Class).Allows(action) {
		return models.ReconItem{}, fmt.Errorf("%w: %s of a %s item", ErrNotAllowed, action, it.Class)
	}
	if it.Posted != "" && action == recon.WriteOff {
		return models.ReconItem{}, fmt.Errorf("%w: its money is posted already (%s)", ErrNotAllowed, it.Posted)
	}
	it, err = models.ActOnReconItem(ctx, s.DB, id, string(action), note, actor, s.now())
	if err != nil {
		return models.ReconItem{}, err
	}
	if action != recon.WriteOff {
		return it, nil
	}
	c, err := s.connector(it.Connector)
	if err != nil {
		return it, err
	}
	if err := s.postPage(ctx, c, []models.ReconItem{it}, map[[2]string]recon.Pricing{}); err != nil {
		return it, err
	}
	if err := models.CountReconPosting(ctx, s.DB, it.Connector, it.Day); err != nil {
		return it, err
	}
	return models.ReconItemByID(ctx, s.DB, id)
}

// Totals sums a window's items of one mode's accounts per day, connector,
// source, class and currency (connector or mode empty for all; to
// exclusive).
func (s *Service) Totals(ctx context.Context, connector, mode string, from, to time.Time) ([]models.ReconClassTotal, error) {
	return models.ReconTotals(ctx, s.DB, connector, mode, from, to)
}

// Modes says whether a window's items (connector empty for all; either
// bound zero for none) include live accounts' and test accounts'.
func (s *Service) Modes(ctx context.Context, connector string, from, to time.Time) (live, test bool, err error) {
	return models.ReconModes(ctx, s.DB, connector, from, to)
}

// Runs lists a window's runs.
func (s *Service) Runs(ctx context.Context, connector string, from, to time.Time) ([]models.ReconRun, error) {
	return models.ReconRuns(ctx, s.DB, connector, from, to)
}

// Exceptions lists the exceptions a filter selects.
func (s *Service) Exceptions(ctx context.Context, f models.ReconExceptionFilter) ([]models.ReconItem, error) {
	return models.ReconExceptions(ctx, s.DB, f)
}

// EachException gives every exception a filter selects to fn, a page at a
// time, for an export.
func (s *Service) EachException(ctx context.Context, f models.ReconExceptionFilter, fn func([]models.ReconItem) error) error {
	return models.EachReconException(ctx, s.DB, f, fn)
}

// Statement is a merchant account's settlement statement for a window.
func (s *Service) Statement(ctx context.Context, merchantID, accountID string, from, to time.Time) ([]models.StatementLine, error) {
	return models.SettlementStatement(ctx, s.DB, merchantID, accountID, from, to)
}
