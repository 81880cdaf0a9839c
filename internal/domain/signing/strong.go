package signing

// The strong scheme (opt-in per account, docs/decisions.md "Strong
// signatures"): an HMAC-SHA256 with the account's sign key over a canonical
// string that names the operation (method and path), a timestamp, a nonce
// and every field of the body, sent in the Paygate-Signature header:
//
//	Paygate-Signature: t=<unix seconds>,n=<nonce>,v1=<64 hex digits>
//
// The canonical string is a prefix-free encoding, so two different requests
// never share one:
//
//	"PGS1\n" lp(METHOD) lp(path) lp(t) lp(nonce) value(body)
//
// where lp(x) is the byte length of x in decimal, ":", then x, and the body
// is encoded as one value of the JSON data model:
//
//	object  "o" <count> ":" then, keys in byte order, lp(key) value
//	array   "a" <count> ":" then the values in order
//	string  "s" lp(the decoded text)
//	number  "n" lp(the number as written)
//	true "t", false "f", null "z"
//
// A JSON body (one that starts with '{', docs/design.md §3) is that object; a form
// body is an object of strings. Keys that are equal when case is ignored
// are refused at every level: the API decodes JSON case-insensitively, so
// such keys would let two bodies with one canonical string mean different
// things.

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// StrongHeader is the request header that carries a strong signature.
const StrongHeader = "Paygate-Signature"

// StrongTolerance is how far a strong signature's timestamp may be from the
// gateway's clock, either way.
const StrongTolerance = 5 * time.Minute

// Nonce lengths: at least 16 characters (so a random one is not guessed or
// met again by chance), at most 64.
const (
	MinNonceLen = 16
	MaxNonceLen = 64
)

// Errors of the strong scheme. Callers answer all of them with I0013.
var (
	// ErrStrongHeader is a missing or malformed Paygate-Signature header.
	ErrStrongHeader = errors.New("malformed Paygate-Signature header")
	// ErrStrongBody is a body the canonical string cannot be made of: empty,
	// neither a JSON object nor a form, or with keys that differ only in case.
	ErrStrongBody = errors.New("body cannot be canonicalised")
	// ErrStrongStale is a timestamp more than StrongTolerance from now.
	ErrStrongStale = errors.New("signature timestamp outside the accepted window")
	// ErrStrongMismatch is a signature that is not the HMAC of the request.
	ErrStrongMismatch = errors.New("strong signature does not match the request")
)

// StrongSignature is the content of a Paygate-Signature header.
type StrongSignature struct {
	Timestamp int64  // t: unix seconds
	Nonce     string // n: unique per request and account
	V1        string // v1: hex HMAC-SHA256 of the canonical string
}

// String renders the header value: t=<unix>,n=<nonce>,v1=<hex>.
func (s StrongSignature) String() string {
	return "t=" + strconv.FormatInt(s.Timestamp, 10) + ",n=" + s.Nonce + ",v1=" + s.V1
}

// ParseStrongHeader reads a Paygate-Signature header value. Parts are
// comma-separated key=value pairs in any order, spaces around them ignored;
// t, n and v1 are required once each and unknown keys are ignored (room for
// a later v2).
func ParseStrongHeader(h string) (StrongSignature, error) {
	var s StrongSignature
	seen := map[string]bool{}
	for part := range strings.SplitSeq(h, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return StrongSignature{}, fmt.Errorf("%w: part %q is not key=value", ErrStrongHeader, part)
		}
		switch k {
		case "t", "n", "v1":
			if seen[k] {
				return StrongSignature{}, fmt.Errorf("%w: %s given twice", ErrStrongHeader, k)
			}
			seen[k] = true
		default:
			continue
		}
		switch k {
		case "t":
			if v == "" || len(v) > 12 || strings.Trim(v, "0123456789") != "" {
				return StrongSignature{}, fmt.Errorf("%w: t must be unix seconds", ErrStrongHeader)
			}
			s.Timestamp, _ = strconv.ParseInt(v, 10, 64)
		case "n":
			if !ValidNonce(v) {
				return StrongSignature{}, fmt.Errorf("%w: n must be %d to %d characters of A-Z a-z 0-9 _ -", ErrStrongHeader, MinNonceLen, MaxNonceLen)
			}
			s.Nonce = v
		case "v1":
			if len(v) != hex.EncodedLen(sha256.Size) || strings.Trim(v, "0123456789abcdefABCDEF") != "" {
				return StrongSignature{}, fmt.Errorf("%w: v1 must be 64 hex digits", ErrStrongHeader)
			}
			s.V1 = v
		}
	}
	if !seen["t"] || !seen["n"] || !seen["v1"] {
		return StrongSignature{}, fmt.Errorf("%w: t, n and v1 are required", ErrStrongHeader)
	}
	return s, nil
}

