// Package integration drives the whole gateway over HTTP: a real Temporal dev
// server, a real Postgres, the real acquirer simulators on loopback (the
// first one and sim-bank), the worker and the API, all started by TestMain.
package integration

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/paygate/paygate/app"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/dev/devenv"
	"github.com/paygate/paygate/internal/dev/railsim"
	"github.com/paygate/paygate/internal/dev/simbank"
	"github.com/paygate/paygate/internal/dev/simulator"
	"github.com/paygate/paygate/internal/domain/keyring"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/internal/domain/routing"
	"github.com/paygate/paygate/internal/domain/testmode"
	"github.com/paygate/paygate/models"
)

// env is the running stack the tests share.
var env struct {
	spans    *spanWatch
	cfg      app.Config
	gw       *app.Gateway
	api      *httptest.Server
	sim      *simulator.Server
	simHTTP  *httptest.Server
	bank     *simbank.Server // the second simulated acquirer (connector sim-bank)
	bankHTTP *httptest.Server
	rail     *railsim.Server // the simulated payout rail: test accounts' payouts
	railHTTP *httptest.Server
	// liveRail stands for a real rail, where live accounts' payouts go
	// (RAIL_URL); no test account's payout may reach it.
	liveRail     *railsim.Server
	liveRailHTTP *httptest.Server
	temporal     client.Client
	worker       sdkworker.Worker
	ui           *testUI // the Temporal Web UI and the codec endpoint it decodes with
	logs         *syncBuffer
	sink         *httptest.Server     // a merchant's notify_url that acknowledges everything
	auto         merchant.Credentials // capture mode auto, USD limit 10,000.00
	manual       merchant.Credentials // capture mode manual
}

