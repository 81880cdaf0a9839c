package signing_test

import (
	"fmt"

	"github.com/paygate/paygate/internal/domain/signing"
)

// The authorise card request is signed over merchant_id, account_id,
// order_no, currency, amount, first_name, last_name, card, expiration_year,
// expiration_month, security_code and shopper_email, in that order.
func ExampleSign_authoriseCard() {
	const signKey = "k3y-for-tests-0123456789abcdef"
	sig := signing.Sign(signKey,
		"10086",            // merchant_id
		"10086001",         // account_id
		"ORD-2026-0002",    // order_no
		"USD",              // currency
		"12.34",            // amount
		"Ada",              // first_name
		"Lovelace",         // last_name
		"4242424242424242", // card
		"2031",             // expiration_year
		"12",               // expiration_month
		"739",              // security_code
		"ada@example.com",  // shopper_email
	)
	fmt.Println(sig)
	// Output: aa3b32c61629fbb1ade394b58846636066583f9cff5b3a942dee426ff3d836a0
}

// A payment result (the response, notifications and the return_url redirect)
// is signed with upper-case hex over merchant_id, account_id, transaction_id,
// order_no, currency, amount, order_status and result_info.
func ExampleSignUpper_paymentResult() {
	const signKey = "k3y-for-tests-0123456789abcdef"
	values := []string{
		"10086",               // merchant_id
		"10086001",            // account_id
		"1379868670095785984", // transaction_id
		"ORD-2026-0002",       // order_no
		"USD",                 // currency
		"12.34",               // amount
		"1",                   // order_status
		"0000:Success",        // result_info
	}
	sig := signing.SignUpper(signKey, values...)
	fmt.Println(sig)
	fmt.Println(signing.Verify(signKey, sig, values...))
	// Output:
	// 6036B8D34D939F79412A6B733CC41CD788E73E76760725ACD5D829DDB62B15ED
	// true
}

func ExampleVerify() {
	const signKey = "k3y-for-tests-0123456789abcdef"
	sig := "46D5224B05C84A006B32E00A3254269A09562023846C554EBC94230FF911F7A8"
	fmt.Println(signing.Verify(signKey, sig, "10086", "10086001"))
	fmt.Println(signing.Verify(signKey, sig, "10086", "10086002"))
	// Output:
	// true
	// false
}

// A payment result is signed the same way wherever it goes: the XML answer,
// the return_url redirect and every notification.
func ExampleSignPaymentResult() {
	const signKey = "k3y-for-tests-0123456789abcdef"
	r := signing.PaymentResult{
		MerchantID: "10086", AccountID: "10086001", TransactionID: "1379868670095785984",
		OrderNo: "ORD-2026-0002", Currency: "USD", Amount: "12.34",
		OrderStatus: "1", ResultInfo: "0000:Success",
	}
	fmt.Println(signing.SignPaymentResult(signKey, r))
	// Output: 6036B8D34D939F79412A6B733CC41CD788E73E76760725ACD5D829DDB62B15ED
}

// The optimise request is signed over merchant_id, account_id, request_id,
// currency, amount and shopper_email, in that order; country is not signed.
func ExampleOptimiseRequest() {
	const signKey = "k3y-for-tests-0123456789abcdef"
	req := signing.OptimiseRequest{MerchantID: "10086", AccountID: "10086001", RequestID: "OPT-2026-0001",
		Currency: "EUR", Amount: "25.00", ShopperEmail: "ada@example.com"}
	fmt.Println(signing.Sign(signKey, req.Values()...))
	// Output: 72a6d625b802ae27be74ad69ab8669bf799dab17b0aec5bac93d8c0a0a75a0a7
}
