package app

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/paygate/paygate/internal/domain/keyring"
	"github.com/paygate/paygate/internal/domain/notify"
)

// envVars are the variables FromEnv reads.
var envVars = []string{
	"DATABASE_URL", "TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "PAYGATE_KEYRING", "PAYGATE_FINGERPRINT_KEY",
	"ACQUIRER_URL", "ACQUIRER_TIMEOUT", "PAYGATE_HTTP_ADDR", "PAYGATE_SIMULATOR_ADDR", "PAYGATE_NOTIFY_SCHEDULE",
	"PAYGATE_NOTIFY_ALLOW_PRIVATE", "PAYGATE_EAGER_START", "PAYGATE_ADMIN_TOKEN", "PAYGATE_PUBLIC_URL", "PAYGATE_PROVIDER_SECRET",
	"PAYGATE_NODE_ID", "PAYGATE_NODE_LEASE_TTL", "PAYGATE_VAULT_SWEEP_EVERY",
	"PAYGATE_CONNECTORS", "SIMBANK_URL", "PAYGATE_SIMBANK_ADDR", "RAIL_URL", "PAYGATE_RAIL_ADDR", "PAYGATE_RAIL_DATA",
	"PAYGATE_WORKER_CACHE_SIZE", "TEMPORAL_TLS", "TEMPORAL_TLS_CERT", "TEMPORAL_TLS_KEY", "TEMPORAL_TLS_CA",
	"TEMPORAL_TLS_SERVER_NAME", "TEMPORAL_API_KEY", "TEMPORAL_GRPC_GZIP", "PAYGATE_WORKER_WORKFLOW_POLLERS", "PAYGATE_WORKER_ACTIVITY_POLLERS",
	"PAYGATE_WORKER_WORKFLOW_SLOTS", "PAYGATE_WORKER_ACTIVITY_SLOTS", "PAYGATE_WORKER_LOCAL_ACTIVITY_SLOTS",
	"PAYGATE_METRICS_ADDR", "PAYGATE_SIMULATOR_DATA", "PAYGATE_SIMULATOR_PUBLIC_URL", "PAYGATE_SIMULATOR_CALLBACK_VIA",
	"PAYGATE_CODEC_TOKEN", "PAYGATE_CODEC_CORS_ORIGIN", "PAYGATE_TEMPORAL_UI_URL", "TEST_RAIL_URL", "PAYGATE_LIVE_SIMULATORS",
	"STRIPE_SECRET_KEY", "STRIPE_API_URL", "STRIPE_WEBHOOK_SECRET", "PAYGATE_TRUSTED_PROXIES", "PAYGATE_RAIL_CALLBACK_SECRET",
}

// clearEnv empties every variable FromEnv reads for the test's duration.
func clearEnv(t *testing.T) {
	t.Helper()
	for _, name := range envVars {
		t.Setenv(name, "")
	}
}

// refused returns the variables an error from FromEnv or CheckSecrets
// names, each with its reason.
func refused(err error) map[string]error {
	out := map[string]error{}
	var list []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	} else if err != nil {
		list = []error{err}
	}
	for _, e := range list {
		var ee *EnvError
		if errors.As(e, &ee) {
			out[ee.Var] = ee.Err
		} else {
			out["?"] = e
		}
	}
	return out
}

