// Package chaos runs the gateway as separate processes on loopback, drives
// signed traffic at it while it breaks its parts one at a time and then
// together, and checks afterwards that no money moved wrongly and nothing
// was lost. `make chaos` runs the full suite; `make test` a short one.
package chaos

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paygate/paygate/app"
	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/dev/devenv"
	"github.com/paygate/paygate/internal/dev/ports"
	"github.com/paygate/paygate/internal/dev/railsim"
	"github.com/paygate/paygate/internal/dev/simbank"
	"github.com/paygate/paygate/internal/dev/simulator"
	"github.com/paygate/paygate/internal/domain/keyring"
	"github.com/paygate/paygate/internal/domain/risk"
	"github.com/paygate/paygate/internal/domain/routing"
	"github.com/paygate/paygate/internal/domain/testmode"
	"github.com/paygate/paygate/models"
)

// Options configures a Stack.
type Options struct {
	// Root is the repository's root: the temporal CLI is in Root/.bin.
	Root string
	// Bin is a built paygate binary.
	Bin string
	// Dir holds the stack's data (Postgres cluster, Temporal's file, the
	// simulator's store); it must be searchable by the postgres OS user.
	Dir string
	// Log receives the processes' output; nil discards it.
	Log io.Writer
	// IgnoreIdempotency makes the acquirer simulator charge again on a
	// repeated idempotency key: only to prove the checks see a double charge.
	IgnoreIdempotency bool
	// Logf reports progress.
	Logf func(format string, args ...any)
	// APIs and Workers are how many API and worker processes run; default
	// one each. The faults break the first of each.
	APIs, Workers int
	// TemporalOnPostgres runs the Temporal server on the private Postgres
	// instead of the dev server on its file.
	TemporalOnPostgres bool
}

// temporalServer is a running Temporal server of either kind.
type temporalServer interface {
	HostPort() string
	Stop() error
}

// Simulator timing: the timeout card is held past the gateway's acquirer
// timeout; the slow card answers within it, late enough that a worker
// killed at a random moment is often killed mid-charge.
const (
	acquirerTimeout = 2 * time.Second
	simTimeoutDelay = 5 * time.Second
	simSlowDelay    = 1500 * time.Millisecond
	simSettleDelay  = 300 * time.Millisecond
)

// Stack is the gateway and its dependencies, each of which can be broken.
type Stack struct {
	opts Options

	pgOpts devenv.PostgresOptions
	pgMu   sync.Mutex
	pg     *devenv.Postgres
	dbURL  string
	// startTemporal starts the Temporal server on its data and ports:
	// the dev server on its file, or the server on the private Postgres.
	startTemporal func(ctx context.Context) (temporalServer, error)
	tMu           sync.Mutex
	tsrv          temporalServer
	simMu         sync.Mutex
	sim           *simulator.Server
	simHTTP       *http.Server
	simAddr       string
	simData       string
	simSecret     string
	api           *proc
	worker        *proc
	apis          []*proc
	workers       []*proc
	apiURLs       []string
	// disputeCallback is where the acquirer simulator tells of disputes.
	disputeCallback string
	// verdict is what a failed test says last (the seed, the report).
	verdict []string
	next    atomic.Uint64

	// DB reads the record for the checks.
	DB       *app.Gateway
	Receiver *Receiver
	recvSrv  *http.Server
	recvAddr string
	// Auto and Manual are the accounts traffic goes to: automatic and
	// manual capture. Payer is the account payouts are paid from.
	Auto, Manual, Payer merchant.Credentials

	// ports and temporalPorts hold the addresses of what restarts.
	ports, temporalPorts *ports.Reservation

	rail     *railsim.Server
	railHTTP *http.Server
	railAddr string

	// Routed is the account whose orders are routed over both acquirers:
	// sim-acquirer first, sim-bank next (the suite's faults break only
	// sim-acquirer).
	Routed   merchant.Credentials
	bank     *simbank.Server
	bankHTTP *http.Server
	bankAddr string
}

