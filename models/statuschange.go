package models

import "time"

// OrderStatusChange is one change of an order's payment status, written by
// the database itself (a trigger on orders, migration 0009) whichever
// activity made it: the order's timeline in the console.
type OrderStatusChange struct {
	ID            int64     `gorm:"primaryKey"`
	TransactionID string    `gorm:"size:19;not null;index:idx_order_status_changes_tx"`
	FromStatus    int       `gorm:"not null;default:0"`
	ToStatus      int       `gorm:"not null"`
	At            time.Time `gorm:"not null"`
}