// syncBuffer collects every log line of the gateway so tests can search it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Simulator timing: the timeout card's answer is held back far longer than
// the gateway waits for it.
const (
	acquirerTimeout  = 1 * time.Second
	simTimeoutDelay  = 4 * time.Second
	simSettleDelay   = 200 * time.Millisecond
	integrationLimit = 1_000_000 // 10,000.00 USD
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx := context.Background()
	env.logs = &syncBuffer{}
	logger := slog.New(slog.NewJSONHandler(env.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	setupLog := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	root, err := filepath.Abs("..")
	if err != nil {
		return fail(err)
	}
	pg, err := devenv.EnsurePostgres(ctx, devenv.PostgresOptions{DataDir: filepath.Join(root, ".data", "postgres")}, setupLog)
	if err != nil {
		return fail(err)
	}
	defer pg.Stop()
	// The API's address goes into the Temporal UI's codec endpoint, so its
	// listener is made before Temporal starts.
	env.api = httptest.NewUnstartedServer(nil)
	env.ui = newTestUI("http://" + env.api.Listener.Addr().String())
	temporalAddr, stopTemporal, err := startTestTemporal(ctx, root, pg, setupLog, env.ui)
	if err != nil {
		return fail(err)
	}
	defer stopTemporal()
	dbName := "paygate_it_" + randomHex(6)
	if err := devenv.CreateDatabase(ctx, pg.AdminURL, dbName); err != nil {
		return fail(err)
	}
	defer devenv.DropDatabase(context.Background(), pg.AdminURL, dbName)

	env.sim = simulator.NewServer(simulator.Options{TimeoutDelay: simTimeoutDelay, SettleDelay: simSettleDelay, Logger: logger, EnableFaults: true,
		Secret: app.DefaultProviderSecret, DisputeAfter: simDisputeAfter,
		DisputeCallbackURL: "http://" + env.api.Listener.Addr().String() + "/v1/disputes/callback"})
	defer env.sim.Close()
	env.simHTTP = httptest.NewServer(env.sim.Handler())
	defer env.simHTTP.Close()
	env.bank = simbank.NewServer(simbank.Options{TimeoutDelay: simTimeoutDelay, SettleDelay: simSettleDelay, Logger: logger})
	defer env.bank.Close()
	env.bankHTTP = httptest.NewServer(env.bank.Handler())
	defer env.bankHTTP.Close()
	railDir, err := os.MkdirTemp("", "paygate-rail-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(railDir)
	// The rails tell the API when a transfer moves, as under make run.
	railCallback := "http://" + env.api.Listener.Addr().String() + "/v1/payout/rail-callback"
	env.rail, err = railsim.NewServer(railsim.Options{Logger: logger, DataPath: filepath.Join(railDir, "rail.jsonl"),
		SettleDelay: 50 * time.Millisecond, CallbackURL: railCallback, Secret: railCallbackSecret})
	if err != nil {
		return fail(err)
	}
	defer env.rail.Close()
	env.railHTTP = httptest.NewServer(env.rail.Handler())
	defer env.railHTTP.Close()
	env.liveRail, err = railsim.NewServer(railsim.Options{Logger: logger, DataPath: filepath.Join(railDir, "live-rail.jsonl"),
		SettleDelay: 50 * time.Millisecond, CallbackURL: railCallback, Secret: railCallbackSecret})
	if err != nil {
		return fail(err)
	}
	defer env.liveRail.Close()
	env.liveRailHTTP = httptest.NewServer(env.liveRail.Handler())
	defer env.liveRailHTTP.Close()
	env.sink = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer env.sink.Close()

	spec, err := keyring.GenerateSpec("k1")
	if err != nil {
		return fail(err)
	}
	fp := make([]byte, 32)
	_, _ = rand.Read(fp)
	cfg := app.Config{
		DatabaseURL:       pg.DatabaseURL(dbName),
		TemporalAddress:   temporalAddr,
		TemporalNamespace: "default",
		Keyring:           spec,
		FingerprintKey:    base64.StdEncoding.EncodeToString(fp),
		Connectors: app.ConnectorsConfig{
			Names:           []string{"sim-acquirer", "sim-bank"},
			AcquirerURL:     env.simHTTP.URL,
			AcquirerTimeout: acquirerTimeout,
			SimBankURL:      env.bankHTTP.URL,
			ProviderSecret:  app.DefaultProviderSecret,
			// The tests share one worker and provoke failures on
			// purpose (timeouts, 503s); no breaker may open on them and
			// move a routed test's payment. The breakers are tested on
			// their own and in the fault suite.
			Breaker: routing.BreakerConfig{Window: time.Minute, Size: 20, MinFailures: 1 << 30, FailureRatio: 1, Pause: time.Second},
		},
		NodeName: "integration",
		// Receivers run on loopback; retries are quick so tests see them.
		NotifyAllowPrivate:        true,
		SubscriptionTestIntervals: true,
		NotifySchedule:            notify.Schedule{Initial: 100 * time.Millisecond, Max: time.Second, Horizon: time.Minute},
		Payouts: app.PayoutsConfig{RailURL: env.liveRailHTTP.URL, TestRailURL: env.railHTTP.URL,
			RailCallbackSecret: railCallbackSecret},
		Edge: app.EdgeConfig{
			AdminToken: adminToken,
			Codec:      app.CodecConfig{Token: env.ui.token, CORSOrigins: []string{env.ui.url}},
		},
	}
	env.cfg = cfg
	// As in production, the schema comes from the migrations, applied
	// before the gateway opens the database.
	if _, err := app.Migrate(ctx, cfg.DatabaseURL, logger); err != nil {
		return fail(err)
	}
	// Spans of the traces a test watches are kept (tracing_test.go); the
	// gateway's tracing interceptor is made at Open, so this comes first.
	env.spans = newSpanWatch()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(env.spans)))
	otel.SetTextMapPropagator(propagation.TraceContext{})
	env.gw, err = app.Open(ctx, cfg, logger, true)
	if err != nil {
		return fail(err)
	}
	defer env.gw.Close()
	env.temporal = env.gw.Temporal
	env.worker, err = env.gw.NewWorker()
	if err != nil {
		return fail(err)
	}
	if err := env.worker.Start(); err != nil {
		return fail(err)
	}
	defer env.worker.Stop()
	// The API's own address goes into 3-D Secure and APM callbacks, so it
	// is known before the handler is made.
	env.gw.Config.Edge.PublicURL = "http://" + env.api.Listener.Addr().String()
	env.api.Config.Handler = env.gw.APIHandler()
	env.api.Start()
	defer env.api.Close()

	env.auto, err = env.gw.Accounts.Create(ctx, merchant.NewAccount{Mode: testmode.Test,
		MerchantID: "10086", AccountID: "10086001", CaptureMode: models.CaptureAuto,
		AllowedQueryIPs: []string{"127.0.0.1"}, Currencies: []string{"USD", "EUR", "JPY"},
		AmountLimits: map[string]int64{"USD": integrationLimit}, Risk: quietRisk,
	})
	if err != nil {
		return fail(err)
	}
	env.manual, err = env.gw.Accounts.Create(ctx, merchant.NewAccount{Mode: testmode.Test,
		MerchantID: "10086", AccountID: "10086002", CaptureMode: models.CaptureManual,
		AllowedQueryIPs: []string{"127.0.0.1"}, Currencies: []string{"USD", "EUR"}, Risk: quietRisk,
	})
	if err != nil {
		return fail(err)
	}
	code := m.Run()
	if err := afterTheTests(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "integration: after the tests:", err)
		code = 1
	}
	if code != 0 {
		// The gateway's own log explains most failures; show its errors.
		for _, line := range strings.Split(env.logs.String(), "\n") {
			if strings.Contains(line, `"level":"ERROR"`) || strings.Contains(line, `"level":"WARN"`) {
				fmt.Fprintln(os.Stderr, line)
			}
		}
	}
	return code
}

