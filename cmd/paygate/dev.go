package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/paygate/paygate/app"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/dev/devenv"
	"github.com/paygate/paygate/internal/domain/keyring"
	"github.com/paygate/paygate/internal/domain/testmode"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/workflows"
)

// Demo merchant ids: fixed, so the README's examples work as written. The
// second account captures manually.
const (
	demoMerchantID      = "10086"
	demoAccountID       = "10086001"
	demoManualAccountID = "10086002"
)

// devSecrets are the local keys, made once and kept under .data.
type devSecrets struct {
	Keyring        string `json:"keyring"`
	FingerprintKey string `json:"fingerprint_key"`
	// Database is the local database's name. It is made with the keys, so
	// a fresh .data never meets rows sealed with keys it does not have.
	Database string `json:"database"`
	// ProviderSecret is what the simulated acquirer, ACS, APM provider
	// and rail sign their callbacks with.
	ProviderSecret string `json:"provider_secret,omitempty"`
	// CodecToken authenticates the codec endpoint the local Temporal UI
	// decodes payloads with (dev_codec.go).
	CodecToken string `json:"codec_token,omitempty"`
}

// demoFile is what .data/demo-merchant.json holds.
type demoFile struct {
	APIURL        string `json:"api_url"`
	TemporalUIURL string `json:"temporal_ui_url"`
	// MetricsURL is the worker's metrics, APIMetricsURL the API's.
	MetricsURL    string `json:"metrics_url,omitempty"`
	APIMetricsURL string `json:"api_metrics_url,omitempty"`
	// ConsoleURL is the back office; ConsoleUsers a demo login per role.
	ConsoleURL   string         `json:"console_url,omitempty"`
	ConsoleUsers []consoleLogin `json:"console_users,omitempty"`
	MerchantID   string         `json:"merchant_id"`
	AccountID    string         `json:"account_id"`
	SignKey      string         `json:"sign_key"`

	ManualAccountID string `json:"manual_account_id"`
	ManualSignKey   string `json:"manual_sign_key"`
}

