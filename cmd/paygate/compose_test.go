package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"maps"
	"net"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"gopkg.in/yaml.v3"

	"github.com/paygate/paygate/app"
	"github.com/paygate/paygate/internal/adapters/telemetry"
	"github.com/paygate/paygate/internal/dev/devenv"
	"github.com/paygate/paygate/internal/domain/keyring"
)

// composeSecrets are the variables docker-compose.yml requires, with values
// the gateway accepts.
func composeSecrets(t *testing.T) map[string]string {
	t.Helper()
	spec, err := keyring.GenerateSpec("k1")
	if err != nil {
		t.Fatal(err)
	}
	fp := make([]byte, 32)
	_, _ = rand.Read(fp)
	return map[string]string{
		"POSTGRES_PASSWORD":       "b1c2d3e4f5a6b7c8",
		"PAYGATE_KEYRING":         spec,
		"PAYGATE_FINGERPRINT_KEY": base64.StdEncoding.EncodeToString(fp),
		"PAYGATE_PROVIDER_SECRET": "7f3a9c1e5b2d8f4a6c0e9b7d5a3f1c8e",
		"PAYGATE_ADMIN_TOKEN":     "c9e8d7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0",
		"PAYGATE_CODEC_TOKEN":     "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d",
		"GRAFANA_ADMIN_PASSWORD":  "e4f5a6b7c8d9",
	}
}

// loadCompose loads docker-compose.yml with the compose specification's own
// library, as `docker compose` would with env as its environment.
func loadCompose(t *testing.T, env map[string]string) (*types.Project, error) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return loader.LoadWithContext(context.Background(), types.ConfigDetails{
		WorkingDir:  root,
		ConfigFiles: []types.ConfigFile{{Filename: filepath.Join(root, "docker-compose.yml")}},
		// The loader adds to the map it is given.
		Environment: maps.Clone(env),
	}, func(o *loader.Options) { o.SetProjectName("paygate", true) })
}

// TestComposeRefusesMissingSecrets: each secret has no default; without it
// compose does not start, and says which.
func TestComposeRefusesMissingSecrets(t *testing.T) {
	all := composeSecrets(t)
	if _, err := loadCompose(t, all); err != nil {
		t.Fatalf("with every secret: %v", err)
	}
	for _, name := range slices.Sorted(maps.Keys(all)) {
		t.Run(name, func(t *testing.T) {
			env := maps.Clone(all)
			delete(env, name)
			_, err := loadCompose(t, env)
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("without %s: %v, want an error naming it", name, err)
			}
		})
	}
}

// env returns a service's environment as plain strings.
func env(t *testing.T, s types.ServiceConfig) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range s.Environment {
		if v == nil {
			t.Errorf("%s: %s has no value", s.Name, k)
			continue
		}
		out[k] = *v
	}
	return out
}

// withEnv sets vars for the test and reads the gateway's configuration.
func withEnv(t *testing.T, vars map[string]string) (app.Config, error) {
	t.Helper()
	for k, v := range vars {
		t.Setenv(k, v)
	}
	return app.FromEnv()
}

func portOf(t *testing.T, hostport string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(hostport)
	if err != nil {
		t.Fatalf("%q: %v", hostport, err)
	}
	return port
}

func urlPort(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("%q: %v", raw, err)
	}
	return u.Port()
}

