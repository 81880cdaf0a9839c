package devenv

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDevServerWiresTheUIToTheCodec: with a UI server, the dev server runs
// headless and gets no codec flag (the UI server has the endpoint, and
// sends the console's cookie to it); without one, its own UI is pointed at
// the endpoint after the tuning flags.
func TestDevServerWiresTheUIToTheCodec(t *testing.T) {
	const endpoint = "http://127.0.0.1:8080/codec"
	tests := []struct {
		name     string
		uiServer string
		headless bool
		tail     []string
	}{
		{"its own UI", "", false, append(slices.Clone(TemporalTuning), "--ui-codec-endpoint", endpoint)},
		{"the UI server beside it", "/bin/temporal-ui-server", true, TemporalTuning},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := TemporalOptions{Binary: "/bin/temporal", DBFile: "t.db", CodecEndpoint: endpoint, UIServer: tt.uiServer}.withDefaults()
			got, err := devServerArgs(o, 1, 2)
			if err != nil {
				t.Fatal(err)
			}
			if tail := got[len(got)-len(tt.tail):]; !slices.Equal(tail, tt.tail) || slices.Contains(got, "--headless") != tt.headless ||
				slices.Contains(got, "--ui-port") == tt.headless {
				t.Errorf("args = %q", got)
			}
		})
	}
	if UICodecArgs("") != nil {
		t.Errorf("UICodecArgs(\"\") = %q, want none", UICodecArgs(""))
	}
}

// TestUIServerConfigHoldsNoSecret: the UI server's configuration (served
// to anyone who loads the UI's settings) holds the codec's URL and asks for
// credentials, nothing else.
func TestUIServerConfigHoldsNoSecret(t *testing.T) {
	root, err := writeUIServerConfig(t.TempDir(), uiServerConfig{frontend: "127.0.0.1:7233", host: "127.0.0.1", port: 8233,
		namespace: "default", codec: "http://127.0.0.1:8080/codec"})
	if err != nil {
		t.Fatal(err)
	}
	env, err := os.ReadFile(filepath.Join(root, "config", "paygate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(env), "codec:\n  endpoint: \"http://127.0.0.1:8080/codec\"\n  passAccessToken: false\n  includeCredentials: true\n") {
		t.Errorf("paygate.yaml:\n%s", env)
	}
	none, _ := writeUIServerConfig(t.TempDir(), uiServerConfig{frontend: "127.0.0.1:7233", host: "127.0.0.1", port: 8233, namespace: "default"})
	if env, _ := os.ReadFile(filepath.Join(none, "config", "paygate.yaml")); !strings.Contains(string(env), "includeCredentials: false") {
		t.Errorf("no codec: %s", env)
	}
}