func runDev(ctx context.Context, args []string, stdout io.Writer, logger *slog.Logger) error {
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	dataDir := fs.String("data", ".data", "where local data lives")
	binDir := fs.String("bin", ".bin", "where the Temporal CLI is installed")
	apiAddr := fs.String("api", "127.0.0.1:8080", "API listen address")
	simAddr := fs.String("simulator", "127.0.0.1:8090", "acquirer simulator listen address")
	railAddr := fs.String("rail", "127.0.0.1:8092", "payout rail simulator listen address")
	bankAddr := fs.String("simbank", "127.0.0.1:8091", "second simulated acquirer (connector sim-bank) listen address")
	metricsAddr := fs.String("metrics", "127.0.0.1:9464", "Prometheus /metrics listen address (a free port if this one is taken)")
	temporalPort := fs.Int("temporal-port", 7233, "Temporal frontend port")
	uiPort := fs.Int("ui-port", 8233, "Temporal Web UI port")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := os.MkdirAll(*dataDir, 0o755); err != nil {
		return err
	}
	// Bind our own ports first so a second `make run` fails fast and clearly.
	apiLn, err := listen(*apiAddr)
	if err != nil {
		return fmt.Errorf("%w (is another `make run` going?)", err)
	}
	simLn, err := listen(*simAddr)
	if err != nil {
		apiLn.Close()
		return err
	}
	railLn, err := listen(*railAddr)
	if err != nil {
		apiLn.Close()
		simLn.Close()
		return err
	}
	bankLn, err := listen(*bankAddr)
	if err != nil {
		apiLn.Close()
		simLn.Close()
		railLn.Close()
		return err
	}
	// Each process that serves one of them has its own copy.
	defer func() {
		for _, ln := range []net.Listener{apiLn, simLn, railLn, bankLn} {
			ln.Close()
		}
	}()

	cfg, err := app.FromEnv()
	if err != nil {
		return fmt.Errorf("configuration:\n%w", err)
	}
	secrets, err := loadDevSecrets(filepath.Join(*dataDir, "secrets.json"))
	if err != nil {
		return err
	}
	if err := ensureDevTokens(filepath.Join(*dataDir, "secrets.json"), &secrets); err != nil {
		return err
	}
	codecEndpoint := devCodecEndpoint("http://" + apiLn.Addr().String())
	pgURL, stopPG, err := devDatabase(ctx, cfg.DatabaseURL, *dataDir, secrets.Database, logger)
	if err != nil {
		return err
	}
	defer stopPG()
	cfg.DatabaseURL = pgURL
	// Locally there is no separate `paygate migrate` step: the schema is
	// brought up to date here, before anything opens the database.
	if _, err := app.Migrate(ctx, cfg.DatabaseURL, logger); err != nil {
		return err
	}

	var tp temporalProcess
	if os.Getenv("PAYGATE_TEMPORAL") == temporalOnPostgres {
		tp, err = startTemporalOnPostgres(ctx, *binDir, *dataDir, pgURL, *temporalPort, *uiPort, codecEndpoint, logger)
	} else {
		tp, err = startDevTemporal(ctx, devenv.TemporalOptions{
			DBFile:           filepath.Join(*dataDir, "temporal.db"),
			Port:             *temporalPort,
			UIPort:           *uiPort,
			SearchAttributes: workflows.SearchAttributeTypes,
			LogFile:          filepath.Join(*dataDir, "temporal.log"),
			CodecEndpoint:    codecEndpoint,
		}, *binDir, logger)
	}
	if err != nil {
		return err
	}
	defer tp.Stop()
	cfg.TemporalAddress = tp.HostPort()

	cfg.Keyring, cfg.FingerprintKey = secrets.Keyring, secrets.FingerprintKey
	apiURL := "http://" + apiLn.Addr().String()
	cfg.Connectors.AcquirerURL = "http://" + simLn.Addr().String()
	// Every account of the dev setup pays out on its own rail simulator,
	// test and live alike.
	cfg.Payouts.RailURL = "http://" + railLn.Addr().String()
	cfg.Payouts.TestRailURL = cfg.Payouts.RailURL
	cfg.Connectors.SimBankURL = "http://" + bankLn.Addr().String()
	// The simulators sign with the local provider secret; the rail
	// simulator signs its callbacks with it too.
	if cfg.Connectors.ProviderSecret == "" {
		cfg.Connectors.ProviderSecret = secrets.ProviderSecret
	}
	if cfg.Payouts.RailCallbackSecret == "" {
		cfg.Payouts.RailCallbackSecret = cfg.Connectors.ProviderSecret
	}
	cfg.Edge.PublicURL = apiURL
	cfg.Edge.Codec = devCodecConfig(secrets.CodecToken, tp.UIURL())

	// The demo merchant and the console's logins are made before the
	// gateway's processes start, so the first request finds them.
	g, err := app.Open(ctx, cfg, logger, false)
	if err != nil {
		return err
	}
	demo, err := ensureDemoMerchant(ctx, g.Accounts)
	if err == nil {
		demo.ConsoleUsers, err = ensureDemoConsoleUsers(ctx, func(ctx context.Context, u *models.ConsoleUser) error {
			return models.CreateConsoleUser(ctx, g.DB, u)
		}, cfg.FingerprintKey)
	}
	g.Close()
	if err != nil {
		return err
	}

	// Metrics are a convenience here: a taken port moves them, it does not
	// stop the run. The API's are on a port of their own.
	workerMetricsLn, err := listen(*metricsAddr)
	if err != nil {
		logger.Warn("metrics port taken, using a free one", "addr", *metricsAddr)
		if workerMetricsLn, err = listen("127.0.0.1:0"); err != nil {
			return err
		}
	}
	defer workerMetricsLn.Close()
	apiMetricsLn, err := listen("127.0.0.1:0")
	if err != nil {
		return err
	}
	defer apiMetricsLn.Close()

	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the paygate binary: %w", err)
	}
	env := devChildEnv(cfg, tp.UIURL())
	simEnv := append(slices.Clone(env), "PAYGATE_SIMULATOR_ADDR="+simLn.Addr().String(), "PAYGATE_RAIL_ADDR="+railLn.Addr().String(),
		"PAYGATE_SIMBANK_ADDR="+bankLn.Addr().String(),
		// The simulators keep what they charged and paid under .data, so
		// a restarted dev setup still knows.
		"PAYGATE_SIMULATOR_DATA="+filepath.Join(*dataDir, "acquirer-charges.jsonl"),
		"PAYGATE_RAIL_DATA="+filepath.Join(*dataDir, "rail-transfers.jsonl"), "PAYGATE_DEBUG_ADDR=")
	gatewayEnv := withGatewayProcs(slices.Clone(env), os.Getenv, runtime.NumCPU())
	workerEnv := append(slices.Clone(gatewayEnv), "PAYGATE_METRICS_ADDR="+workerMetricsLn.Addr().String())
	apiEnv := append(slices.Clone(gatewayEnv), "PAYGATE_METRICS_ADDR="+apiMetricsLn.Addr().String())
	// The caller's PAYGATE_DEBUG_ADDR reaches one process only: two
	// listeners cannot share its address.
	if debugAddrTo(os.Getenv) == "api" {
		workerEnv = append(workerEnv, "PAYGATE_DEBUG_ADDR=")
	} else {
		apiEnv = append(apiEnv, "PAYGATE_DEBUG_ADDR=")
	}
	var children devChildren
	defer func() { children.stop(20*time.Second, logger) }()
	for _, spec := range []struct {
		name, command string
		env           []string
		lns           []net.Listener
		health        string
	}{
		{"simulators", "simulator", simEnv, []net.Listener{simLn, railLn, bankLn}, cfg.Connectors.AcquirerURL + "/healthz"},
		{"worker", "worker", workerEnv, []net.Listener{workerMetricsLn}, "http://" + workerMetricsLn.Addr().String() + "/healthz"},
		{"api", "serve", apiEnv, []net.Listener{apiLn, apiMetricsLn}, apiURL + "/healthz"},
	} {
		c, err := startDevChild(exe, spec.name, spec.command, spec.env, spec.lns, spec.health, os.Stderr)
		if err != nil {
			return err
		}
		children = append(children, c)
		if err := c.waitReady(ctx, 2*time.Minute); err != nil {
			return err
		}
	}

	demo.APIURL = apiURL
	demo.TemporalUIURL = tp.UIURL()
	demo.MetricsURL = "http://" + workerMetricsLn.Addr().String() + "/metrics"
	demo.APIMetricsURL = "http://" + apiMetricsLn.Addr().String() + "/metrics"
	demo.ConsoleURL = demo.APIURL + "/console/"
	if err := writeJSON(filepath.Join(*dataDir, "demo-merchant.json"), demo, 0o600); err != nil {
		return err
	}
	envFile := fmt.Sprintf("DATABASE_URL=%s\nTEMPORAL_ADDRESS=%s\nPAYGATE_KEYRING=%s\nPAYGATE_FINGERPRINT_KEY=%s\nACQUIRER_URL=%s\nRAIL_URL=%s\nTEST_RAIL_URL=%s\nSIMBANK_URL=%s\n",
		cfg.DatabaseURL, cfg.TemporalAddress, cfg.Keyring, cfg.FingerprintKey, cfg.Connectors.AcquirerURL, cfg.Payouts.RailURL, cfg.Payouts.TestRailURL, cfg.Connectors.SimBankURL)
	// The Temporal CLI reads its codec from these, so the token stays out
	// of its command line: `set -a; . .data/dev.env; temporal workflow show ...`.
	envFile += "TEMPORAL_CODEC_ENDPOINT=" + codecEndpoint + "\nTEMPORAL_CODEC_AUTH=Bearer " + cfg.Edge.Codec.Token + "\n"
	if err := os.WriteFile(filepath.Join(*dataDir, "dev.env"), []byte(envFile), 0o600); err != nil {
		return err
	}
	fmt.Fprintf(stdout, `
Paygate is running. Ctrl-C stops everything.

  API          %s
  Temporal UI  %s   (payloads decoded once you sign in to the console as ops)
  Temporal     %s
  Simulator    %s
  Sim-bank     %s
  Payout rail  %s
  Postgres     %s
  Metrics      %s   (Prometheus: the worker's)
               %s   (the API's)
  Console      %s   (back office; logins below)

The settings of this run are in %s (for other paygate commands).

Demo merchant (also in %s):
  merchant_id  %s
  account_id   %s   (capture mode auto)
  sign_key     %s
  account_id   %s   (capture mode manual)
  sign_key     %s

`, demo.APIURL, demo.TemporalUIURL, tp.HostPort(), cfg.Connectors.AcquirerURL, cfg.Connectors.SimBankURL, cfg.Payouts.RailURL, redactURL(pgURL), demo.MetricsURL, demo.APIMetricsURL, demo.ConsoleURL,
		filepath.Join(*dataDir, "dev.env"), filepath.Join(*dataDir, "demo-merchant.json"), demo.MerchantID, demo.AccountID, demo.SignKey, demo.ManualAccountID, demo.ManualSignKey)
	fmt.Fprintf(stdout, "Console logins (%s):\n", demo.ConsoleURL)
	for _, u := range demo.ConsoleUsers {
		fmt.Fprintf(stdout, "  %-9s %-28s %s\n", u.Role, u.Email, u.Password)
	}
	fmt.Fprintln(stdout)

	select {
	case <-ctx.Done():
	case err := <-children.exited():
		return err
	}
	fmt.Fprintln(stdout, "stopping...")
	return nil
}

