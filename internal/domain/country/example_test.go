package country_test

import (
	"fmt"

	"github.com/paygate/paygate/internal/domain/country"
)

func ExampleKnown() {
	fmt.Println(country.Known("GB"), country.Known("UK"), country.Known("gb"))
	// Output: true false false
}