// Start brings the whole stack up: a private Postgres cluster, a Temporal
// dev server on a file, the acquirer simulator with its store, the second
// simulated acquirer, a notification receiver, the schema, the accounts
// (one routed over both acquirers), one API and one worker process.
func Start(ctx context.Context, opts Options) (*Stack, error) {
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	s := &Stack{opts: opts}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	opts.APIs, opts.Workers = max(opts.APIs, 1), max(opts.Workers, 1)
	// Every server the suite restarts comes back on its address, so its
	// port is held for the stack's life (package ports).
	held, err := ports.Reserve(4 + opts.APIs)
	if err != nil {
		return nil, err
	}
	s.ports = held
	port := held.Ports()
	quiet := slog.New(slog.NewTextHandler(opts.Log, &slog.HandlerOptions{Level: slog.LevelWarn}))

	s.pgOpts = devenv.PostgresOptions{DataDir: filepath.Join(opts.Dir, "postgres"), Port: port[0]}
	if s.pg, err = devenv.StartPrivatePostgres(ctx, s.pgOpts, quiet); err != nil {
		return nil, fmt.Errorf("private postgres: %w", err)
	}
	if err := devenv.CreateDatabase(ctx, s.pg.AdminURL, "paygate"); err != nil {
		return nil, err
	}
	s.dbURL = s.pg.DatabaseURL("paygate")

	if opts.TemporalOnPostgres {
		// The production shape: Temporal's persistence on the same
		// (private) Postgres, so restarting Postgres stops both.
		bins, err := devenv.EnsurePostgresTemporalBinaries(ctx, filepath.Join(opts.Root, ".bin"), quiet)
		if err != nil {
			return nil, fmt.Errorf("temporal on postgres: %w", err)
		}
		if s.temporalPorts, err = devenv.ReservePostgresTemporalPorts(); err != nil {
			return nil, err
		}
		base := s.temporalPorts.Port(0)
		pgOpts := devenv.PostgresTemporalOptions{DatabaseURL: s.pg.AdminURL, Database: "temporal", Port: base, UIPort: base + 50,
			ConfigDir: filepath.Join(opts.Dir, "temporal-postgres"), LogFile: filepath.Join(opts.Dir, "temporal.log")}
		s.startTemporal = func(ctx context.Context) (temporalServer, error) {
			return devenv.StartTemporalOnPostgres(ctx, bins, pgOpts, nil)
		}
	} else {
		tOpts := devenv.TemporalOptions{
			Binary: filepath.Join(opts.Root, ".bin", "temporal"), DBFile: filepath.Join(opts.Dir, "temporal.db"),
			Port: port[1], UIPort: port[2], LogFile: filepath.Join(opts.Dir, "temporal.log"),
		}
		s.startTemporal = func(ctx context.Context) (temporalServer, error) { return devenv.StartTemporal(ctx, tOpts, nil) }
	}
	if s.tsrv, err = s.startTemporal(ctx); err != nil {
		return nil, fmt.Errorf("temporal: %w", err)
	}

	secret := randomHex(16)
	s.simAddr = held.Addr(3)
	s.simData = filepath.Join(opts.Dir, "acquirer.jsonl")
	s.simSecret = secret
	s.disputeCallback = "http://" + held.Addr(4) + "/v1/disputes/callback"
	if err := s.startSimulator(secret); err != nil {
		return nil, err
	}

	// The payout rail keeps its transfers in a file, as the acquirer does.
	if s.rail, err = railsim.NewServer(railsim.Options{DataPath: filepath.Join(opts.Dir, "rail.jsonl"), SettleDelay: 300 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(opts.Log, &slog.HandlerOptions{Level: slog.LevelWarn}))}); err != nil {
		return nil, fmt.Errorf("rail simulator: %w", err)
	}
	railLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.railAddr = railLn.Addr().String()
	s.railHTTP = &http.Server{Handler: s.rail.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.railHTTP.Serve(railLn) }()

	// The second acquirer, which routed orders go on to.
	s.bank = simbank.NewServer(simbank.Options{TimeoutDelay: simTimeoutDelay, SettleDelay: simSettleDelay,
		Logger: slog.New(slog.NewTextHandler(opts.Log, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	bankLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.bankAddr = bankLn.Addr().String()
	s.bankHTTP = &http.Server{Handler: s.bank.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.bankHTTP.Serve(bankLn) }()

	s.Receiver = NewReceiver(0.3)
	recvLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.recvAddr = recvLn.Addr().String()
	s.recvSrv = &http.Server{Handler: s.Receiver, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.recvSrv.Serve(recvLn) }()

	spec, err := keyring.GenerateSpec("k1")
	if err != nil {
		return nil, err
	}
	fp := make([]byte, 32)
	_, _ = rand.Read(fp)
	cfg := app.Config{DatabaseURL: s.dbURL, Keyring: spec, FingerprintKey: base64.StdEncoding.EncodeToString(fp)}
	if _, err := app.Migrate(ctx, s.dbURL, quiet); err != nil {
		return nil, err
	}
	if s.DB, err = app.Open(ctx, cfg, quiet, false); err != nil {
		return nil, err
	}
	// Velocity rules would hold the suite's repeated test cards for review.
	quietRisk := risk.Config{
		CardVelocity: risk.Velocity{Score: risk.Off}, EmailVelocity: risk.Velocity{Score: risk.Off},
		IPVelocity: risk.Velocity{Score: risk.Off}, CountryMismatchScore: risk.Off,
	}
	for _, a := range []struct {
		dst  *merchant.Credentials
		id   string
		mode string
	}{{&s.Auto, "70001001", models.CaptureAuto}, {&s.Manual, "70001002", models.CaptureManual}, {&s.Payer, "70001003", models.CaptureAuto},
		{&s.Routed, "70001004", models.CaptureAuto}} {
		if *a.dst, err = s.DB.Accounts.Create(ctx, merchant.NewAccount{Mode: testmode.Test,
			MerchantID: "70001", AccountID: a.id, CaptureMode: a.mode, AllowedQueryIPs: []string{"127.0.0.1"},
			Currencies: []string{"USD"}, Risk: quietRisk,
		}); err != nil {
			return nil, err
		}
	}

	routed := routing.Rules{Routes: []routing.Route{{Name: "cards", Targets: []routing.Target{{Connector: "sim-acquirer"}, {Connector: "sim-bank"}}}}}
	if err := s.DB.Accounts.SetRouting(ctx, s.Routed.MerchantID, s.Routed.AccountID, routed, []string{"sim-acquirer", "sim-bank"}); err != nil {
		return nil, err
	}

	// Payouts draw on a deposit that never runs dry in a run.
	if _, err := ledger.New(s.DB.DB).TopUp(ctx, ledger.TopUp{Reference: "chaos/topup", MerchantID: s.Payer.MerchantID,
		AccountID: s.Payer.AccountID, Currency: "USD", Amount: 100_000_000}); err != nil {
		return nil, err
	}
	env := []string{
		"DATABASE_URL=" + s.dbURL, "TEMPORAL_ADDRESS=" + s.tsrv.HostPort(),
		"PAYGATE_KEYRING=" + spec, "PAYGATE_FINGERPRINT_KEY=" + cfg.FingerprintKey,
		"PAYGATE_PROVIDER_SECRET=" + secret, "PAYGATE_ADMIN_TOKEN=" + randomHex(32),
		"ACQUIRER_URL=http://" + s.simAddr, "ACQUIRER_TIMEOUT=" + acquirerTimeout.String(),
		"PAYGATE_CONNECTORS=sim-acquirer,sim-bank", "SIMBANK_URL=http://" + s.bankAddr,
		"PAYGATE_NOTIFY_ALLOW_PRIVATE=true", "PAYGATE_NOTIFY_SCHEDULE=initial=200ms,max=2s,horizon=30m",
		// The payer is a test account: its payouts go to the simulated
		// rail, here the only one.
		"RAIL_URL=http://" + s.railAddr, "TEST_RAIL_URL=http://" + s.railAddr,
		"PAYGATE_VAULT_SWEEP_EVERY=0",
	}
	for i := range opts.Workers {
		w := &proc{name: "worker " + strconv.Itoa(i+1), bin: opts.Bin, args: []string{"worker"}, env: env, readyLog: "worker started", log: opts.Log}
		if err := w.start(ctx); err != nil {
			return nil, err
		}
		s.workers = append(s.workers, w)
	}
	for i := range opts.APIs {
		u := "http://" + held.Addr(4+i)
		// Each API is its own public URL: 3-D Secure and APM returns come
		// back to the process that sent the shopper away.
		apiEnv := append(slices.Clone(env), "PAYGATE_HTTP_ADDR="+held.Addr(4+i), "PAYGATE_PUBLIC_URL="+u)
		a := &proc{name: "api " + strconv.Itoa(i+1), bin: opts.Bin, args: []string{"serve"}, env: apiEnv, ready: u + "/healthz", log: opts.Log}
		if err := a.start(ctx); err != nil {
			return nil, err
		}
		s.apis = append(s.apis, a)
		s.apiURLs = append(s.apiURLs, u)
	}
	s.api, s.worker = s.apis[0], s.workers[0]
	ok = true
	return s, nil
}

// APIURL is an API's base URL, each in turn.
func (s *Stack) APIURL() string { return s.apiURLs[s.next.Add(1)%uint64(len(s.apiURLs))] }

// NotifyURL is where the orders' notifications go.
func (s *Stack) NotifyURL() string { return "http://" + s.recvAddr + "/notify" }

func (s *Stack) startSimulator(secret string) error {
	sim, err := simulator.Open(simulator.Options{
		DataPath: s.simData, Secret: secret, TimeoutDelay: simTimeoutDelay, SettleDelay: simSettleDelay,
		SlowCardDelay: simSlowDelay, EnableFaults: true, IgnoreIdempotency: s.opts.IgnoreIdempotency,
		// The dispute card's captures are disputed a second later, through
		// the first API (whose address is held for the stack).
		DisputeAfter: time.Second, DisputeCallbackURL: s.disputeCallback,
		Logger: slog.New(slog.NewTextHandler(s.opts.Log, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return fmt.Errorf("acquirer simulator: %w", err)
	}
	// The port is held for the stack (Start), and the simulator it
	// replaces closed its listener before it returned.
	ln, err := net.Listen("tcp", s.simAddr)
	if err != nil {
		sim.Close()
		return fmt.Errorf("acquirer simulator: %w", err)
	}
	srv := &http.Server{Handler: sim.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	s.simMu.Lock()
	s.sim, s.simHTTP = sim, srv
	s.simMu.Unlock()
	return nil
}

// Simulator is the running acquirer simulator.
func (s *Stack) Simulator() *simulator.Server {
	s.simMu.Lock()
	defer s.simMu.Unlock()
	return s.sim
}

// SimulatorURL is the acquirer simulator's base URL.
func (s *Stack) SimulatorURL() string { return "http://" + s.simAddr }

// Close stops everything the stack started.
func (s *Stack) Close() {
	for _, p := range append(slices.Clone(s.apis), s.workers...) {
		p.stop()
	}
	if s.recvSrv != nil {
		_ = s.recvSrv.Close()
	}
	s.simMu.Lock()
	if s.simHTTP != nil {
		_ = s.simHTTP.Close()
		s.sim.Close()
	}
	s.simMu.Unlock()
	if s.railHTTP != nil {
		_ = s.railHTTP.Close()
		_ = s.rail.Close()
	}
	if s.bankHTTP != nil {
		_ = s.bankHTTP.Close()
		s.bank.Close()
	}
	if s.DB != nil {
		s.DB.Close()
	}
	s.tMu.Lock()
	if s.tsrv != nil {
		_ = s.tsrv.Stop()
	}
	s.tMu.Unlock()
	s.pgMu.Lock()
	if s.pg != nil {
		_ = s.pg.Stop()
	}
	s.pgMu.Unlock()
	s.temporalPorts.Release()
	s.ports.Release()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Dir is the directory of the stack's data and its processes' log
// (stack.log).
func (s *Stack) Dir() string { return s.opts.Dir }
