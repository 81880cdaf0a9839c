package money_test

import (
	"errors"
	"fmt"

	"github.com/paygate/paygate/internal/domain/money"
)

func ExampleParse() {
	a, err := money.Parse("12.3", "USD")
	fmt.Println(a.Minor, a, err)

	y, err := money.Parse("100.00", "JPY")
	fmt.Println(y.Minor, y, err)

	_, err = money.Parse("100.50", "JPY")
	fmt.Println(errors.Is(err, money.ErrInvalidAmount))

	_, err = money.Parse("12", "usd")
	fmt.Println(errors.Is(err, money.ErrUnknownCurrency))
	// Output:
	// 1230 12.30 <nil>
	// 100 100 <nil>
	// true
	// true
}

func ExampleAmount_String() {
	fmt.Println(money.FromMinor(5, "EUR"))
	fmt.Println(money.FromMinor(1500, "JPY"))
	// Output:
	// 0.05
	// 1500
}
