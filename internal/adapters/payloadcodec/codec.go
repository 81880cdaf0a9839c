// Package payloadcodec encrypts Temporal payloads (workflow and activity
// inputs and results, signals, updates, queries, memos, failure details)
// with AES-256-GCM under the gateway's keyring, so that workflow histories
// hold no shopper name, email, address, document or bank account in the
// clear. The Temporal server and anyone reading its database see only the
// key id and ciphertext; the gateway's client and worker, and the Temporal
// UI through the codec endpoint, see the payloads decoded.
//
// Each encrypted payload carries the id of the key that sealed it in its
// metadata, so keys rotate as the keyring's do: new payloads are sealed
// under the active key, and payloads sealed under an older key still open
// while that key stays in the ring. Payloads written before encryption was
// turned on pass through Decode unchanged, so older histories still replay.
package payloadcodec

import (
	"errors"
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/proto"

	"github.com/paygate/paygate/internal/domain/keyring"
)

// Metadata of an encrypted payload. The encoding names the format so that
// Decode (and the Temporal UI) can tell an encrypted payload from a plain
// one; the key id names the keyring key that sealed it.
const (
	// EncodingEncrypted is the metadata "encoding" of an encrypted payload.
	EncodingEncrypted = "binary/encrypted"
	// MetadataKeyID is the metadata key that holds the sealing key's id.
	MetadataKeyID = "encryption-key-id"
)

// aad is the additional data every payload is sealed with. It ties the
// ciphertext to its use: a card or signing key sealed by the vault under
// the same keyring cannot be passed off as a payload, nor a payload as a
// vault entry.
var aad = []byte("paygate temporal payload v1")

// ErrNotEncrypted is returned by Open for a payload that is not one this
// codec encrypted.
var ErrNotEncrypted = errors.New("payloadcodec: payload is not encrypted")

// Codec is a converter.PayloadCodec that seals every payload under the
// keyring's active key and opens payloads sealed under any key of the ring.
// It is safe for concurrent use.
type Codec struct {
	keys *keyring.Keyring
}

var _ converter.PayloadCodec = (*Codec)(nil)

// New returns a Codec over keys.
func New(keys *keyring.Keyring) (*Codec, error) {
	if keys == nil {
		return nil, errors.New("payloadcodec: no keyring")
	}
	return &Codec{keys: keys}, nil
}

// Encode seals each payload, metadata and data together, so that not even
// the payload's encoding or message type is left in the clear. A payload
// that is already encrypted is kept as it is rather than sealed twice: the
// UI's encode call or a chain of codecs may hand one back.
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if Encrypted(p) {
			out[i] = p
			continue
		}
		plain, err := proto.Marshal(p)
		if err != nil {
			return payloads, fmt.Errorf("payloadcodec: marshal payload: %w", err)
		}
		keyID, sealed, err := c.keys.Seal(plain, aad)
		if err != nil {
			return payloads, fmt.Errorf("payloadcodec: seal payload: %w", err)
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{
				converter.MetadataEncoding: []byte(EncodingEncrypted),
				MetadataKeyID:              []byte(keyID),
			},
			Data: sealed,
		}
	}
	return out, nil
}

// Decode opens each encrypted payload and passes every other one through
// unchanged: histories written before encryption was turned on hold plain
// payloads, and they must still replay and show in the UI. A payload that
// claims to be encrypted but does not open (tampered with, or sealed under
// a key no longer in the ring) is an error, never passed on as it is.
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if !Encrypted(p) {
			out[i] = p
			continue
		}
		plain, err := c.Open(p)
		if err != nil {
			return payloads, err
		}
		out[i] = plain
	}
	return out, nil
}

// Open decrypts one encrypted payload. It returns ErrNotEncrypted for a
// payload Encode did not make, and errors wrapping keyring.ErrUnknownKey or
// keyring.ErrDecrypt for one whose key is gone or that does not
// authenticate.
func (c *Codec) Open(p *commonpb.Payload) (*commonpb.Payload, error) {
	if !Encrypted(p) {
		return nil, ErrNotEncrypted
	}
	keyID := string(p.GetMetadata()[MetadataKeyID])
	if keyID == "" {
		return nil, fmt.Errorf("payloadcodec: encrypted payload without %s: %w", MetadataKeyID, keyring.ErrUnknownKey)
	}
	plain, err := c.keys.Open(keyID, p.GetData(), aad)
	if err != nil {
		return nil, fmt.Errorf("payloadcodec: open payload sealed under key %q: %w", keyID, err)
	}
	decoded := &commonpb.Payload{}
	if err := proto.Unmarshal(plain, decoded); err != nil {
		return nil, fmt.Errorf("payloadcodec: unmarshal opened payload: %w", err)
	}
	return decoded, nil
}

// Encrypted reports whether p is a payload Encode made.
func Encrypted(p *commonpb.Payload) bool {
	return string(p.GetMetadata()[converter.MetadataEncoding]) == EncodingEncrypted
}

// DataConverter returns the SDK's default data converter with c applied
// to every payload it makes and reads: what the gateway's Temporal client,
// and so its worker, use.
func DataConverter(c *Codec) converter.DataConverter {
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), c)
}

// FailureConverter returns a failure converter that moves every failure's
// message and stack trace into its encoded attributes, a payload that dc
// encrypts. Without it an error message that quoted a shopper's data (a
// validation error, a connector's answer) would sit in the history in the
// clear. Failures recorded before keep their plain message and still read.
func FailureConverter(dc converter.DataConverter) converter.FailureConverter {
	return temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{
		DataConverter:          dc,
		EncodeCommonAttributes: true,
	})
}
