package devenv

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
)

// The Temporal Web UI decodes workflow payloads through the gateway's
// codec endpoint (api.CodecEndpoint), which takes a browser's call only
// from an ops user signed in to the console: the UI must send the
// console's cookie with it ("include credentials"). The dev server's own
// UI has no setting for that, so `paygate dev` and the tests run the dev
// server headless beside the UI server, configured here, as Temporal on
// Postgres does. Nothing secret is in the UI's configuration: its codec
// URL is served to anyone who loads the UI's settings.

// UICodecArgs are the dev server flags that point its own Web UI at a
// codec endpoint; none for an empty endpoint. That UI cannot send
// credentials, so it shows payloads decoded only to a person who turns on
// "include credentials" in its codec settings; StartTemporal runs the UI
// server instead when TemporalOptions.UIServer is set.
func UICodecArgs(endpoint string) []string {
	if endpoint == "" {
		return nil
	}
	return []string{"--ui-codec-endpoint", endpoint}
}

// EnsureTemporalUIServer returns the path of the Temporal Web UI server at
// TemporalUIServerVersion in binDir, building it from Go modules on first
// use (a minute or two).
func EnsureTemporalUIServer(ctx context.Context, binDir string, logger *slog.Logger) (string, error) {
	dir, err := filepath.Abs(binDir)
	if err != nil {
		return "", fmt.Errorf("resolve bin dir: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create bin dir: %w", err)
	}
	return installVersioned(ctx, dir, temporalUIPackage, TemporalUIServerVersion, "temporal-ui-server", orDiscard(logger))
}

// uiServerConfig is what the UI server's configuration says.
type uiServerConfig struct {
	frontend  string // host:port of the Temporal frontend
	host      string // the UI's address
	port      int    // the UI's port
	namespace string
	codec     string // the codec endpoint; "" for none
}

// writeUIServerConfig writes the UI server's configuration under root and
// returns root, which the server is started with (--root root --config
// config --env paygate).
func writeUIServerConfig(root string, c uiServerConfig) (string, error) {
	dir := filepath.Join(root, "config")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("temporal ui config dir: %w", err)
	}
	base := fmt.Sprintf("temporalGrpcAddress: %q\nhost: %q\nport: %d\n", c.frontend, c.host, c.port)
	env := fmt.Sprintf(`publicPath:
enableUi: true
defaultNamespace: %q
refreshInterval: 1m
cors:
  cookieInsecure: true
  allowOrigins: []
auth:
  enabled: false
codec:
  endpoint: %q
  passAccessToken: false
  includeCredentials: %t
`, c.namespace, c.codec, c.codec != "")
	if err := os.WriteFile(filepath.Join(dir, "base.yaml"), []byte(base), 0o644); err != nil {
		return "", fmt.Errorf("temporal ui config: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "paygate.yaml"), []byte(env), 0o644); err != nil {
		return "", fmt.Errorf("temporal ui config: %w", err)
	}
	return root, nil
}

// frontendAddr is host:port.
func frontendAddr(ip string, port int) string { return net.JoinHostPort(ip, strconv.Itoa(port)) }