// devDatabase finds or starts Postgres and makes sure the database exists.
func devDatabase(ctx context.Context, databaseURL, dataDir, name string, logger *slog.Logger) (string, func(), error) {
	pg, err := devenv.EnsurePostgres(ctx, devenv.PostgresOptions{DataDir: filepath.Join(dataDir, "postgres")}, logger)
	if err != nil {
		return "", nil, err
	}
	stop := func() {
		if err := pg.Stop(); err != nil {
			logger.Warn("stop postgres", "error", err)
		}
	}
	if databaseURL != "" {
		return databaseURL, stop, nil
	}
	if err := devenv.CreateDatabase(ctx, pg.AdminURL, name); err != nil {
		stop()
		return "", nil, err
	}
	return pg.DatabaseURL(name), stop, nil
}

func loadDevSecrets(path string) (devSecrets, error) {
	var s devSecrets
	b, err := os.ReadFile(path)
	if err == nil {
		if err := json.Unmarshal(b, &s); err != nil {
			return s, fmt.Errorf("%s: %w", path, err)
		}
		if s.Database == "" {
			s.Database = "paygate"
		}
		return s, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return s, err
	}
	if s.Keyring, err = keyring.GenerateSpec("dev1"); err != nil {
		return s, err
	}
	fp := make([]byte, 32)
	if _, err := rand.Read(fp); err != nil {
		return s, err
	}
	s.FingerprintKey = base64.StdEncoding.EncodeToString(fp)
	suffix := make([]byte, 4)
	if _, err := rand.Read(suffix); err != nil {
		return s, err
	}
	s.Database = "paygate_" + hex.EncodeToString(suffix)
	return s, writeJSON(path, s, 0o600)
}