// mayFail lists the workflow ids of executions tests make fail on purpose.
// There are none: a workflow must never end failed, whatever the data.
var mayFail = map[string]bool{}

// settleWait bounds how long afterTheTests waits for orders still in flight.
const settleWait = 15 * time.Second

// afterTheTests checks what must hold once every test has run: no workflow
// execution ended failed (unless listed in mayFail), and no vault entry
// still holds a sealed CVV that no order may need (one of an order past its
// authorisation, or of a card no order uses), and no sampled workflow
// history holds a test shopper's data in the clear (historyLeaks). The
// sweep is not run first: production runs no sweep on its own (it is the
// `paygate vault sweep` command), so the orders' own paths must have
// dropped every CVV. Orders still in flight get up to settleWait to settle.
func afterTheTests(ctx context.Context) error {
	var problems []string
	deadline := time.Now().Add(settleWait)
	for {
		tokens, err := env.gw.Vault.StrayCVVs(ctx, 0)
		if err != nil {
			return err
		}
		if len(tokens) == 0 {
			break
		}
		if time.Now().After(deadline) {
			for _, tok := range tokens {
				var orders []models.Order
				if err := env.gw.DB.WithContext(ctx).Where("card_token = ?", tok).Find(&orders).Error; err != nil {
					return err
				}
				what := "no order uses it"
				for _, o := range orders {
					what = fmt.Sprintf("order %s (%s) is %d %s", o.TransactionID, o.OrderNo, o.PaymentStatus, o.ResultCode)
				}
				problems = append(problems, fmt.Sprintf("vault entry %s still holds a sealed CVV: %s", tok, what))
			}
			break
		}
		time.Sleep(250 * time.Millisecond)
	}

	// Visibility records follow the executions with a short lag.
	time.Sleep(time.Second)
	var token []byte
	for {
		page, err := env.temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: env.cfg.TemporalNamespace, Query: `ExecutionStatus="Failed"`, NextPageToken: token,
		})
		if err != nil {
			return fmt.Errorf("list failed workflows: %w", err)
		}
		for _, e := range page.GetExecutions() {
			id := e.GetExecution().GetWorkflowId()
			if !mayFail[id] {
				problems = append(problems, fmt.Sprintf("workflow %s (%s, run %s) failed", id, e.GetType().GetName(), e.GetExecution().GetRunId()))
			}
		}
		if token = page.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	// No shopper's data in the clear in the histories (encrypted_histories_test.go).
	leaks, err := historyLeaks(ctx)
	if err != nil {
		return err
	}
	problems = append(problems, leaks...)
	// Nor in the database, where shoppers' data is sealed (personaldata_test.go).
	dbLeaks, err := databaseLeaks(ctx)
	if err != nil {
		return err
	}
	problems = append(problems, dbLeaks...)
	if len(problems) > 0 {
		return fmt.Errorf("%d problems:\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
	return nil
}

// quietRisk turns off the rules that the shared accounts' many similar test
// orders would trip (velocity, US cards billed in GB); risk_test.go covers them.
var quietRisk = risk.Config{
	CardVelocity:         risk.Velocity{Score: risk.Off},
	EmailVelocity:        risk.Velocity{Score: risk.Off},
	IPVelocity:           risk.Velocity{Score: risk.Off},
	CountryMismatchScore: risk.Off,
}

// adminToken authenticates the tests' calls to the admin API.
const adminToken = "integration-admin-token"

// railCallbackSecret signs the simulated rails' callbacks.
const railCallbackSecret = "integration-rail-callback-secret"

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "integration setup:", err)
	return 1
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
