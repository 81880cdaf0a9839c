package txid_test

import (
	"fmt"

	"github.com/paygate/paygate/internal/domain/txid"
)

func ExampleGenerator_Next() {
	g := txid.NewGenerator(637) // The node configured for this process.
	a, b := g.Next(), g.Next()
	fmt.Println(len(a), len(b), a < b)
	// Output: 19 19 true
}
