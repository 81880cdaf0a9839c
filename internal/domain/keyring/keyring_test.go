package keyring

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// testKey returns a 32-byte key filled with b.
func testKey(b byte) []byte { return bytes.Repeat([]byte{b}, KeySize) }

func testSpec(id string, b byte) string {
	return id + ":" + base64.StdEncoding.EncodeToString(testKey(b))
}

func TestNew(t *testing.T) {
	tests := []struct {
		name        string
		active      string
		keys        map[string][]byte
		wantErr     bool
		wantUnknown bool
	}{
		{"one key", "k1", map[string][]byte{"k1": testKey(1)}, false, false},
		{"two keys", "k2", map[string][]byte{"k1": testKey(1), "k2": testKey(2)}, false, false},
		{"no keys", "k1", nil, true, false},
		{"active missing", "k3", map[string][]byte{"k1": testKey(1)}, true, true},
		{"short key", "k1", map[string][]byte{"k1": testKey(1)[:31]}, true, false},
		{"long key", "k1", map[string][]byte{"k1": append(testKey(1), 0)}, true, false},
		{"AES-128 key", "k1", map[string][]byte{"k1": testKey(1)[:16]}, true, false},
		{"empty id", "", map[string][]byte{"": testKey(1)}, true, false},
		{"id with colon", "a:b", map[string][]byte{"a:b": testKey(1)}, true, false},
		{"id with comma", "a,b", map[string][]byte{"a,b": testKey(1)}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := New(tt.active, tt.keys)
			if (err != nil) != tt.wantErr {
				t.Fatalf("New error = %v, want error %t", err, tt.wantErr)
			}
			if errors.Is(err, ErrUnknownKey) != tt.wantUnknown {
				t.Errorf("errors.Is(%v, ErrUnknownKey) = %t, want %t", err, !tt.wantUnknown, tt.wantUnknown)
			}
			if err == nil && k.ActiveID() != tt.active {
				t.Errorf("ActiveID() = %q, want %q", k.ActiveID(), tt.active)
			}
		})
	}
}

func TestNewCopiesKeys(t *testing.T) {
	key := testKey(1)
	k, err := New("k1", map[string][]byte{"k1": key})
	if err != nil {
		t.Fatal(err)
	}
	id, ct, err := k.Seal([]byte("secret"), nil)
	if err != nil {
		t.Fatal(err)
	}
	key[0] ^= 0xff
	if got, err := k.Open(id, ct, nil); err != nil || string(got) != "secret" {
		t.Errorf("Open after caller changed its key slice = %q, %v, want %q, nil", got, err, "secret")
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name       string
		spec       string
		wantActive string
		wantErr    bool
	}{
		{"one key", testSpec("k1", 1), "k1", false},
		{"first is active", testSpec("new", 2) + "," + testSpec("old", 1), "new", false},
		{"whitespace around entries", " " + testSpec("new", 2) + " ,\n" + testSpec("old", 1) + "\n", "new", false},
		{"empty", "", "", true},
		{"no colon", "k1", "", true},
		{"empty id", testSpec("", 1), "", true},
		{"trailing comma", testSpec("k1", 1) + ",", "", true},
		{"duplicate id", testSpec("k1", 1) + "," + testSpec("k1", 2), "", true},
		{"bad base64", "k1:not*base64", "", true},
		{"url-safe base64", "k1:" + base64.URLEncoding.EncodeToString(bytes.Repeat([]byte{0xfb}, 32)), "", true},
		{"short key", "k1:" + base64.StdEncoding.EncodeToString(testKey(1)[:16]), "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := Parse(tt.spec)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Parse error = %v, want error %t", err, tt.wantErr)
			}
			if err != nil {
				if strings.Contains(err.Error(), base64.StdEncoding.EncodeToString(testKey(1))) {
					t.Errorf("error %q reveals key material", err)
				}
				return
			}
			if k.ActiveID() != tt.wantActive {
				t.Errorf("ActiveID() = %q, want %q", k.ActiveID(), tt.wantActive)
			}
		})
	}
}

func TestGenerateSpec(t *testing.T) {
	spec, err := GenerateSpec("2026-01")
	if err != nil {
		t.Fatal(err)
	}
	id, b64, _ := strings.Cut(spec, ":")
	if id != "2026-01" {
		t.Errorf("id = %q, want %q", id, "2026-01")
	}
	key, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(key) != KeySize {
		t.Errorf("key = %d bytes, %v, want %d bytes", len(key), err, KeySize)
	}
	other, err := GenerateSpec("2026-01")
	if err != nil {
		t.Fatal(err)
	}
	if other == spec {
		t.Error("GenerateSpec returned the same key twice")
	}
	k, err := Parse(spec)
	if err != nil {
		t.Fatalf("Parse(GenerateSpec()) error = %v", err)
	}
	if k.ActiveID() != "2026-01" {
		t.Errorf("ActiveID() = %q, want %q", k.ActiveID(), "2026-01")
	}

	for _, bad := range []string{"", "a:b", "a,b"} {
		t.Run("invalid id "+bad, func(t *testing.T) {
			if _, err := GenerateSpec(bad); err == nil {
				t.Errorf("GenerateSpec(%q) error = nil, want an error", bad)
			}
		})
	}
}

