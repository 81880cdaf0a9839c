package app

import (
	"fmt"
	"net/url"
	"strings"

	"go.temporal.io/sdk/converter"

	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/internal/adapters/payloadcodec"
	"github.com/paygate/paygate/internal/domain/keyring"
)

// CodecConfig configures the Temporal codec endpoint the UI decodes
// payloads with (api.CodecEndpoint); the payloads themselves are always
// encrypted, under PAYGATE_KEYRING.
type CodecConfig struct {
	// Token authenticates tools such as the Temporal CLI, sent as
	// "Authorization: Bearer <token>" (PAYGATE_CODEC_TOKEN); empty: no
	// tool may call. It is limited to characters a header carries as they
	// are.
	Token string
	// CORSOrigins are the browser origins that may call it
	// (PAYGATE_CODEC_CORS_ORIGIN, comma-separated): the Temporal UI's. A
	// browser call is an ops user's, signed in to the console; none: no
	// browser may call.
	CORSOrigins []string
}

// minCodecToken is the least length of PAYGATE_CODEC_TOKEN: whoever has it
// can decrypt every history.
const minCodecToken = 32

// codecFromEnv reads the codec endpoint's variables into c, reporting what
// is malformed through fail.
func codecFromEnv(c *Config, getenv func(string) string, fail func(string, error)) {
	c.Edge.Codec.Token = strings.TrimSpace(getenv("PAYGATE_CODEC_TOKEN"))
	if t := c.Edge.Codec.Token; t != "" && strings.IndexFunc(t, func(r rune) bool { return !unreserved(r) }) >= 0 {
		fail("PAYGATE_CODEC_TOKEN", fmt.Errorf("%w: only letters, digits and - . _ ~", ErrMalformed))
	}
	origins, err := parseOrigins(getenv("PAYGATE_CODEC_CORS_ORIGIN"))
	if err != nil {
		fail("PAYGATE_CODEC_CORS_ORIGIN", err)
	}
	c.Edge.Codec.CORSOrigins = origins
}

// unreserved reports whether r is one of RFC 3986's unreserved characters.
func unreserved(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("-._~", r)
}

// parseOrigins reads a comma-separated list of browser origins
// (scheme://host[:port]) and returns them as browsers send them in the
// Origin header: lower case, without a trailing slash.
func parseOrigins(v string) ([]string, error) {
	var out []string
	for _, raw := range strings.Split(v, ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			strings.TrimSuffix(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("%w: %q is not an origin such as http://127.0.0.1:8233", ErrMalformed, raw)
		}
		out = append(out, strings.ToLower(u.Scheme+"://"+u.Host))
	}
	return out, nil
}

// checkCodecToken checks PAYGATE_CODEC_TOKEN when it is set.
func checkCodecToken(token string) error {
	if token == "" {
		return nil
	}
	return checkPassword(token, minCodecToken)
}

// TemporalConverters returns the data converter and failure converter of
// every Temporal client the gateway makes (and so of its worker): payloads
// and failure messages encrypted under keys, with plain payloads of older
// histories still read.
func TemporalConverters(keys *keyring.Keyring) (converter.DataConverter, converter.FailureConverter, error) {
	c, err := payloadcodec.New(keys)
	if err != nil {
		return nil, nil, err
	}
	dc := payloadcodec.DataConverter(c)
	return dc, payloadcodec.FailureConverter(dc), nil
}

// codecEndpoint is the API's codec endpoint, or nil when it is off (no
// tool token and no browser origin). people finds the ops user of a
// browser's call: the console.
func (g *Gateway) codecEndpoint(people api.CodecPeople) *api.CodecEndpoint {
	if g.Config.Edge.Codec.Token == "" && len(g.Config.Edge.Codec.CORSOrigins) == 0 {
		return nil
	}
	c, err := payloadcodec.New(g.Keys)
	if err != nil {
		// Open parsed the keyring, so only a hand-made Gateway gets here.
		g.Logger.Error("codec endpoint off", "error", err)
		return nil
	}
	return &api.CodecEndpoint{Codec: c, Token: g.Config.Edge.Codec.Token, AllowOrigins: g.Config.Edge.Codec.CORSOrigins, People: people}
}
