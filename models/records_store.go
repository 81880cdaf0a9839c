package models

import (
	"context"
	"time"

	"github.com/paygate/paygate/internal/domain/notify"
)

// The methods below are the functions of the same names over the records'
// database: the activities reach the record through them, so that they
// hold a Records rather than a database handle.

func (r Records) StoredCardDeleted(ctx context.Context, tokenID string) (bool, error) {
	return StoredCardDeleted(ctx, r.DB, tokenID)
}

func (r Records) InsertNotification(ctx context.Context, n *Notification) error {
	return InsertNotification(ctx, r.DB, n)
}

func (r Records) FindNotification(ctx context.Context, notifyID string) (*Notification, error) {
	return FindNotification(ctx, r.DB, notifyID)
}

func (r Records) NewerNotification(ctx context.Context, n *Notification) (string, error) {
	return NewerNotification(ctx, r.DB, n)
}

func (r Records) SupersedeNotification(ctx context.Context, notifyID, by string) error {
	return SupersedeNotification(ctx, r.DB, notifyID, by)
}

func (r Records) RecordAttempt(ctx context.Context, a *NotificationAttempt, delivered bool) error {
	return RecordAttempt(ctx, r.DB, a, delivered)
}

func (r Records) SetNotificationStatus(ctx context.Context, notifyID string, status notify.Status) error {
	return SetNotificationStatus(ctx, r.DB, notifyID, status)
}

func (r Records) FindNotifications(ctx context.Context, s NotificationSelection, limit int) ([]Notification, error) {
	return FindNotifications(ctx, r.DB, s, limit)
}

func (r Records) ResetNotification(ctx context.Context, notifyID string, at time.Time) error {
	return ResetNotification(ctx, r.DB, notifyID, at)
}

func (r Records) UpdateOrderState(ctx context.Context, transactionID string, s OrderState) error {
	return UpdateOrderState(ctx, r.DB, transactionID, s)
}

func (r Records) SaveRefund(ctx context.Context, refund *Refund) error {
	return SaveRefund(ctx, r.DB, refund)
}

func (r Records) PayoutMode(ctx context.Context, id string) (string, error) {
	return PayoutMode(ctx, r.DB, id)
}

func (r Records) InsertPayout(ctx context.Context, p *Payout, redraw func() (string, error)) error {
	return InsertPayout(ctx, r.DB, p, redraw)
}

func (r Records) UpdatePayout(ctx context.Context, id string, u PayoutUpdate, at time.Time) error {
	return UpdatePayout(ctx, r.DB, id, u, at)
}

func (r Records) SealLegacyOrders(ctx context.Context, limit int) (int, error) {
	return SealLegacyOrders(ctx, r.DB, limit)
}

func (r Records) SealLegacyPayouts(ctx context.Context, limit int) (int, error) {
	return SealLegacyPayouts(ctx, r.DB, limit)
}

func (r Records) EraseExpired(ctx context.Context, before time.Time, limit int, now time.Time) (PersonalDataErasure, error) {
	return EraseExpired(ctx, r.DB, before, limit, now)
}

func (r Records) FindAccount(ctx context.Context, merchantID, accountID string) (*Account, error) {
	return FindAccount(ctx, r.DB, merchantID, accountID)
}

func (r Records) CountVelocity(ctx context.Context, q VelocityQuery) (VelocityCounts, error) {
	return CountVelocity(ctx, r.DB, q)
}

func (r Records) KeepRiskVerdict(ctx context.Context, transactionID string, v RiskVerdict) (RiskVerdict, error) {
	return KeepRiskVerdict(ctx, r.DB, transactionID, v)
}

func (r Records) AttachCard(ctx context.Context, transactionID string, c OrderCard) error {
	return AttachCard(ctx, r.DB, transactionID, c)
}

func (r Records) AttachPaymentMethod(ctx context.Context, transactionID, method string) error {
	return AttachPaymentMethod(ctx, r.DB, transactionID, method)
}

func (r Records) InsertOrder(ctx context.Context, o *Order) (existing string, err error) {
	return InsertOrder(ctx, r.DB, o)
}

// Pipeline is an empty pipeline over the record.
func (r Records) Pipeline() *Pipeline { return NewPipeline(r.DB) }

func (r Records) UpdateOrderResult(ctx context.Context, transactionID string, result OrderResult) error {
	return UpdateOrderResult(ctx, r.DB, transactionID, result)
}

func (r Records) KeepCard(ctx context.Context, c *StoredCard) (*StoredCard, error) {
	return KeepCard(ctx, r.DB, c)
}

func (r Records) SetOrderToken(ctx context.Context, transactionID, tokenID string) error {
	return SetOrderToken(ctx, r.DB, transactionID, tokenID)
}

func (r Records) RecordSubscription(ctx context.Context, s *Subscription) error {
	return RecordSubscription(ctx, r.DB, s)
}

func (r Records) UpdateSubscription(ctx context.Context, recurringID string, u SubscriptionUpdate) error {
	return UpdateSubscription(ctx, r.DB, recurringID, u)
}

func (r Records) SaveDispute(ctx context.Context, d *Dispute) error { return SaveDispute(ctx, r.DB, d) }

func (r Records) FindDispute(ctx context.Context, merchantID, accountID, id string) (*Dispute, error) {
	return FindDispute(ctx, r.DB, merchantID, accountID, id)
}

func (r Records) ListDisputes(ctx context.Context, merchantID, accountID string, limit int) ([]Dispute, error) {
	return ListDisputes(ctx, r.DB, merchantID, accountID, limit)
}

func (r Records) AddDisputeEvidence(ctx context.Context, e *DisputeEvidence) (bool, error) {
	return AddDisputeEvidence(ctx, r.DB, e)
}

// RemoveDisputeEvidence is models.RemoveDisputeEvidence over the records' database.
func (r Records) RemoveDisputeEvidence(ctx context.Context, disputeID string, ids []string) error {
	return RemoveDisputeEvidence(ctx, r.DB, disputeID, ids)
}

func (r Records) DisputeEvidenceOf(ctx context.Context, disputeID string) ([]DisputeEvidence, error) {
	return DisputeEvidenceOf(ctx, r.DB, disputeID)
}

func (r Records) ConsoleDisputes(ctx context.Context, merchantID, mode string, limit int) ([]Dispute, error) {
	return ConsoleDisputes(ctx, r.DB, merchantID, mode, limit)
}

func (r Records) DisputeRates(ctx context.Context, since time.Time, mode string) ([]DisputeRate, error) {
	return DisputeRates(ctx, r.DB, since, mode)
}

func (r Records) SaveOrderReopen(ctx context.Context, transactionID, run string, input []byte, at time.Time) (bool, error) {
	return SaveOrderReopen(ctx, r.DB, transactionID, run, input, at)
}

func (r Records) TakeOrderReopen(ctx context.Context, transactionID, run string) (ReopenTake, error) {
	return TakeOrderReopen(ctx, r.DB, transactionID, run)
}

func (r Records) NoteChargeSend(ctx context.Context, key, connector string, at time.Time) (bool, error) {
	return NoteChargeSend(ctx, r.DB, key, connector, at)
}

func (r Records) ChargeSent(ctx context.Context, key string) (bool, error) {
	return ChargeSent(ctx, r.DB, key)
}

func (r Records) ForgetChargeSend(ctx context.Context, key string) error {
	return ForgetChargeSend(ctx, r.DB, key)
}
