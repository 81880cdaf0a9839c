package notify_test

import (
	"fmt"
	"time"

	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/internal/domain/signing"
)

// A notification's encryption_data covers the payment-result recipe only;
// its other fields (notify_type, notify_id, ...) are covered by the
// webhook-signature header.
func ExampleFields_Get() {
	f := notify.Fields{
		"merchant_id": "10086", "account_id": "10086001", "transaction_id": "1379868670095785984",
		"order_no": "ORD-2026-0002", "currency": "USD", "amount": "12.34",
		"order_status": "1", "result_info": "0000:Success",
		"notify_type": "payment", // not part of the recipe
	}
	fmt.Println(signing.SignPaymentResult("k3y-for-tests-0123456789abcdef", signing.PaymentResultFrom(f.Get)))
	// Output: 6036B8D34D939F79412A6B733CC41CD788E73E76760725ACD5D829DDB62B15ED
}

func ExampleBody() {
	fmt.Println(string(notify.Body(notify.Fields{"order_no": "ORD 1", "amount": "12.34", "currency": "USD"})))
	// Output: amount=12.34&currency=USD&order_no=ORD+1
}

func ExampleSign() {
	body := []byte("a=1&b=2")
	h := notify.Sign("whsec-test-key", "msg_2Lh9", time.Unix(1767225600, 0), body)
	fmt.Println("webhook-id:", h.Get("webhook-id"))
	fmt.Println("webhook-timestamp:", h.Get("webhook-timestamp"))
	fmt.Println("webhook-signature:", h.Get("webhook-signature"))
	err := notify.VerifyHeaders("whsec-test-key", h, body, time.Unix(1767225660, 0), notify.DefaultTolerance)
	fmt.Println("verified:", err == nil)
	// Output:
	// webhook-id: msg_2Lh9
	// webhook-timestamp: 1767225600
	// webhook-signature: v1,nTjJcBomJbS/CNOVNEgRZvtNx1L5v9uBhl9YSFS1Iqc=
	// verified: true
}

func ExampleSchedule_Delay() {
	s := notify.DefaultSchedule()
	for attempt := 1; attempt <= 4; attempt++ {
		fmt.Println(attempt, s.Delay("notify-1", attempt))
	}
	// Output:
	// 1 15.795s
	// 2 56.418s
	// 3 1m24.958s
	// 4 3m31.426s
}
