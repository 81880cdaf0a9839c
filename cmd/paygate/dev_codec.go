package main

import (
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"strings"

	"github.com/paygate/paygate/app"
)

// ensureDevTokens gives the local secrets a codec endpoint token and a
// provider secret, made once and kept in path with the keys:
// .data/secrets.json from before encrypted histories (or before the
// gateway ran as separate processes, which refuse a default provider
// secret) has none, and a token that changed on every run would break a UI
// tab left open.
func ensureDevTokens(path string, s *devSecrets) error {
	if s.CodecToken != "" && s.ProviderSecret != "" {
		return nil
	}
	if s.CodecToken == "" {
		s.CodecToken = randomHex(32)
	}
	if s.ProviderSecret == "" {
		s.ProviderSecret = randomHex(24)
	}
	return writeJSON(path, s, 0o600)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error.
	return hex.EncodeToString(b)
}

// devCodecEndpoint is the codec endpoint the local Temporal UI is given:
// the API's, with nothing secret in it. The UI sends the console's cookie
// with its calls, and an ops user signed in to the console may decode
// (api.CodecEndpoint).
func devCodecEndpoint(publicURL string) string {
	return strings.TrimSuffix(publicURL, "/") + "/codec"
}

// devCodecConfig lets the local UI's origin call the codec endpoint. The
// UI is printed as 127.0.0.1, but a browser may be pointed at localhost,
// a different origin, so both are allowed.
func devCodecConfig(token, uiURL string) app.CodecConfig {
	origins := []string{strings.TrimSuffix(uiURL, "/")}
	if u, err := url.Parse(uiURL); err == nil && u.Hostname() == "127.0.0.1" {
		origins = append(origins, u.Scheme+"://localhost:"+u.Port())
	}
	return app.CodecConfig{Token: token, CORSOrigins: origins}
}
