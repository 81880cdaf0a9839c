package keyring_test

import (
	"errors"
	"fmt"

	"github.com/paygate/paygate/internal/domain/keyring"
)

func Example() {
	oldSpec, _ := keyring.GenerateSpec("2025")
	newSpec, _ := keyring.GenerateSpec("2026")

	// Before rotation only the old key exists.
	before, _ := keyring.Parse(oldSpec)
	id, ct, _ := before.Seal([]byte("merchant signing key"), []byte("merchant:10086"))

	// After rotation the new key is active and the old one still opens.
	after, _ := keyring.Parse(newSpec + "," + oldSpec)
	pt, err := after.Open(id, ct, []byte("merchant:10086"))
	fmt.Println(after.ActiveID(), id, string(pt), err)

	_, err = after.Open(id, ct, []byte("merchant:10087"))
	fmt.Println(errors.Is(err, keyring.ErrDecrypt))
	// Output:
	// 2026 2025 merchant signing key <nil>
	// true
}
