package keyring

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// Fuzz targets: go test -run='^$' -fuzz='^FuzzParse$' ./internal/domain/keyring (or
// make fuzz). Plain go test runs the seeds.

var (
	keyA = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xA1}, KeySize))
	keyB = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xB2}, KeySize))
)

// FuzzParse checks the keyring spec: a spec that parses has the first
// entry's id active, seals what it opens, and describes itself without key
// material; neither a keyring nor an error ever shows a key's base64.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"k1:" + keyA, " k1:" + keyA + " , k0:" + keyB, "k1:" + keyA + ",k1:" + keyB, "k1:" + keyA[:40], "k1:" + keyA + "=",
		":" + keyA, "k1" + keyA, "k:1:" + keyA, "", ",", "k1:" + keyA + ",", "k1:" + strings.ReplaceAll(keyA, "o", "!"),
		"k\x00:" + keyA, "\xff:" + keyA, "k1:" + base64.StdEncoding.EncodeToString(make([]byte, 16)),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		k, err := Parse(spec)
		// Errors and descriptions may name ids (quoted), never show keys.
		entries := strings.Split(spec, ",")
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		for _, entry := range entries {
			id, _, _ := strings.Cut(strings.TrimSpace(entry), ":")
			msg = strings.ReplaceAll(msg, strconv.Quote(id), "")
		}
		for _, entry := range entries {
			_, b64, _ := strings.Cut(strings.TrimSpace(entry), ":")
			if len(b64) < 8 {
				continue
			}
			if strings.Contains(msg, b64) {
				t.Fatalf("Parse error %q shows the key %q", err, b64)
			}
			if k != nil && (strings.Contains(strings.ReplaceAll(k.String(), strconv.Quote(k.ActiveID()), ""), b64) || k.GoString() != k.String()) {
				t.Fatalf("keyring %s shows the key %q", k, b64)
			}
		}
		if err != nil {
			return
		}
		first, _, _ := strings.Cut(strings.TrimSpace(strings.Split(spec, ",")[0]), ":")
		if k.ActiveID() != first {
			t.Fatalf("Parse(%q) made %q active, want %q", spec, k.ActiveID(), first)
		}
		id, sealed, err := k.Seal([]byte("4242424242424242"), []byte("aad"))
		if err != nil || id != first {
			t.Fatalf("Seal = %q, %v", id, err)
		}
		if got, err := k.Open(id, sealed, []byte("aad")); err != nil || string(got) != "4242424242424242" {
			t.Fatalf("Open = %q, %v", got, err)
		}
	})
}

// FuzzSealOpen checks sealing: what Seal seals, Open opens to the same bytes
// with the same additional data; any changed bit, cut, other additional data
// or other key is refused with ErrDecrypt, an unknown key id with
// ErrUnknownKey.
func FuzzSealOpen(f *testing.F) {
	f.Add([]byte("4242424242424242|12|2030|123"), []byte("tok_1"), uint16(0))
	f.Add([]byte{}, []byte{}, uint16(11))
	f.Add([]byte("\x00\xff"), []byte("\x00"), uint16(65535))
	f.Add(bytes.Repeat([]byte("x"), 4096), []byte("a"), uint16(300))
	k, err := Parse("k1:" + keyA + ",k0:" + keyB)
	if err != nil {
		f.Fatal(err)
	}
	other, err := Parse("k1:" + keyB)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, plaintext, aad []byte, at uint16) {
		id, sealed, err := k.Seal(plaintext, aad)
		if err != nil || id != "k1" {
			t.Fatalf("Seal = %q, %v", id, err)
		}
		if len(sealed) != len(plaintext)+NonceSize+16 {
			t.Fatalf("sealed %d bytes into %d", len(plaintext), len(sealed))
		}
		if len(plaintext) >= 8 && bytes.Contains(sealed, plaintext) {
			t.Fatal("the sealed bytes hold the plaintext")
		}
		got, err := k.Open(id, sealed, aad)
		if err != nil || !bytes.Equal(got, plaintext) {
			t.Fatalf("Open = %q, %v; want %q", got, err, plaintext)
		}
		changed := bytes.Clone(sealed)
		bit := int(at) % (len(changed) * 8)
		changed[bit/8] ^= 1 << (bit % 8)
		for name, err := range map[string]error{
			"changed bit": open(k, id, changed, aad),
			"cut":         open(k, id, sealed[:len(sealed)-1], aad),
			"other aad":   open(k, id, sealed, append(bytes.Clone(aad), 0)),
			"old key":     open(k, "k0", sealed, aad),
			"other ring":  open(other, "k1", sealed, aad),
		} {
			if !errors.Is(err, ErrDecrypt) {
				t.Fatalf("%s: Open = %v, want ErrDecrypt", name, err)
			}
		}
		if _, err := k.Open("k2", sealed, aad); !errors.Is(err, ErrUnknownKey) {
			t.Fatalf("unknown key: Open = %v, want ErrUnknownKey", err)
		}
	})
}

func open(k *Keyring, id string, sealed, aad []byte) error {
	_, err := k.Open(id, sealed, aad)
	return err
}