func TestFromEnv(t *testing.T) {
	node := func(n uint16) *uint16 { return &n }
	tests := []struct {
		name  string
		env   map[string]string
		check func(t *testing.T, c Config)
		bad   []string // variables refused as malformed
	}{
		{name: "defaults", check: func(t *testing.T, c Config) {
			if c.Connectors.AcquirerTimeout != 10*time.Second || c.NotifySchedule != notify.DefaultSchedule() || c.NotifyAllowPrivate ||
				c.NodeID != nil || c.NodeLeaseTTL != 0 || c.Edge.PublicURL != "http://127.0.0.1:8080" ||
				c.Worker.VaultSweepEvery != 15*time.Minute {
				t.Errorf("defaults = %+v", c)
			}
			if c.Connectors.ProviderSecret != "" || c.Edge.AdminToken != "" || c.Keyring != "" || c.FingerprintKey != "" {
				t.Error("a secret has a default")
			}
			if c.NodeName == "" {
				t.Error("no node name")
			}
		}},
		{name: "all set", env: map[string]string{
			"ACQUIRER_TIMEOUT": "3s", "PAYGATE_NOTIFY_SCHEDULE": "initial=1s,max=2s,horizon=1h",
			"PAYGATE_NOTIFY_ALLOW_PRIVATE": "true", "PAYGATE_NODE_ID": "1023", "PAYGATE_NODE_LEASE_TTL": "45s",
			"PAYGATE_PUBLIC_URL": "https://pay.example", "PAYGATE_PROVIDER_SECRET": "s3cr3t-from-the-provider",
		}, check: func(t *testing.T, c Config) {
			want := notify.Schedule{Initial: time.Second, Max: 2 * time.Second, Horizon: time.Hour}
			if c.Connectors.AcquirerTimeout != 3*time.Second || c.NotifySchedule != want || !c.NotifyAllowPrivate ||
				c.NodeID == nil || *c.NodeID != *node(1023) || c.NodeLeaseTTL != 45*time.Second ||
				c.Edge.PublicURL != "https://pay.example" || c.Connectors.ProviderSecret != "s3cr3t-from-the-provider" {
				t.Errorf("config = %+v", c)
			}
		}},
		{name: "node 0 is a configured node", env: map[string]string{"PAYGATE_NODE_ID": "0"}, check: func(t *testing.T, c Config) {
			if c.NodeID == nil || *c.NodeID != 0 {
				t.Errorf("NodeID = %v, want 0", c.NodeID)
			}
		}},
		{name: "public URL follows the listen address", env: map[string]string{"PAYGATE_HTTP_ADDR": "10.0.0.5:9000"}, check: func(t *testing.T, c Config) {
			if c.Edge.PublicURL != "http://10.0.0.5:9000" {
				t.Errorf("PublicURL = %s", c.Edge.PublicURL)
			}
		}},
		{name: "acquirer timeout not a duration", env: map[string]string{"ACQUIRER_TIMEOUT": "10"}, bad: []string{"ACQUIRER_TIMEOUT"}},
		{name: "acquirer timeout negative", env: map[string]string{"ACQUIRER_TIMEOUT": "-5s"}, bad: []string{"ACQUIRER_TIMEOUT"}},
		{name: "acquirer timeout zero", env: map[string]string{"ACQUIRER_TIMEOUT": "0s"}, bad: []string{"ACQUIRER_TIMEOUT"}},
		{name: "schedule unknown key", env: map[string]string{"PAYGATE_NOTIFY_SCHEDULE": "first=1s"}, bad: []string{"PAYGATE_NOTIFY_SCHEDULE"}},
		{name: "schedule bad duration", env: map[string]string{"PAYGATE_NOTIFY_SCHEDULE": "initial=soon"}, bad: []string{"PAYGATE_NOTIFY_SCHEDULE"}},
		{name: "schedule max below initial", env: map[string]string{"PAYGATE_NOTIFY_SCHEDULE": "initial=1h,max=1m"}, bad: []string{"PAYGATE_NOTIFY_SCHEDULE"}},
		{name: "allow private not a boolean", env: map[string]string{"PAYGATE_NOTIFY_ALLOW_PRIVATE": "yes"}, bad: []string{"PAYGATE_NOTIFY_ALLOW_PRIVATE"}},
		{name: "eager start not a boolean", env: map[string]string{"PAYGATE_EAGER_START": "on"}, bad: []string{"PAYGATE_EAGER_START"}},
		{name: "eager start on", env: map[string]string{"PAYGATE_EAGER_START": "true"}, check: func(t *testing.T, c Config) {
			if !c.Edge.EagerStart {
				t.Error("EagerStart off, want on")
			}
		}},
		{name: "eager start off by default", env: map[string]string{}, check: func(t *testing.T, c Config) {
			if c.Edge.EagerStart {
				t.Error("EagerStart on, want off unless asked")
			}
		}},
		{name: "worker cache size", env: map[string]string{"PAYGATE_WORKER_CACHE_SIZE": "5000"}, check: func(t *testing.T, c Config) {
			if c.Worker.CacheSize != 5000 {
				t.Errorf("WorkerCacheSize = %d, want 5000", c.Worker.CacheSize)
			}
		}},
		{name: "worker cache size bounded by default", env: map[string]string{}, check: func(t *testing.T, c Config) {
			if c.Worker.CacheSize != 2000 {
				t.Errorf("WorkerCacheSize = %d, want 2000", c.Worker.CacheSize)
			}
		}},
		{name: "worker cache size zero", env: map[string]string{"PAYGATE_WORKER_CACHE_SIZE": "0"}, bad: []string{"PAYGATE_WORKER_CACHE_SIZE"}},
		{name: "worker cache size not a number", env: map[string]string{"PAYGATE_WORKER_CACHE_SIZE": "2k"}, bad: []string{"PAYGATE_WORKER_CACHE_SIZE"}},
		{name: "node id too large", env: map[string]string{"PAYGATE_NODE_ID": "1024"}, bad: []string{"PAYGATE_NODE_ID"}},
		{name: "node id negative", env: map[string]string{"PAYGATE_NODE_ID": "-1"}, bad: []string{"PAYGATE_NODE_ID"}},
		{name: "node id not a number", env: map[string]string{"PAYGATE_NODE_ID": "api-1"}, bad: []string{"PAYGATE_NODE_ID"}},
		{name: "lease ttl too short", env: map[string]string{"PAYGATE_NODE_LEASE_TTL": "1s"}, bad: []string{"PAYGATE_NODE_LEASE_TTL"}},
		{name: "lease ttl not a duration", env: map[string]string{"PAYGATE_NODE_LEASE_TTL": "1 minute"}, bad: []string{"PAYGATE_NODE_LEASE_TTL"}},
		{name: "vault sweep every hour", env: map[string]string{"PAYGATE_VAULT_SWEEP_EVERY": "1h"}, check: func(t *testing.T, c Config) {
			if c.Worker.VaultSweepEvery != time.Hour {
				t.Errorf("VaultSweepEvery = %s, want 1h", c.Worker.VaultSweepEvery)
			}
		}},
		{name: "vault sweep off", env: map[string]string{"PAYGATE_VAULT_SWEEP_EVERY": "0"}, check: func(t *testing.T, c Config) {
			if c.Worker.VaultSweepEvery != 0 {
				t.Errorf("VaultSweepEvery = %s, want 0 (off)", c.Worker.VaultSweepEvery)
			}
		}},
		{name: "vault sweep too often", env: map[string]string{"PAYGATE_VAULT_SWEEP_EVERY": "5s"}, bad: []string{"PAYGATE_VAULT_SWEEP_EVERY"}},
		{name: "vault sweep negative", env: map[string]string{"PAYGATE_VAULT_SWEEP_EVERY": "-1m"}, bad: []string{"PAYGATE_VAULT_SWEEP_EVERY"}},
		{name: "public URL relative", env: map[string]string{"PAYGATE_PUBLIC_URL": "/pay"}, bad: []string{"PAYGATE_PUBLIC_URL"}},
		{name: "acquirer URL not http", env: map[string]string{"ACQUIRER_URL": "ftp://acq.example"}, bad: []string{"ACQUIRER_URL"}},
		{name: "addresses and URLs of every form", env: map[string]string{
			"DATABASE_URL": "host=db port=5432 dbname=paygate", "TEMPORAL_ADDRESS": "dns:///temporal.internal:7233",
			"PAYGATE_HTTP_ADDR": ":8080", "PAYGATE_SIMULATOR_ADDR": "[::1]:8090",
		}, check: func(t *testing.T, c Config) {
			if c.Edge.HTTPAddr != ":8080" || c.TemporalAddress != "dns:///temporal.internal:7233" {
				t.Errorf("config = %+v", c)
			}
		}},
		{name: "database URL with a bad port", env: map[string]string{"DATABASE_URL": "postgres://u:hunter2@db:five/paygate"}, bad: []string{"DATABASE_URL"}},
		{name: "database URL not a URL", env: map[string]string{"DATABASE_URL": "db:5432"}, bad: []string{"DATABASE_URL"}},
		{name: "database URL bad sslmode", env: map[string]string{"DATABASE_URL": "postgres://db/paygate?sslmode=sometimes"}, bad: []string{"DATABASE_URL"}},
		{name: "temporal address without port", env: map[string]string{"TEMPORAL_ADDRESS": "temporal"}, bad: []string{"TEMPORAL_ADDRESS"}},
		{name: "temporal address without host", env: map[string]string{"TEMPORAL_ADDRESS": ":7233"}, bad: []string{"TEMPORAL_ADDRESS"}},
		{name: "http address without port", env: map[string]string{"PAYGATE_HTTP_ADDR": "0.0.0.0"}, bad: []string{"PAYGATE_HTTP_ADDR"}},
		{name: "simulator address port too large", env: map[string]string{"PAYGATE_SIMULATOR_ADDR": "127.0.0.1:70000"}, bad: []string{"PAYGATE_SIMULATOR_ADDR"}},
		{name: "rail address named port", env: map[string]string{"PAYGATE_RAIL_ADDR": "127.0.0.1:http"}, bad: []string{"PAYGATE_RAIL_ADDR"}},
		{name: "simbank address empty port", env: map[string]string{"PAYGATE_SIMBANK_ADDR": "127.0.0.1:"}, bad: []string{"PAYGATE_SIMBANK_ADDR"}},
		{name: "keyring not a keyring", env: map[string]string{"PAYGATE_KEYRING": "just-a-password"}, bad: []string{"PAYGATE_KEYRING"}},
		{name: "fingerprint key not base64", env: map[string]string{"PAYGATE_FINGERPRINT_KEY": "not base64!"}, bad: []string{"PAYGATE_FINGERPRINT_KEY"}},
		{name: "no rail named: both are the local simulator", check: func(t *testing.T, c Config) {
			if c.Connectors.ForbidLiveSimulators || c.Payouts.RailURL != "http://127.0.0.1:8092" || c.Payouts.TestRailURL != c.Payouts.RailURL {
				t.Errorf("forbid %v, rail %s, test rail %s", c.Connectors.ForbidLiveSimulators, c.Payouts.RailURL, c.Payouts.TestRailURL)
			}
		}},
		{name: "a rail named, no test rail: test payouts have none", env: map[string]string{"RAIL_URL": "https://rail.bank.example"},
			check: func(t *testing.T, c Config) {
				if c.Payouts.TestRailURL != "" {
					t.Errorf("test rail %q, want none: it would be the named rail", c.Payouts.TestRailURL)
				}
			}},
		{name: "forbidden with the test rail the live one but a slash", env: map[string]string{"PAYGATE_LIVE_SIMULATORS": "forbid",
			"RAIL_URL": "https://rail.bank.example", "TEST_RAIL_URL": "https://rail.bank.example/"}, bad: []string{"TEST_RAIL_URL"}},
		{name: "simulators forbidden to live accounts", env: map[string]string{"PAYGATE_LIVE_SIMULATORS": "forbid",
			"RAIL_URL": "https://rail.bank.example", "TEST_RAIL_URL": "http://rail.sim:8092"}, check: func(t *testing.T, c Config) {
			if !c.Connectors.ForbidLiveSimulators || c.Payouts.TestRailURL != "http://rail.sim:8092" || c.Payouts.RailURL != "https://rail.bank.example" {
				t.Errorf("forbid %v, rail %s, test rail %s", c.Connectors.ForbidLiveSimulators, c.Payouts.RailURL, c.Payouts.TestRailURL)
			}
		}},
		{name: "forbidden without a test rail", env: map[string]string{"PAYGATE_LIVE_SIMULATORS": "forbid", "RAIL_URL": "https://rail.bank.example"},
			bad: []string{"TEST_RAIL_URL"}},
		{name: "forbidden with the test rail the live one", env: map[string]string{"PAYGATE_LIVE_SIMULATORS": "forbid",
			"RAIL_URL": "https://rail.bank.example", "TEST_RAIL_URL": "https://rail.bank.example"}, bad: []string{"TEST_RAIL_URL"}},
		{name: "live simulators neither allowed nor forbidden", env: map[string]string{"PAYGATE_LIVE_SIMULATORS": "maybe"},
			bad: []string{"PAYGATE_LIVE_SIMULATORS"}},
		{name: "test rail URL relative", env: map[string]string{"TEST_RAIL_URL": "/rail"}, bad: []string{"TEST_RAIL_URL"}},
		{name: "trusted load balancers", env: map[string]string{"PAYGATE_TRUSTED_PROXIES": "10.0.0.5, 192.168.0.0/16,,fd00::/8"},
			check: func(t *testing.T, c Config) {
				if strings.Join(c.Edge.TrustedProxies, " ") != "10.0.0.5 192.168.0.0/16 fd00::/8" {
					t.Errorf("trusted proxies %q", c.Edge.TrustedProxies)
				}
			}},
		{name: "a trusted proxy that is no address", env: map[string]string{"PAYGATE_TRUSTED_PROXIES": "10.0.0.5,lb.internal"},
			bad: []string{"PAYGATE_TRUSTED_PROXIES"}},
		{name: "every problem at once", env: map[string]string{
			"ACQUIRER_TIMEOUT": "x", "PAYGATE_NOTIFY_SCHEDULE": "x", "PAYGATE_NODE_ID": "x", "PAYGATE_NOTIFY_ALLOW_PRIVATE": "x",
		}, bad: []string{"ACQUIRER_TIMEOUT", "PAYGATE_NOTIFY_SCHEDULE", "PAYGATE_NODE_ID", "PAYGATE_NOTIFY_ALLOW_PRIVATE"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			c, err := FromEnv()
			got := refused(err)
			if len(got) != len(tt.bad) {
				t.Fatalf("FromEnv() error = %v, want refusals of %v", err, tt.bad)
			}
			for _, name := range tt.bad {
				if !errors.Is(got[name], ErrMalformed) {
					t.Errorf("%s: %v, want ErrMalformed", name, got[name])
				}
				if !strings.Contains(err.Error(), name) {
					t.Errorf("the error %q does not name %s", err, name)
				}
			}
			if tt.check != nil {
				tt.check(t, c)
			}
		})
	}
}

