package devenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParsePGURL(t *testing.T) {
	tests := []struct {
		name    string
		url     string
		want    pgEndpoint
		wantErr bool
	}{
		{name: "trust", url: "postgres://postgres@127.0.0.1:5432/paygate?sslmode=disable", want: pgEndpoint{host: "127.0.0.1", port: "5432", user: "postgres"}},
		{name: "password and default port", url: "postgres://pg:s3cret@db.internal/paygate", want: pgEndpoint{host: "db.internal", port: "5432", user: "pg", password: "s3cret"}},
		{name: "not a URL", url: "host=127.0.0.1 user=postgres", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parsePGURL(tt.url)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %t", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestPostgresTemporalConfig checks the files the server and the UI read:
// the stores on the given databases, every service on its own port, the
// tuning, the UI on the frontend with the codec endpoint.
func TestPostgresTemporalConfig(t *testing.T) {
	dir := t.TempDir()
	opts := PostgresTemporalOptions{Database: "paygate_temporal", Port: 27233, UIPort: 28233, ConfigDir: dir,
		CodecEndpoint: "http://127.0.0.1:8080/codec"}.withDefaults()
	path, err := writeServerConfig(opts, pgEndpoint{host: "127.0.0.1", port: "5432", user: "postgres"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(b)
	for _, want := range []string{
		`databaseName: "paygate_temporal"`, `databaseName: "paygate_temporal_visibility"`,
		"pluginName: postgres12_pgx", `connectAddr: "127.0.0.1:5432"`,
		"grpcPort: 27233", "httpPort: 27243", "grpcPort: 27234", "grpcPort: 27235", "grpcPort: 27239",
		"membershipPort: 27333", `rpcAddress: "127.0.0.1:27233"`,
		`filepath: "` + filepath.Join(dir, "dynamicconfig.yaml") + `"`,
	} {
		if !strings.Contains(cfg, want) {
			t.Errorf("server config lacks %q:\n%s", want, cfg)
		}
	}
	dyn, _ := os.ReadFile(filepath.Join(dir, "dynamicconfig.yaml"))
	if !strings.Contains(string(dyn), "history.transferProcessorMaxPollRPS") {
		t.Errorf("dynamic config = %s", dyn)
	}
	root, err := writeUIServerConfig(filepath.Join(dir, "ui"), uiServerConfig{
		frontend: frontendAddr(opts.IP, opts.Port), host: opts.IP, port: opts.UIPort, namespace: opts.Namespace, codec: opts.CodecEndpoint})
	if err != nil {
		t.Fatal(err)
	}
	base, _ := os.ReadFile(filepath.Join(root, "config", "base.yaml"))
	env, _ := os.ReadFile(filepath.Join(root, "config", "paygate.yaml"))
	if string(base) != "temporalGrpcAddress: \"127.0.0.1:27233\"\nhost: \"127.0.0.1\"\nport: 28233\n" {
		t.Errorf("ui base.yaml = %q", base)
	}
	// The UI sends the console's cookie to the codec, whose URL holds no
	// secret.
	for _, want := range []string{`endpoint: "http://127.0.0.1:8080/codec"`, `defaultNamespace: "default"`, "includeCredentials: true",
		"passAccessToken: false"} {
		if !strings.Contains(string(env), want) {
			t.Errorf("ui paygate.yaml lacks %q:\n%s", want, env)
		}
	}
}
