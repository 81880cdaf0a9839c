package notify

// Status is where a notification's delivery stands. The values are the
// text the notifications table stores, so they must never change.
type Status string

// The delivery statuses of a notification.
const (
	// Pending: not acknowledged yet; attempts go on (or a redelivery was
	// asked for).
	Pending Status = "pending"
	// Delivered: the merchant acknowledged it with a 2xx. A delivered
	// notification stays delivered.
	Delivered Status = "delivered"
	// Failed: given up once the retry schedule's horizon passed.
	Failed Status = "failed"
)

// Delivery is a notification as its order knows it: which it is, and where
// its delivery stands.
type Delivery struct {
	NotifyID string
	Type     string
	Status   Status
	Attempts int
}
