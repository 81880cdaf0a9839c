package payloadcodec_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/proxy"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/paygate/paygate/internal/adapters/payloadcodec"
	"github.com/paygate/paygate/internal/domain/keyring"
	gateway "github.com/paygate/paygate/worker"
)

// shopper is a payload as the workflows carry one: personal data in named
// fields.
type shopper struct {
	FirstName, LastName, Email, Street string
}

var ada = shopper{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com", Street: "12 St James's Square"}

// ring parses a keyring from fresh keys with the given ids, the first active.
func ring(t *testing.T, specs ...string) *keyring.Keyring {
	t.Helper()
	k, err := keyring.Parse(strings.Join(specs, ","))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func spec(t *testing.T, id string) string {
	t.Helper()
	s, err := keyring.GenerateSpec(id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func codec(t *testing.T, k *keyring.Keyring) *payloadcodec.Codec {
	t.Helper()
	c, err := payloadcodec.New(k)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// leaks reports which of the shopper's values appear in b.
func leaks(b []byte) []string {
	var found []string
	for _, v := range []string{ada.FirstName + "\"", ada.LastName, ada.Email, ada.Street} {
		if bytes.Contains(b, []byte(v)) {
			found = append(found, v)
		}
	}
	return found
}

func TestRoundTripThroughTheDataConverter(t *testing.T) {
	c := codec(t, ring(t, spec(t, "k1")))
	dc := payloadcodec.DataConverter(c)
	p, err := dc.ToPayload(ada)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(p.GetMetadata()[converter.MetadataEncoding]); got != payloadcodec.EncodingEncrypted {
		t.Errorf("encoding %q, want %q", got, payloadcodec.EncodingEncrypted)
	}
	if got := string(p.GetMetadata()[payloadcodec.MetadataKeyID]); got != "k1" {
		t.Errorf("key id %q, want k1", got)
	}
	if len(p.GetMetadata()) != 2 {
		t.Errorf("metadata %v: the inner encoding must not show", p.GetMetadata())
	}
	raw, err := protojson.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if l := leaks(append(raw, p.GetData()...)); len(l) > 0 {
		t.Errorf("encrypted payload shows %v", l)
	}
	var back shopper
	if err := dc.FromPayload(p, &back); err != nil {
		t.Fatal(err)
	}
	if back != ada {
		t.Errorf("round trip gave %+v, want %+v", back, ada)
	}
	// The SDK's nil and byte-slice payloads go through too.
	ps, err := dc.ToPayloads(nil, []byte{0, 1, 2}, "text")
	if err != nil {
		t.Fatal(err)
	}
	var (
		n  *shopper
		bs []byte
		s  string
	)
	if err := dc.FromPayloads(ps, &n, &bs, &s); err != nil || n != nil || !bytes.Equal(bs, []byte{0, 1, 2}) || s != "text" {
		t.Errorf("FromPayloads = %v, %v, %v, %q", err, n, bs, s)
	}
}

func TestEveryPayloadIsSealedAnew(t *testing.T) {
	c := codec(t, ring(t, spec(t, "k1")))
	plain, err := converter.GetDefaultDataConverter().ToPayload(ada)
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Encode([]*commonpb.Payload{plain, plain})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(out[0].GetData(), out[1].GetData()) {
		t.Error("the same payload sealed twice gave the same ciphertext: nonces repeat")
	}
	// Already encrypted payloads are not sealed a second time.
	again, err := c.Encode(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again[0].GetData(), out[0].GetData()) {
		t.Error("an encrypted payload was sealed again")
	}
	if plain.GetMetadata()[converter.MetadataEncoding] == nil || !bytes.Contains(plain.GetData(), []byte(ada.Email)) {
		t.Error("Encode changed its input")
	}
}

func TestKeyRotation(t *testing.T) {
	old, next := spec(t, "2025"), spec(t, "2026")
	before := codec(t, ring(t, old))
	sealedOld, err := payloadcodec.DataConverter(before).ToPayload(ada)
	if err != nil {
		t.Fatal(err)
	}

	// After rotation the new key seals and the old one still opens.
	after := codec(t, ring(t, next, old))
	var got shopper
	if err := payloadcodec.DataConverter(after).FromPayload(sealedOld, &got); err != nil || got != ada {
		t.Fatalf("old payload after rotation: %+v, %v", got, err)
	}
	sealedNew, err := payloadcodec.DataConverter(after).ToPayload(ada)
	if err != nil {
		t.Fatal(err)
	}
	if id := string(sealedNew.GetMetadata()[payloadcodec.MetadataKeyID]); id != "2026" {
		t.Errorf("new payload sealed under %q, want 2026", id)
	}

	// A ring that dropped the old key names it rather than pass the
	// payload on undecoded.
	dropped := codec(t, ring(t, next))
	if _, err := dropped.Decode([]*commonpb.Payload{sealedOld}); !errors.Is(err, keyring.ErrUnknownKey) {
		t.Errorf("payload under a dropped key: %v, want ErrUnknownKey", err)
	}
	if _, err := dropped.Decode([]*commonpb.Payload{sealedNew}); err != nil {
		t.Errorf("payload under the active key: %v", err)
	}
}

func TestTamperedPayloadsFail(t *testing.T) {
	k1, k2 := spec(t, "k1"), spec(t, "k2")
	c := codec(t, ring(t, k1, k2))
	p, err := payloadcodec.DataConverter(c).ToPayload(ada)
	if err != nil {
		t.Fatal(err)
	}
	tamper := func(f func(p *commonpb.Payload)) *commonpb.Payload {
		q := &commonpb.Payload{Metadata: map[string][]byte{}, Data: bytes.Clone(p.GetData())}
		for k, v := range p.GetMetadata() {
			q.Metadata[k] = bytes.Clone(v)
		}
		f(q)
		return q
	}
	for _, tc := range []struct {
		name string
		p    *commonpb.Payload
		want error
	}{
		{"bit flipped", tamper(func(q *commonpb.Payload) { q.Data[len(q.Data)/2] ^= 1 }), keyring.ErrDecrypt},
		{"truncated", tamper(func(q *commonpb.Payload) { q.Data = q.Data[:len(q.Data)-1] }), keyring.ErrDecrypt},
		{"too short", tamper(func(q *commonpb.Payload) { q.Data = q.Data[:5] }), keyring.ErrDecrypt},
		{"other key named", tamper(func(q *commonpb.Payload) { q.Metadata[payloadcodec.MetadataKeyID] = []byte("k2") }), keyring.ErrDecrypt},
		{"unknown key named", tamper(func(q *commonpb.Payload) { q.Metadata[payloadcodec.MetadataKeyID] = []byte("k9") }), keyring.ErrUnknownKey},
		{"no key id", tamper(func(q *commonpb.Payload) { delete(q.Metadata, payloadcodec.MetadataKeyID) }), keyring.ErrUnknownKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := c.Decode([]*commonpb.Payload{tc.p}); !errors.Is(err, tc.want) {
				t.Errorf("Decode = %v, want %v", err, tc.want)
			}
			var got shopper
			if err := payloadcodec.DataConverter(c).FromPayload(tc.p, &got); err == nil {
				t.Errorf("the data converter read a tampered payload as %+v", got)
			}
		})
	}
	// A vault ciphertext under the same key is not a payload: the
	// additional data differs.
	_, sealed, err := ring(t, k1).Seal([]byte("4242424242424242"), []byte("tok_1"))
	if err != nil {
		t.Fatal(err)
	}
	forged := &commonpb.Payload{Metadata: map[string][]byte{
		converter.MetadataEncoding: []byte(payloadcodec.EncodingEncrypted), payloadcodec.MetadataKeyID: []byte("k1"),
	}, Data: sealed}
	if _, err := c.Decode([]*commonpb.Payload{forged}); !errors.Is(err, keyring.ErrDecrypt) {
		t.Errorf("vault ciphertext as a payload: %v, want ErrDecrypt", err)
	}
}

func TestUnencryptedPayloadsPassThrough(t *testing.T) {
	c := codec(t, ring(t, spec(t, "k1")))
	plain, err := converter.GetDefaultDataConverter().ToPayloads(ada, nil, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Decode(plain.GetPayloads())
	if err != nil {
		t.Fatal(err)
	}
	for i := range out {
		if out[i] != plain.GetPayloads()[i] {
			t.Errorf("payload %d changed", i)
		}
	}
	var got shopper
	if err := payloadcodec.DataConverter(c).FromPayload(plain.GetPayloads()[0], &got); err != nil || got != ada {
		t.Errorf("plain payload through the codec: %+v, %v", got, err)
	}
	if _, err := c.Open(plain.GetPayloads()[0]); !errors.Is(err, payloadcodec.ErrNotEncrypted) {
		t.Errorf("Open of a plain payload: %v", err)
	}
	if _, err := payloadcodec.New(nil); err == nil {
		t.Error("New(nil) made a codec")
	}
}

func TestFailureMessagesAreEncrypted(t *testing.T) {
	c := codec(t, ring(t, spec(t, "k1")))
	fc := payloadcodec.FailureConverter(payloadcodec.DataConverter(c))
	err := temporal.NewNonRetryableApplicationError("shopper "+ada.Email+" refused", "Refused", nil, ada)
	f := fc.ErrorToFailure(err)
	raw, merr := protojson.Marshal(f)
	if merr != nil {
		t.Fatal(merr)
	}
	if l := leaks(raw); len(l) > 0 {
		t.Errorf("failure shows %v: %s", l, raw)
	}
	if !payloadcodec.Encrypted(f.GetEncodedAttributes()) {
		t.Errorf("encoded attributes not encrypted: %v", f.GetEncodedAttributes())
	}
	back := fc.FailureToError(f)
	var appErr *temporal.ApplicationError
	if !errors.As(back, &appErr) || appErr.Type() != "Refused" || !strings.Contains(appErr.Error(), ada.Email) {
		t.Fatalf("failure read back as %v", back)
	}
	var details shopper
	if err := appErr.Details(&details); err != nil || details != ada {
		t.Errorf("details %+v, %v", details, err)
	}
}

// TestRecordedHistoriesReplayWithTheCodec replays the plain histories kept
// in workflows/testdata through a replayer that decodes with the codec (as
// the worker does since payloads are encrypted), and the same histories
// encrypted: a running workflow started before encryption was turned on
// goes on, and so does one whose history is encrypted. Without the codec
// the encrypted history cannot be read, which shows it really is.
func TestRecordedHistoriesReplayWithTheCodec(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "workflows", "testdata", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories: %v", err)
	}
	c := codec(t, ring(t, spec(t, "k1")))
	dc := payloadcodec.DataConverter(c)
	replay := func(h *historypb.History, withCodec bool) error {
		opts := worker.WorkflowReplayerOptions{}
		if withCodec {
			opts.DataConverter, opts.FailureConverter = dc, payloadcodec.FailureConverter(dc)
		}
		r, err := worker.NewWorkflowReplayerWithOptions(opts)
		if err != nil {
			t.Fatal(err)
		}
		gateway.RegisterWorkflows(r)
		return r.ReplayWorkflowHistory(nil, h)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			h := readHistory(t, f)
			if err := replay(h, true); err != nil {
				t.Errorf("plain history with the codec: %v", err)
			}
			enc := readHistory(t, f)
			if err := proxy.VisitPayloads(context.Background(), enc, proxy.VisitPayloadsOptions{
				Visitor: func(_ *proxy.VisitPayloadsContext, ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
					return c.Encode(ps)
				},
				SkipSearchAttributes: true,
			}); err != nil {
				t.Fatal(err)
			}
			// Search attributes stay plain: the server indexes them.
			plain := 0
			if err := proxy.VisitPayloads(context.Background(), enc, proxy.VisitPayloadsOptions{
				Visitor: func(_ *proxy.VisitPayloadsContext, ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
					for _, p := range ps {
						if !payloadcodec.Encrypted(p) {
							plain++
						}
					}
					return ps, nil
				},
				SkipSearchAttributes: true,
			}); err != nil {
				t.Fatal(err)
			}
			if plain > 0 {
				t.Errorf("the encrypted history still holds %d plain payloads", plain)
			}
			if err := replay(enc, true); err != nil {
				t.Errorf("encrypted history with the codec: %v", err)
			}
			if err := replay(enc, false); err == nil {
				t.Error("encrypted history replayed without the codec")
			}
		})
	}
}

func readHistory(t *testing.T, name string) *historypb.History {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return h
}
