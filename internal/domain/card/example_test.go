package card_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/paygate/paygate/internal/domain/card"
)

func Example() {
	pan := "4242424242424242"
	brand := card.Brand(pan)
	fmt.Println(card.ValidateNumber(pan), brand, card.Mask(pan))
	fmt.Println(card.ValidateCVV("739", brand))
	fmt.Println(card.ValidateCVV("739", "amex"))
	// Output:
	// <nil> visa 424242******4242
	// <nil>
	// card: invalid security code
}

func ExampleCheckExpiry() {
	now := time.Date(2026, time.March, 15, 0, 0, 0, 0, time.UTC)
	fmt.Println(card.CheckExpiry("03", "26", now))
	fmt.Println(errors.Is(card.CheckExpiry("02", "2026", now), card.ErrExpired))
	fmt.Println(errors.Is(card.CheckExpiry("1", "2099", now), card.ErrInvalidExpiry))
	// Output:
	// <nil>
	// true
	// true
}

func ExampleMask() {
	fmt.Println(card.Mask("378282246310005"))
	fmt.Println(card.Mask("1234567890"))
	// Output:
	// 378282*****0005
	// **********
}