// TestComposeMatchesTheCLI checks docker-compose.yml against the gateway's
// own configuration, since no Docker engine runs here: every paygate
// service runs a real subcommand with an environment the gateway accepts,
// listens where its ports, health checks and the other services expect it,
// and the browser on the host reaches the API, the simulator's pages and
// the codec endpoint at the addresses the gateway hands out.
func TestComposeMatchesTheCLI(t *testing.T) {
	p, err := loadCompose(t, composeSecrets(t))
	if err != nil {
		t.Fatal(err)
	}
	services := map[string]types.ServiceConfig{}
	for _, s := range p.Services {
		services[s.Name] = s
	}
	wantServices := []string{"api", "grafana", "migrate", "postgres", "prometheus", "seed", "simulator", "temporal", "temporal-ui", "worker"}
	if got := slices.Sorted(maps.Keys(services)); !slices.Equal(got, wantServices) {
		t.Fatalf("services %v, want %v", got, wantServices)
	}

	usage := errUsage.Error()
	commands := []struct {
		service string
		command []string
		process app.Process
	}{
		{"api", []string{"serve"}, app.Serve},
		{"worker", []string{"worker"}, app.Worker},
		{"simulator", []string{"simulator"}, 0},
		{"migrate", []string{"migrate"}, 0},
		{"seed", []string{"merchant", "demo"}, 0},
	}
	for _, c := range commands {
		t.Run(c.service, func(t *testing.T) {
			s := services[c.service]
			if s.Image != "paygate:local" || s.Build == nil {
				t.Errorf("image %q build %v, want paygate:local built here", s.Image, s.Build)
			}
			if !slices.Equal(s.Command, c.command) {
				t.Errorf("command %v, want %v", s.Command, c.command)
			}
			if !strings.Contains(usage, "\n  "+strings.Join(c.command, " ")+" ") {
				t.Errorf("%v is not a command in paygate's usage", c.command)
			}
			cfg, err := withEnv(t, env(t, s))
			if err != nil {
				t.Fatalf("the gateway refuses the service's environment: %v", err)
			}
			if c.process != 0 {
				if err := cfg.CheckSecrets(c.process); err != nil {
					t.Errorf("%s refuses its secrets: %v", c.command[0], err)
				}
			}
		})
	}

	api, worker, sim := services["api"], services["worker"], services["simulator"]
	apiCfg, err := withEnv(t, env(t, api))
	if err != nil {
		t.Fatal(err)
	}
	simCfg, err := withEnv(t, env(t, sim))
	if err != nil {
		t.Fatal(err)
	}
	published := func(s types.ServiceConfig, target string) (types.ServicePortConfig, bool) {
		for _, port := range s.Ports {
			if port.Target != 0 && strings.TrimSpace(target) == itoa(port.Target) {
				return port, true
			}
		}
		return types.ServicePortConfig{}, false
	}
	// The API: published on the host's loopback at the port of the public
	// URL the gateway hands browsers.
	if port, ok := published(api, portOf(t, apiCfg.Edge.HTTPAddr)); !ok || port.HostIP != "127.0.0.1" || port.Published != urlPort(t, apiCfg.Edge.PublicURL) {
		t.Errorf("api ports %+v: want PAYGATE_HTTP_ADDR's port published on 127.0.0.1 at PAYGATE_PUBLIC_URL's port (%s)", api.Ports, apiCfg.Edge.PublicURL)
	}
	// The simulator's pages: the public URL the simulator and the API use
	// is where compose publishes the simulator's port.
	// The API starts payments eagerly on its own worker, as under make run.
	if !apiCfg.Edge.EagerStart {
		t.Error("the api service does not start payments eagerly (PAYGATE_EAGER_START), make run's API does")
	}
	if simCfg.Dev.SimulatorPublicURL != apiCfg.Dev.SimulatorPublicURL {
		t.Errorf("simulator public URL %s, the API allows forms to %s", simCfg.Dev.SimulatorPublicURL, apiCfg.Dev.SimulatorPublicURL)
	}
	if port, ok := published(sim, portOf(t, simCfg.Dev.SimulatorAddr)); !ok || port.Published != urlPort(t, simCfg.Dev.SimulatorPublicURL) {
		t.Errorf("simulator ports %+v: want PAYGATE_SIMULATOR_ADDR's port published at PAYGATE_SIMULATOR_PUBLIC_URL's (%s)", sim.Ports, simCfg.Dev.SimulatorPublicURL)
	}
	// The services reach each other by name, at the ports they listen on.
	for _, ref := range []struct{ name, url, host, listen string }{
		{"ACQUIRER_URL", apiCfg.Connectors.AcquirerURL, "simulator", simCfg.Dev.SimulatorAddr},
		{"SIMBANK_URL", apiCfg.Connectors.SimBankURL, "simulator", simCfg.Dev.SimBankAddr},
		{"RAIL_URL", apiCfg.Payouts.RailURL, "simulator", simCfg.Dev.RailAddr},
		{"PAYGATE_SIMULATOR_CALLBACK_VIA", simCfg.Dev.SimulatorCallbackVia, "api", apiCfg.Edge.HTTPAddr},
	} {
		u, err := url.Parse(ref.url)
		if err != nil || u.Hostname() != ref.host || u.Port() != portOf(t, ref.listen) {
			t.Errorf("%s = %s, want %s at port %s", ref.name, ref.url, ref.host, portOf(t, ref.listen))
		}
	}
	// Health checks: the image has no shell, so paygate checks itself, at
	// the port the service listens on.
	workerCfg, err := withEnv(t, env(t, worker))
	if err != nil {
		t.Fatal(err)
	}
	for _, hc := range []struct {
		service types.ServiceConfig
		listen  string
	}{{api, apiCfg.Edge.HTTPAddr}, {worker, workerCfg.Telemetry.MetricsAddr}, {sim, simCfg.Dev.SimulatorAddr}} {
		want := []string{"CMD", "/usr/local/bin/paygate", "healthcheck", "http://127.0.0.1:" + portOf(t, hc.listen) + "/healthz"}
		if hc.service.HealthCheck == nil || !slices.Equal(hc.service.HealthCheck.Test, want) {
			t.Errorf("%s health check %v, want %v", hc.service.Name, hc.service.HealthCheck, want)
		}
	}
	// Start order: the schema first; the seed after it.
	for _, s := range []types.ServiceConfig{api, worker} {
		for dep, cond := range map[string]string{"migrate": "service_completed_successfully", "postgres": "service_healthy",
			"temporal": "service_healthy", "simulator": "service_healthy"} {
			if got := s.DependsOn[dep].Condition; got != cond {
				t.Errorf("%s depends on %s with %q, want %q", s.Name, dep, got, cond)
			}
		}
	}
	if got := services["seed"].DependsOn["migrate"].Condition; got != "service_completed_successfully" {
		t.Errorf("seed depends on migrate with %q", got)
	}
	// The Temporal UI decodes through the API's codec endpoint, from the
	// host's browser, which the API lets in, with the console's cookie;
	// nothing secret is in the UI's settings.
	ui := services["temporal-ui"]
	uiEnv := env(t, ui)
	if want := apiCfg.Edge.PublicURL + "/codec"; uiEnv["TEMPORAL_CODEC_ENDPOINT"] != want || uiEnv["TEMPORAL_CODEC_INCLUDE_CREDENTIALS"] != "true" {
		t.Errorf("TEMPORAL_CODEC_ENDPOINT = %s, include credentials %q; want %s and true", uiEnv["TEMPORAL_CODEC_ENDPOINT"],
			uiEnv["TEMPORAL_CODEC_INCLUDE_CREDENTIALS"], want)
	}
	for k, v := range uiEnv {
		if apiCfg.Edge.Codec.Token != "" && strings.Contains(v, apiCfg.Edge.Codec.Token) {
			t.Errorf("the UI's %s holds the codec token", k)
		}
	}
	if len(ui.Ports) != 1 || !slices.Contains(apiCfg.Edge.Codec.CORSOrigins, "http://localhost:"+ui.Ports[0].Published) {
		t.Errorf("the UI is published at %+v; the codec allows %v", ui.Ports, apiCfg.Edge.Codec.CORSOrigins)
	}
	checkPrometheus(t, p.WorkingDir, apiCfg.Telemetry.MetricsAddr, workerCfg.Telemetry.MetricsAddr)
	checkDashboard(t, p.WorkingDir)
	checkTemporalTuning(t, p.WorkingDir, services["temporal"])
}