// TestFromEnvKeepsTheDatabasePasswordOut: a malformed DATABASE_URL is
// named, never quoted, so its password cannot reach a log.
func TestFromEnvKeepsTheDatabasePasswordOut(t *testing.T) {
	clearEnv(t)
	t.Setenv("DATABASE_URL", "postgres://paygate:hunter2@db:five/paygate")
	_, err := FromEnv()
	if !errors.Is(refused(err)["DATABASE_URL"], ErrMalformed) {
		t.Fatalf("FromEnv() = %v, want DATABASE_URL refused", err)
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("the error %q shows the password", err)
	}
}

func TestCheckSecrets(t *testing.T) {
	spec, err := keyring.GenerateSpec("k1")
	if err != nil {
		t.Fatal(err)
	}
	spec2, err := keyring.GenerateSpec("k2")
	if err != nil {
		t.Fatal(err)
	}
	key := func(b byte, n int) string {
		k := make([]byte, n)
		for i := range k {
			k[i] = b + byte(i)
		}
		return base64.StdEncoding.EncodeToString(k)
	}
	zeros := base64.StdEncoding.EncodeToString(make([]byte, 32))
	good := Config{
		Keyring:        spec + "," + spec2,
		FingerprintKey: key(1, 32),
		Connectors:     ConnectorsConfig{ProviderSecret: "9f2c1e7a4b5d6e8f0a1b2c3d"},
		Edge:           EdgeConfig{AdminToken: "b7e1c9d2a4f6081e3c5a7b9d1f2e4c6a8b0d"},
	}
	with := func(f func(*Config)) Config {
		c := good
		f(&c)
		return c
	}
	tests := []struct {
		name string
		cfg  Config
		p    Process
		want map[string]error // variable → reason
	}{
		{"all proper, serve", good, Serve, nil},
		{"all proper, worker", good, Worker, nil},
		{"admin API off (no token)", with(func(c *Config) { c.Edge.AdminToken = "" }), Serve, nil},
		{"keyring unset", with(func(c *Config) { c.Keyring = "" }), Worker,
			map[string]error{"PAYGATE_KEYRING": ErrUnset}},
		{"keyring malformed", with(func(c *Config) { c.Keyring = "k1:short" }), Serve,
			map[string]error{"PAYGATE_KEYRING": ErrMalformed}},
		{"keyring with an all-zero key", with(func(c *Config) { c.Keyring = spec + ",old:" + zeros }), Serve,
			map[string]error{"PAYGATE_KEYRING": ErrDefaultSecret}},
		{"fingerprint key unset", with(func(c *Config) { c.FingerprintKey = " " }), Worker,
			map[string]error{"PAYGATE_FINGERPRINT_KEY": ErrUnset}},
		{"fingerprint key not base64", with(func(c *Config) { c.FingerprintKey = "not base64!" }), Serve,
			map[string]error{"PAYGATE_FINGERPRINT_KEY": ErrMalformed}},
		{"fingerprint key short", with(func(c *Config) { c.FingerprintKey = key(1, 16) }), Serve,
			map[string]error{"PAYGATE_FINGERPRINT_KEY": ErrWeakSecret}},
		{"fingerprint key all zero", with(func(c *Config) { c.FingerprintKey = zeros }), Worker,
			map[string]error{"PAYGATE_FINGERPRINT_KEY": ErrDefaultSecret}},
		{"provider secret unset", with(func(c *Config) { c.Connectors.ProviderSecret = "" }), Serve,
			map[string]error{"PAYGATE_PROVIDER_SECRET": ErrUnset}},
		{"provider secret is the simulators' default", with(func(c *Config) { c.Connectors.ProviderSecret = DefaultProviderSecret }), Serve,
			map[string]error{"PAYGATE_PROVIDER_SECRET": ErrDefaultSecret}},
		{"provider secret placeholder", with(func(c *Config) { c.Connectors.ProviderSecret = "CHANGEME" }), Serve,
			map[string]error{"PAYGATE_PROVIDER_SECRET": ErrDefaultSecret}},
		{"provider secret one character repeated", with(func(c *Config) { c.Connectors.ProviderSecret = strings.Repeat("x", 40) }), Serve,
			map[string]error{"PAYGATE_PROVIDER_SECRET": ErrDefaultSecret}},
		{"provider secret short", with(func(c *Config) { c.Connectors.ProviderSecret = "abc123" }), Serve,
			map[string]error{"PAYGATE_PROVIDER_SECRET": ErrWeakSecret}},
		{"provider secret not needed by the worker", with(func(c *Config) { c.Connectors.ProviderSecret = "" }), Worker, nil},
		{"admin token short", with(func(c *Config) { c.Edge.AdminToken = "0123456789abcdef" }), Serve,
			map[string]error{"PAYGATE_ADMIN_TOKEN": ErrWeakSecret}},
		{"admin token placeholder", with(func(c *Config) { c.Edge.AdminToken = "admin" }), Serve,
			map[string]error{"PAYGATE_ADMIN_TOKEN": ErrDefaultSecret}},
		{"admin token not needed by the worker", with(func(c *Config) { c.Edge.AdminToken = "x" }), Worker, nil},
		{"everything missing, serve", Config{}, Serve, map[string]error{
			"PAYGATE_KEYRING": ErrUnset, "PAYGATE_FINGERPRINT_KEY": ErrUnset, "PAYGATE_PROVIDER_SECRET": ErrUnset,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.CheckSecrets(tt.p)
			got := refused(err)
			if len(got) != len(tt.want) {
				t.Fatalf("CheckSecrets = %v, want refusals %v", err, tt.want)
			}
			for name, reason := range tt.want {
				if !errors.Is(got[name], reason) {
					t.Errorf("%s: %v, want %v", name, got[name], reason)
				}
			}
			if err != nil && (strings.Contains(err.Error(), good.Connectors.ProviderSecret) || strings.Contains(err.Error(), good.FingerprintKey)) {
				t.Error("the error shows a secret")
			}
		})
	}
}