func TestSealOpen(t *testing.T) {
	k, err := Parse(testSpec("k1", 1))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		plaintext []byte
		aad       []byte
	}{
		{"card", []byte("4242424242424242|12|2031"), []byte("card:tok_123")},
		{"no aad", []byte("sign-key"), nil},
		{"empty plaintext", nil, []byte("aad")},
		{"binary", []byte{0, 1, 2, 0xff}, []byte{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, ct, err := k.Seal(tt.plaintext, tt.aad)
			if err != nil {
				t.Fatal(err)
			}
			if id != "k1" {
				t.Errorf("Seal key id = %q, want %q", id, "k1")
			}
			if want := NonceSize + len(tt.plaintext) + 16; len(ct) != want {
				t.Errorf("ciphertext is %d bytes, want %d", len(ct), want)
			}
			if len(tt.plaintext) > 0 && bytes.Contains(ct, tt.plaintext) {
				t.Error("ciphertext contains the plaintext")
			}
			got, err := k.Open(id, ct, tt.aad)
			if err != nil {
				t.Fatalf("Open error = %v", err)
			}
			if !bytes.Equal(got, tt.plaintext) {
				t.Errorf("Open = %q, want %q", got, tt.plaintext)
			}
		})
	}
}

func TestSealRandomNonce(t *testing.T) {
	k, err := Parse(testSpec("k1", 1))
	if err != nil {
		t.Fatal(err)
	}
	_, a, _ := k.Seal([]byte("same"), nil)
	_, b, _ := k.Seal([]byte("same"), nil)
	if bytes.Equal(a[:NonceSize], b[:NonceSize]) || bytes.Equal(a, b) {
		t.Error("two seals of the same plaintext share a nonce or ciphertext")
	}
}

func TestRotation(t *testing.T) {
	oldRing, err := Parse(testSpec("old", 1))
	if err != nil {
		t.Fatal(err)
	}
	oldID, oldCT, err := oldRing.Seal([]byte("vaulted before rotation"), []byte("aad"))
	if err != nil {
		t.Fatal(err)
	}

	rotated, err := Parse(testSpec("new", 2) + "," + testSpec("old", 1))
	if err != nil {
		t.Fatal(err)
	}
	if rotated.ActiveID() != "new" {
		t.Fatalf("ActiveID() = %q, want %q", rotated.ActiveID(), "new")
	}
	got, err := rotated.Open(oldID, oldCT, []byte("aad"))
	if err != nil || string(got) != "vaulted before rotation" {
		t.Errorf("Open(old) = %q, %v, want %q, nil", got, err, "vaulted before rotation")
	}

	newID, newCT, err := rotated.Seal([]byte("vaulted after rotation"), []byte("aad"))
	if err != nil {
		t.Fatal(err)
	}
	if newID != "new" {
		t.Errorf("Seal key id = %q, want %q", newID, "new")
	}
	if _, err := oldRing.Open(newID, newCT, []byte("aad")); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("old keyring Open(new) error = %v, want ErrUnknownKey", err)
	}
	if _, err := rotated.Open("old", newCT, []byte("aad")); !errors.Is(err, ErrDecrypt) {
		t.Errorf("Open under the wrong key id error = %v, want ErrDecrypt", err)
	}
}

func TestOpenErrors(t *testing.T) {
	k, err := Parse(testSpec("k1", 1) + "," + testSpec("k2", 2))
	if err != nil {
		t.Fatal(err)
	}
	aad := []byte("merchant:10086")
	id, ct, err := k.Seal([]byte("signing key"), aad)
	if err != nil {
		t.Fatal(err)
	}
	flipped := func(i int) []byte {
		c := bytes.Clone(ct)
		c[i] ^= 1
		return c
	}
	tests := []struct {
		name    string
		keyID   string
		ct      []byte
		aad     []byte
		wantErr error
	}{
		{"unknown key", "k3", ct, aad, ErrUnknownKey},
		{"empty key id", "", ct, aad, ErrUnknownKey},
		{"wrong key", "k2", ct, aad, ErrDecrypt},
		{"wrong aad", id, ct, []byte("merchant:10087"), ErrDecrypt},
		{"missing aad", id, ct, nil, ErrDecrypt},
		{"nonce tampered", id, flipped(0), aad, ErrDecrypt},
		{"body tampered", id, flipped(NonceSize), aad, ErrDecrypt},
		{"tag tampered", id, flipped(len(ct) - 1), aad, ErrDecrypt},
		{"truncated", id, ct[:len(ct)-1], aad, ErrDecrypt},
		{"nonce only", id, ct[:NonceSize], aad, ErrDecrypt},
		{"empty", id, nil, aad, ErrDecrypt},
		{"extended", id, append(bytes.Clone(ct), 0), aad, ErrDecrypt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := k.Open(tt.keyID, tt.ct, tt.aad)
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("Open error = %v, want %v", err, tt.wantErr)
			}
			if got != nil {
				t.Errorf("Open = %q, want nil", got)
			}
		})
	}
}

func TestStringHidesKeys(t *testing.T) {
	k, err := Parse(testSpec("new", 2) + "," + testSpec("old", 1))
	if err != nil {
		t.Fatal(err)
	}
	want := `keyring.Keyring{active: "new", keys: 2}`
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		t.Run(verb, func(t *testing.T) {
			if got := fmt.Sprintf(verb, k); got != want {
				t.Errorf("Sprintf(%s) = %s, want %s", verb, got, want)
			}
		})
	}
}
