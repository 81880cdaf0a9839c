package txid_test

import (
	"fmt"

	"github.com/paygate/paygate/internal/txid"
)

func ExampleGenerator_Next() {
	g := txid.NewGenerator(txid.NodeFromString("api-1"))
	a, b := g.Next(), g.Next()
	fmt.Println(len(a), len(b), a < b)
	// Output: 19 19 true
}

func ExampleNodeFromString() {
	fmt.Println(txid.NodeFromString("api-1"))
	// Output: 637
}