func ensureDemoMerchant(ctx context.Context, accounts *merchant.Service) (demoFile, error) {
	auto, err := ensureDemoAccount(ctx, accounts, demoAccountID, "Demo Shop web", models.CaptureAuto)
	if err != nil {
		return demoFile{}, err
	}
	manual, err := ensureDemoAccount(ctx, accounts, demoManualAccountID, "Demo Shop manual capture", models.CaptureManual)
	if err != nil {
		return demoFile{}, err
	}
	return demoFile{MerchantID: demoMerchantID, AccountID: auto.AccountID, SignKey: auto.SignKey,
		ManualAccountID: manual.AccountID, ManualSignKey: manual.SignKey}, nil
}

func ensureDemoAccount(ctx context.Context, accounts *merchant.Service, accountID, name, captureMode string) (merchant.Credentials, error) {
	a, err := accounts.Load(ctx, demoMerchantID, accountID)
	if err == nil {
		// Demo accounts made before accounts had a mode become test ones.
		if a.Mode != testmode.Test {
			if err := accounts.SetMode(ctx, demoMerchantID, accountID, testmode.Test); err != nil {
				return merchant.Credentials{}, err
			}
		}
		return merchant.Credentials{MerchantID: a.MerchantID, AccountID: a.ID, SignKey: a.SignKey()}, nil
	}
	if !errors.Is(err, merchant.ErrUnknownAccount) {
		return merchant.Credentials{}, err
	}
	return accounts.Create(ctx, merchant.NewAccount{
		MerchantID:      demoMerchantID,
		MerchantName:    "Demo Shop",
		AccountID:       accountID,
		AccountName:     name,
		CaptureMode:     captureMode,
		AllowedQueryIPs: []string{"127.0.0.1", "::1"},
		Currencies:      []string{"USD", "EUR", "GBP", "JPY", "BRL"},
		AmountLimits:    map[string]int64{"USD": 1_000_000, "EUR": 1_000_000, "GBP": 1_000_000},
		Mode:            testmode.Test,
	})
}

func writeJSON(path string, v any, perm os.FileMode) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), perm); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// redactURL hides a password in a database URL before it is printed.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unprintable URL)"
	}
	return u.Redacted()
}