// ValidNonce reports whether n is a well-formed nonce: MinNonceLen to
// MaxNonceLen characters of A-Z, a-z, 0-9, '_' and '-'.
func ValidNonce(n string) bool {
	if len(n) < MinNonceLen || len(n) > MaxNonceLen {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// CanonicalString returns the string a strong signature covers: the
// operation (method and path), the timestamp, the nonce and every field of
// body (see the package comment for the encoding).
func CanonicalString(method, path string, timestamp int64, nonce string, body []byte) (string, error) {
	var b strings.Builder
	b.WriteString("PGS1\n")
	writeLP(&b, strings.ToUpper(method))
	writeLP(&b, path)
	writeLP(&b, strconv.FormatInt(timestamp, 10))
	writeLP(&b, nonce)
	if err := canonicalBody(&b, body); err != nil {
		return "", err
	}
	return b.String(), nil
}

// StrongMAC returns the lower-case hex HMAC-SHA256 of canonical under the
// trimmed key.
func StrongMAC(key, canonical string) string {
	m := hmac.New(sha256.New, []byte(strings.TrimSpace(key)))
	m.Write([]byte(canonical))
	return hex.EncodeToString(m.Sum(nil))
}

// SignStrong returns the Paygate-Signature of a request.
func SignStrong(key, method, path string, timestamp int64, nonce string, body []byte) (StrongSignature, error) {
	canonical, err := CanonicalString(method, path, timestamp, nonce, body)
	if err != nil {
		return StrongSignature{}, err
	}
	return StrongSignature{Timestamp: timestamp, Nonce: nonce, V1: StrongMAC(key, canonical)}, nil
}

// VerifyStrong checks sig against the request under key: the timestamp is
// within StrongTolerance of now and v1 is the HMAC of the canonical string,
// compared in constant time. Whether the nonce was seen before is the
// caller's to check (it needs a store), after this succeeds.
func VerifyStrong(key, method, path string, body []byte, sig StrongSignature, now time.Time) error {
	if d := now.Unix() - sig.Timestamp; d > int64(StrongTolerance/time.Second) || d < -int64(StrongTolerance/time.Second) {
		return ErrStrongStale
	}
	if !ValidNonce(sig.Nonce) {
		return ErrStrongHeader
	}
	got, err := hex.DecodeString(sig.V1)
	if err != nil || len(got) != sha256.Size {
		return ErrStrongHeader
	}
	canonical, err := CanonicalString(method, path, sig.Timestamp, sig.Nonce, body)
	if err != nil {
		return err
	}
	m := hmac.New(sha256.New, []byte(strings.TrimSpace(key)))
	m.Write([]byte(canonical))
	if !hmac.Equal(got, m.Sum(nil)) {
		return ErrStrongMismatch
	}
	return nil
}

// writeLP writes s length-prefixed: its byte length, ':', s.
func writeLP(b *strings.Builder, s string) {
	b.WriteString(strconv.Itoa(len(s)))
	b.WriteByte(':')
	b.WriteString(s)
}

// canonicalBody encodes a JSON object or form body. Which one it is, is
// decided as the API decides it: a body that starts with '{' after white
// space is JSON, anything else a form.
func canonicalBody(b *strings.Builder, body []byte) error {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return fmt.Errorf("%w: empty body", ErrStrongBody)
	}
	if trimmed[0] == '{' {
		return canonicalJSON(b, trimmed)
	}
	values, err := url.ParseQuery(string(trimmed))
	if err != nil {
		return fmt.Errorf("%w: neither JSON nor a form", ErrStrongBody)
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range values {
			if !yield(k) {
				return
			}
		}
	})
	if err := checkFolded(keys); err != nil {
		return err
	}
	b.WriteString("o" + strconv.Itoa(len(keys)) + ":")
	for _, k := range keys {
		if len(values[k]) != 1 {
			return fmt.Errorf("%w: form field %q given %d times", ErrStrongBody, k, len(values[k]))
		}
		writeLP(b, k)
		b.WriteByte('s')
		writeLP(b, values[k][0])
	}
	return nil
}