// TestComposeSecrets keeps docker-compose.yml in step with CheckSecrets:
// every secret of the api and worker (and the simulator's provider secret,
// and the database password) comes from the environment with no default,
// and every variable compose gives the gateway is one it reads.
func TestComposeSecrets(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Command     []string          `yaml:"command"`
			Environment map[string]string `yaml:"environment"`
			DependsOn   map[string]struct {
				Condition string `yaml:"condition"`
			} `yaml:"depends_on"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &compose); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	// required checks that a variable's value is ${source:?message}.
	required := func(service, name, source, value string) {
		t.Helper()
		if !strings.HasPrefix(value, "${"+source+":?") || !strings.HasSuffix(value, "}") {
			t.Errorf("%s: %s = %q, want ${%s:?message} (no default)", service, name, value, source)
		}
	}
	for _, svc := range []string{"api", "worker"} {
		s, ok := compose.Services[svc]
		if !ok {
			t.Fatalf("no %s service", svc)
		}
		for name, value := range s.Environment {
			if !slices.Contains(envVars, name) {
				t.Errorf("%s: %s is not a variable the gateway reads", svc, name)
			}
			if strings.Contains(value, ":-") && secretVar(name) {
				t.Errorf("%s: the secret %s has a default: %q", svc, name, value)
			}
		}
		for _, name := range []string{"PAYGATE_KEYRING", "PAYGATE_FINGERPRINT_KEY", "PAYGATE_PROVIDER_SECRET", "PAYGATE_ADMIN_TOKEN"} {
			required(svc, name, name, s.Environment[name])
		}
		if v := s.Environment["DATABASE_URL"]; !strings.Contains(v, "${POSTGRES_PASSWORD:?") {
			t.Errorf("%s: DATABASE_URL = %q, want the password from ${POSTGRES_PASSWORD:?...}", svc, v)
		}
		// serve and worker refuse a schema of another version, so the
		// one-shot migrate service must have finished first.
		if c := s.DependsOn["migrate"].Condition; c != "service_completed_successfully" {
			t.Errorf("%s: depends on migrate with condition %q, want service_completed_successfully", svc, c)
		}
	}
	migrate := compose.Services["migrate"]
	if !slices.Equal(migrate.Command, []string{"migrate"}) {
		t.Errorf("migrate command = %v, want [migrate]", migrate.Command)
	}
	if v := migrate.Environment["DATABASE_URL"]; v != compose.Services["api"].Environment["DATABASE_URL"] {
		t.Errorf("migrate: DATABASE_URL = %q, want the api's", v)
	}
	if cmd := compose.Services["api"].Command; !slices.Equal(cmd, []string{"serve"}) {
		t.Errorf("api command = %v", cmd)
	}
	required("simulator", "PAYGATE_PROVIDER_SECRET", "PAYGATE_PROVIDER_SECRET", compose.Services["simulator"].Environment["PAYGATE_PROVIDER_SECRET"])
	required("postgres", "POSTGRES_PASSWORD", "POSTGRES_PASSWORD", compose.Services["postgres"].Environment["POSTGRES_PASSWORD"])
	required("temporal", "POSTGRES_PWD", "POSTGRES_PASSWORD", compose.Services["temporal"].Environment["POSTGRES_PWD"])
}

func secretVar(name string) bool {
	switch name {
	case "PAYGATE_KEYRING", "PAYGATE_FINGERPRINT_KEY", "PAYGATE_PROVIDER_SECRET", "PAYGATE_ADMIN_TOKEN", "DATABASE_URL":
		return true
	}
	return false
}
