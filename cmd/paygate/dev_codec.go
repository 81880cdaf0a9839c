package main

import (
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"strings"

	"github.com/paygate/paygate/app"
)

// ensureCodecToken gives the local secrets a codec endpoint token, made
// once and kept in path with the keys: .data/secrets.json from before
// encrypted histories has none, and a token that changed on every run
// would break a UI tab left open.
func ensureCodecToken(path string, s *devSecrets) error {
	if s.CodecToken != "" {
		return nil
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error.
	s.CodecToken = hex.EncodeToString(b)
	return writeJSON(path, s, 0o600)
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