// canonicalJSON encodes a JSON document that must be one object.
func canonicalJSON(b *strings.Builder, body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("%w: invalid JSON", ErrStrongBody)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("%w: not a JSON object", ErrStrongBody)
	}
	if err := canonicalObject(b, dec, 1); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: data after the JSON object", ErrStrongBody)
	}
	return nil
}

// maxCanonicalDepth bounds how deep objects and arrays may nest in a
// strongly signed body (the API itself refuses more than a few levels).
const maxCanonicalDepth = 32

// canonicalValue encodes the value that starts with tok, at depth levels
// inside the body's object.
func canonicalValue(b *strings.Builder, dec *json.Decoder, tok json.Token, depth int) error {
	switch v := tok.(type) {
	case json.Delim:
		if depth >= maxCanonicalDepth {
			return fmt.Errorf("%w: nested deeper than %d", ErrStrongBody, maxCanonicalDepth)
		}
		switch v {
		case '{':
			return canonicalObject(b, dec, depth+1)
		case '[':
			return canonicalArray(b, dec, depth+1)
		}
		return fmt.Errorf("%w: unexpected %q", ErrStrongBody, v)
	case string:
		b.WriteByte('s')
		writeLP(b, v)
	case json.Number:
		b.WriteByte('n')
		writeLP(b, v.String())
	case bool:
		if v {
			b.WriteByte('t')
		} else {
			b.WriteByte('f')
		}
	case nil:
		b.WriteByte('z')
	default:
		return fmt.Errorf("%w: unexpected token", ErrStrongBody)
	}
	return nil
}

// canonicalObject encodes an object whose '{' was read.
func canonicalObject(b *strings.Builder, dec *json.Decoder, depth int) error {
	type member struct {
		key   string
		value string
	}
	var members []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("%w: invalid JSON", ErrStrongBody)
		}
		key, ok := tok.(string)
		if !ok {
			return fmt.Errorf("%w: invalid JSON", ErrStrongBody)
		}
		tok, err = dec.Token()
		if err != nil {
			return fmt.Errorf("%w: invalid JSON", ErrStrongBody)
		}
		var v strings.Builder
		if err := canonicalValue(&v, dec, tok, depth); err != nil {
			return err
		}
		members = append(members, member{key, v.String()})
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return fmt.Errorf("%w: invalid JSON", ErrStrongBody)
	}
	slices.SortFunc(members, func(x, y member) int { return strings.Compare(x.key, y.key) })
	keys := make([]string, len(members))
	for i, m := range members {
		keys[i] = m.key
	}
	if err := checkFolded(keys); err != nil {
		return err
	}
	b.WriteString("o" + strconv.Itoa(len(members)) + ":")
	for _, m := range members {
		writeLP(b, m.key)
		b.WriteString(m.value)
	}
	return nil
}

// canonicalArray encodes an array whose '[' was read.
func canonicalArray(b *strings.Builder, dec *json.Decoder, depth int) error {
	var items strings.Builder
	n := 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("%w: invalid JSON", ErrStrongBody)
		}
		if err := canonicalValue(&items, dec, tok, depth); err != nil {
			return err
		}
		n++
	}
	if _, err := dec.Token(); err != nil { // the closing ']'
		return fmt.Errorf("%w: invalid JSON", ErrStrongBody)
	}
	b.WriteString("a" + strconv.Itoa(n) + ":")
	b.WriteString(items.String())
	return nil
}

// checkFolded refuses keys that are equal when case is ignored (as
// strings.EqualFold, which is how encoding/json matches field names),
// exact duplicates included.
func checkFolded(keys []string) error {
	seen := make(map[string]string, len(keys))
	for _, k := range keys {
		f := foldKey(k)
		if prev, dup := seen[f]; dup {
			return fmt.Errorf("%w: keys %q and %q differ only in case", ErrStrongBody, prev, k)
		}
		seen[f] = k
	}
	return nil
}

// foldKey maps every rune to the smallest rune of its case-folding orbit,
// so that foldKey(a) == foldKey(b) exactly when strings.EqualFold(a, b).
func foldKey(s string) string {
	var b strings.Builder
	for _, r := range s {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		b.WriteRune(m)
	}
	return b.String()
}
