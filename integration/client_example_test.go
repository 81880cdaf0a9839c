package integration

import (
	"context"
	"errors"
	"fmt"

	"github.com/paygate/paygate/client"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/models"
)

// The Go client's examples run against the gateway this suite starts
// (env.api.URL stands for your gateway's address), each on an account of
// its own.

// exampleClient is a client of a new test account.
func exampleClient(capture string) *client.Client {
	creds, err := clientAccount(context.Background(), capture, merchant.SigningStrong, 0)
	if err != nil {
		panic(err)
	}
	return client.New(env.api.URL, creds)
}

// Pay with a card, then refund part of it.
func Example_clientPayAndRefund() {
	ctx := context.Background()
	c := exampleClient(models.CaptureAuto)
	res, err := c.Authorise(ctx, client.Payment{
		Order: client.Order{OrderNo: "EX-" + randomHex(4), Currency: "USD", Amount: "49.90",
			FirstName: "Ada", LastName: "Lovelace", ShopperEmail: "ada@example.com"},
		Card: "4242424242424242", ExpirationMonth: "12", ExpirationYear: "2031", SecurityCode: "123",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.OrderStatus, res.ResultInfo, res.Amount, res.Currency, res.Card)

	refund, err := c.Refund(ctx, []client.RefundEntry{{TransactionID: res.TransactionID, OrderNo: res.OrderNo,
		Currency: "USD", Amount: "49.90", RefundAmount: "9.90", RefundReason: "damaged"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	r := refund.Orders[0]
	fmt.Println(r.RefundStatus, r.RefundAmount, r.RefundReferenceID == res.TransactionID+"-01", r.RefundMessage)
	// Output:
	// 1 0000:Success 49.90 USD 424242******4242
	// 1 9.90 true 0000:Success
}

// A declined card is an answer, not an error; a request the gateway
// refuses is a *client.Error with its code and a link to its row.
func Example_clientDeclineAndRefusal() {
	ctx := context.Background()
	c := exampleClient(models.CaptureAuto)
	pay := client.Payment{
		Order: client.Order{OrderNo: "EX-" + randomHex(4), Currency: "USD", Amount: "5.00",
			FirstName: "Ada", LastName: "Lovelace", ShopperEmail: "ada@example.com"},
		Card: "4000000000000002", ExpirationMonth: "12", ExpirationYear: "2031", SecurityCode: "123",
	}
	res, err := c.Authorise(ctx, pay)
	fmt.Println(res.OrderStatus, res.ResultInfo, err)

	pay.OrderNo, pay.Currency = "EX-"+randomHex(4), "XTS"
	_, err = c.Authorise(ctx, pay)
	var refusal *client.Error
	if errors.As(err, &refusal) {
		fmt.Println(refusal.Code, refusal.Message)
		fmt.Println(refusal.Help[len(refusal.Help)-len("result-codes.md#i0004"):])
	}
	// Output:
	// 0 A0001:Declined <nil>
	// I0004 Currency not supported for this account: unknown currency XTS
	// result-codes.md#i0004
}

// Read the account's orders as they last changed, page after page, to
// bring a shop's own records up to date.
func Example_clientOrders() {
	ctx := context.Background()
	c := exampleClient(models.CaptureManual)
	for range 3 {
		if _, err := c.Authorise(ctx, client.Payment{
			Order: client.Order{OrderNo: "EX-" + randomHex(4), Currency: "EUR", Amount: "10.00",
				FirstName: "Ada", LastName: "Lovelace", ShopperEmail: "ada@example.com"},
			Card: "5555555555554444", ExpirationMonth: "12", ExpirationYear: "2031", SecurityCode: "123",
		}); err != nil {
			fmt.Println(err)
			return
		}
	}
	n := 0
	for o, err := range c.Orders(ctx, client.OrdersQuery{}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		if o.PaymentStatus == client.PaymentAuthorised {
			n++
		}
	}
	fmt.Println(n, "authorised orders waiting for capture")
	// Output:
	// 3 authorised orders waiting for capture
}
