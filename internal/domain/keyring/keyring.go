// Package keyring encrypts small secrets, such as vaulted card data and
// merchants' signing keys, with AES-256-GCM under named keys.
//
// Every ciphertext is tagged with the id of the key that sealed it, so keys
// can be rotated: new data is sealed with the active key while data sealed
// under older keys still opens as long as those keys stay in the ring.
package keyring

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the required key length in bytes (AES-256).
const KeySize = 32

// NonceSize is the length of the random nonce that prefixes each ciphertext.
const NonceSize = 12

var (
	// ErrUnknownKey is returned when a key id is not in the keyring.
	ErrUnknownKey = errors.New("keyring: unknown key")
	// ErrDecrypt is returned when a ciphertext cannot be authenticated: it
	// was tampered with, truncated, sealed under another key, or opened with
	// different additional data.
	ErrDecrypt = errors.New("keyring: decryption failed")
)

// Keyring holds named AES-256-GCM keys, one of which is active for sealing.
// It is safe for concurrent use. Its String method never reveals key
// material.
type Keyring struct {
	active string
	aeads  map[string]cipher.AEAD
}

// New returns a Keyring of keys with activeID as the active key. Every key
// must be exactly 32 bytes, every id non-empty and free of ':' and ',', and
// activeID must be one of the ids. The keys are copied.
func New(activeID string, keys map[string][]byte) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, errors.New("keyring: no keys")
	}
	k := &Keyring{active: activeID, aeads: make(map[string]cipher.AEAD, len(keys))}
	for id, key := range keys {
		if err := checkID(id); err != nil {
			return nil, err
		}
		if len(key) != KeySize {
			return nil, fmt.Errorf("keyring: key %q is %d bytes, want %d", id, len(key), KeySize)
		}
		block, err := aes.NewCipher(key) // Expands the key; key is not retained.
		if err != nil {
			return nil, fmt.Errorf("keyring: key %q: %v", id, err)
		}
		aead, err := cipher.NewGCMWithRandomNonce(block)
		if err != nil {
			return nil, fmt.Errorf("keyring: key %q: %v", id, err)
		}
		k.aeads[id] = aead
	}
	if _, ok := k.aeads[activeID]; !ok {
		return nil, fmt.Errorf("%w: active key %q", ErrUnknownKey, activeID)
	}
	return k, nil
}

// checkID reports whether id is usable as a key id.
func checkID(id string) error {
	if id == "" {
		return errors.New("keyring: empty key id")
	}
	if strings.ContainsAny(id, ":,") {
		return fmt.Errorf("keyring: key id %q contains ':' or ','", id)
	}
	return nil
}

// Parse returns a Keyring from a spec of comma-separated "id:key" entries,
// where key is 32 bytes in standard base64. The first entry is the active
// key. Whitespace around entries is ignored and ids must be unique.
func Parse(spec string) (*Keyring, error) {
	keys := make(map[string][]byte)
	active := ""
	for i, entry := range strings.Split(spec, ",") {
		entry = strings.TrimSpace(entry)
		id, b64, ok := strings.Cut(entry, ":")
		if !ok {
			return nil, fmt.Errorf("keyring: entry %d is not of the form id:base64key", i+1)
		}
		if err := checkID(id); err != nil {
			return nil, err
		}
		if _, dup := keys[id]; dup {
			return nil, fmt.Errorf("keyring: duplicate key id %q", id)
		}
		key, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			// The decoding error could echo key material; do not include it.
			return nil, fmt.Errorf("keyring: key %q is not valid base64", id)
		}
		keys[id] = key
		if i == 0 {
			active = id
		}
	}
	return New(active, keys)
}

// GenerateSpec returns a new random 32-byte key for id as an "id:base64"
// entry suitable for Parse.
func GenerateSpec(id string) (string, error) {
	if err := checkID(id); err != nil {
		return "", err
	}
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("keyring: generating key: %v", err)
	}
	return id + ":" + base64.StdEncoding.EncodeToString(key), nil
}

// ActiveID returns the id of the key used by Seal.
func (k *Keyring) ActiveID() string { return k.active }

// String describes the keyring without revealing key material.
func (k *Keyring) String() string {
	return fmt.Sprintf("keyring.Keyring{active: %q, keys: %d}", k.active, len(k.aeads))
}

// GoString is like String, so that %#v does not reveal key material either.
func (k *Keyring) GoString() string { return k.String() }

// Seal encrypts and authenticates plaintext, and authenticates aad, under the
// active key. It returns the key id to store alongside the ciphertext, which
// is a random 12-byte nonce followed by the GCM ciphertext and tag. Because
// nonces are random, a key should seal no more than 2^32 messages before it
// is rotated.
func (k *Keyring) Seal(plaintext, aad []byte) (keyID string, ciphertext []byte, err error) {
	return k.active, k.aeads[k.active].Seal(nil, nil, plaintext, aad), nil
}

// Open decrypts a ciphertext produced by Seal under the key keyID with the
// same aad. It returns ErrUnknownKey if keyID is not in the keyring and
// ErrDecrypt if the ciphertext or aad do not authenticate.
func (k *Keyring) Open(keyID string, ciphertext, aad []byte) ([]byte, error) {
	aead, ok := k.aeads[keyID]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownKey, keyID)
	}
	if len(ciphertext) < aead.Overhead() { // Nonce and tag.
		return nil, ErrDecrypt
	}
	plaintext, err := aead.Open(nil, nil, ciphertext, aad)
	if err != nil {
		return nil, ErrDecrypt
	}
	return plaintext, nil
}