func itoa(n uint32) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// checkPrometheus: Prometheus scrapes the api and the worker where they
// serve their metrics.
func checkPrometheus(t *testing.T, root, apiMetrics, workerMetrics string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "deploy", "prometheus", "prometheus.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		ScrapeConfigs []struct {
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatalf("prometheus.yml: %v", err)
	}
	var targets []string
	for _, sc := range cfg.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			targets = append(targets, st.Targets...)
		}
	}
	for _, want := range []string{"api:" + portOf(t, apiMetrics), "worker:" + portOf(t, workerMetrics)} {
		if !slices.Contains(targets, want) {
			t.Errorf("prometheus scrapes %v, not %s", targets, want)
		}
	}
}

// checkTemporalTuning: the compose file's Temporal server reads the dynamic
// config paygate dev's Postgres-backed server gets (eager activities among
// it), from a file the service mounts where the variable points.
func checkTemporalTuning(t *testing.T, root string, s types.ServiceConfig) {
	t.Helper()
	file := filepath.Join(root, "deploy", "temporal", "dynamicconfig.yaml")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != devenv.ServerDynamicConfig {
		t.Errorf("deploy/temporal/dynamicconfig.yaml is not devenv.ServerDynamicConfig:\n%s", b)
	}
	// The image's configuration names the file relative to /etc/temporal.
	path := env(t, s)["DYNAMIC_CONFIG_FILE_PATH"]
	mounted := false
	for _, v := range s.Volumes {
		if v.Type == types.VolumeTypeBind && v.Source == file &&
			v.Target == "/etc/temporal/"+path && v.ReadOnly {
			mounted = true
		}
	}
	if path == "" || !mounted {
		t.Errorf("temporal reads its dynamic config from %q, volumes %+v: want deploy/temporal/dynamicconfig.yaml mounted there, read-only", path, s.Volumes)
	}
}

// checkDashboard: the Grafana dashboard parses, and every paygate_ series it
// queries is one the gateway exports.
func checkDashboard(t *testing.T, root string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "deploy", "grafana", "dashboards", "paygate.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	m := telemetry.New(nil)
	m.ObserveRequest("/v1/authorise", "0000", time.Millisecond)
	m.NotificationAttempt(telemetry.NotifyDelivered)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	exported := rec.Body.String()
	// The backlog and payout gauges are read from Postgres at scrape time.
	exported += "\npaygate_notifications_backlog\npaygate_payouts\n"
	name := regexp.MustCompile(`\b(paygate|temporal)_[a-z_]+`)
	for _, panel := range dash.Panels {
		if len(panel.Targets) == 0 {
			t.Errorf("panel %q queries nothing", panel.Title)
		}
		for _, target := range panel.Targets {
			for _, series := range name.FindAllString(target.Expr, -1) {
				if strings.HasPrefix(series, "paygate_") && !strings.Contains(exported, "\n"+series) {
					t.Errorf("panel %q queries %s, which the gateway does not export", panel.Title, series)
				}
			}
		}
	}
}
