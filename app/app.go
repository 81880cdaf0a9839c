// Package app wires the gateway's parts from configuration: the database,
// Temporal, the vault, the API handler and the worker. The commands and the
// integration tests build the gateway the same way through it.
package app

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"
	"google.golang.org/grpc"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/admin"
	"github.com/paygate/paygate/api/console"
	"github.com/paygate/paygate/api/disputes"
	"github.com/paygate/paygate/api/flows"
	"github.com/paygate/paygate/api/methods"
	"github.com/paygate/paygate/api/operations"
	"github.com/paygate/paygate/api/payments"
	"github.com/paygate/paygate/api/payouts"
	"github.com/paygate/paygate/api/queries"
	"github.com/paygate/paygate/api/subscriptions"
	"github.com/paygate/paygate/internal/adapters/connectors"
	"github.com/paygate/paygate/internal/adapters/connectors/stripe"
	"github.com/paygate/paygate/internal/adapters/erasure"
	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/adapters/localanswer"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/adapters/notifyclient"
	"github.com/paygate/paygate/internal/adapters/reconcile"
	"github.com/paygate/paygate/internal/adapters/redeliver"
	"github.com/paygate/paygate/internal/adapters/replay"
	"github.com/paygate/paygate/internal/adapters/telemetry"
	"github.com/paygate/paygate/internal/adapters/vault"
	"github.com/paygate/paygate/internal/domain/keyring"
	"github.com/paygate/paygate/internal/domain/routing"
	"github.com/paygate/paygate/internal/domain/txid"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/worker"
	"github.com/paygate/paygate/workflows"
)

// Gateway holds the opened clients.
type Gateway struct {
	Config   Config
	Logger   *slog.Logger
	DB       *models.DB
	Keys     *keyring.Keyring
	Vault    *vault.Vault
	Accounts *merchant.Service
	Temporal client.Client
	// Metrics are the process's Prometheus metrics, the Temporal SDK's
	// among them (served by cmd/paygate on Config.Telemetry.MetricsAddr).
	Metrics *telemetry.Metrics

	ids *txid.Generator // on the leased node
	// answers is where the worker's local activity leaves each answer of a
	// payment the API of this process started eagerly on it, and eager says
	// whether the API does (EagerWorker).
	answers *localanswer.Board
	eager   bool

	connectorsOnce sync.Once
	connectors     *ConnectorSet
	connectorsErr  error
	healthOnce     sync.Once
	health         *connectors.Health
	stopLease      context.CancelFunc
	leaseDone      chan struct{}
	stopBreakers   context.CancelFunc
	breakersDone   chan struct{}
}

// Open connects to Postgres (and checks that its schema is at this
// binary's version, see Migrate) and, when withTemporal is set
// (a gateway process rather than a one-off command), to Temporal (and
// registers the search attributes) and takes the process's transaction-id
// node: the configured one or a free one, leased in Postgres and renewed
// until Close.
func Open(ctx context.Context, cfg Config, logger *slog.Logger, withTemporal bool) (*Gateway, error) {
	if cfg.DatabaseURL == "" {
		return nil, errors.New("DATABASE_URL is not set")
	}
	keys, err := cfg.keyring()
	if err != nil {
		return nil, fmt.Errorf("PAYGATE_KEYRING: %w", err)
	}
	fpKey, err := base64.StdEncoding.DecodeString(cfg.FingerprintKey)
	if err != nil || len(fpKey) < 32 {
		return nil, errors.New("PAYGATE_FINGERPRINT_KEY must be at least 32 bytes in standard base64")
	}
	// The gateway's processes wait for Postgres; a one-off command says at
	// once that it is not there.
	wait := time.Duration(0)
	if withTemporal {
		wait = TemporalDialWait
	}
	db, err := openDatabase(ctx, cfg.DatabaseURL, wait, logger)
	if err != nil {
		return nil, err
	}
	// The schema is `paygate migrate`'s job (Migrate); a process that
	// finds another version refuses to start rather than race others
	// changing it.
	if err := checkSchema(ctx, db); err != nil {
		if sqlDB, derr := db.DB(); derr == nil {
			_ = sqlDB.Close()
		}
		return nil, err
	}
	// Shoppers' personal data is sealed with the keyring in every row
	// written through db, and searched by keyed hashes.
	if err := models.ProtectPersonalData(db, models.NewPersonalData(keys, shopperHashKey(cfg))); err != nil {
		if sqlDB, derr := db.DB(); derr == nil {
			_ = sqlDB.Close()
		}
		return nil, err
	}
	g := &Gateway{
		Config:   cfg,
		Logger:   logger,
		DB:       db,
		Keys:     keys,
		Vault:    vault.New(db, keys, fpKey),
		Accounts: merchant.NewService(db, keys, 5*time.Second),
		Metrics:  telemetry.New(db),
		answers:  localanswer.New(),
	}
	g.Accounts.TestConnector = cfg.TestConnector
	if withTemporal {
		if err := g.takeNode(ctx); err != nil {
			g.Close()
			return nil, err
		}
		// Payloads are encrypted (codec.go); the worker built on this
		// client uses the same converters.
		dc, fc, err := TemporalConverters(keys)
		if err != nil {
			g.Close()
			return nil, err
		}
		// Spans follow a payment from the API through its workflow to the
		// acquirer call; without an exporter they cost nothing.
		tracing, err := telemetry.TemporalInterceptor()
		if err != nil {
			g.Close()
			return nil, err
		}
		opts, err := clusterOptions(cfg, client.Options{
			HostPort:         cfg.TemporalAddress,
			Namespace:        cfg.TemporalNamespace,
			Identity:         cfg.TemporalIdentity,
			Logger:           sdklog.NewStructuredLogger(logger.With("component", "temporal")),
			DataConverter:    dc,
			FailureConverter: fc,
			MetricsHandler:   g.Metrics.TemporalHandler(),
			Interceptors:     []interceptor.ClientInterceptor{tracing},
			ConnectionOptions: client.ConnectionOptions{
				DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(flows.EagerInterceptor(g.answers))},
			},
		})
		if err != nil {
			g.Close()
			return nil, err
		}
		c, err := dialTemporal(ctx, opts, logger)
		if err != nil {
			g.Close()
			return nil, fmt.Errorf("dial temporal %s: %w", cfg.TemporalAddress, err)
		}
		g.Temporal = c
		if err := EnsureSearchAttributes(ctx, c, cfg.TemporalNamespace); err != nil {
			g.Close()
			return nil, err
		}
	}
	return g, nil
}

// TemporalDialWait is how long a starting process waits for Temporal (and
// Postgres) to answer: a worker restarted while the cluster restarts too
// comes up when it is back, instead of exiting for its supervisor to try
// again.
const TemporalDialWait = time.Minute

// retryFor calls try until it succeeds or wait has passed, with a pause
// that grows from 250 ms to 5 s, logging each failure as what is not
// reachable yet. A wait of zero tries once.
func retryFor[T any](ctx context.Context, wait time.Duration, what string, logger *slog.Logger, try func() (T, error)) (T, error) {
	deadline := time.Now().Add(wait)
	pause := 250 * time.Millisecond
	for {
		v, err := try()
		if err == nil || time.Now().Add(pause).After(deadline) || ctx.Err() != nil {
			return v, err
		}
		logger.Warn(what+" not reachable yet, trying again", "in", pause, "error", err)
		select {
		case <-ctx.Done():
			var zero T
			return zero, ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, 5*time.Second)
	}
}

// dialTemporal dials Temporal for up to TemporalDialWait.
func dialTemporal(ctx context.Context, opts client.Options, logger *slog.Logger) (client.Client, error) {
	return retryFor(ctx, TemporalDialWait, "temporal "+opts.HostPort, logger, func() (client.Client, error) {
		return client.DialContext(ctx, opts)
	})
}

// openDatabase opens Postgres for up to wait: a process restarted while
// Postgres restarts too comes up when it is back.
func openDatabase(ctx context.Context, url string, wait time.Duration, logger *slog.Logger) (*models.DB, error) {
	return retryFor(ctx, wait, "postgres", logger, func() (*models.DB, error) { return models.Open(ctx, url, logger) })
}

// OpenFromEnv opens the gateway (Open) with the configuration FromEnv
// reads: for the one-off commands, which need no secret check.
func OpenFromEnv(ctx context.Context, logger *slog.Logger, withTemporal bool) (*Gateway, error) {
	cfg, err := FromEnv()
	if err != nil {
		return nil, fmt.Errorf("configuration:\n%w", err)
	}
	return Open(ctx, cfg, logger, withTemporal)
}

// NodeLeaseGrace is how long a node stays unused after its lease ended: ids
// carry their process's wall-clock time, so the grace covers the clock
// skew between the hosts of the old and the new holder.
const NodeLeaseGrace = 5 * time.Second

// takeNode leases the process's transaction-id node and keeps the lease in
// the background until Close. A configured node that another process holds
// is waited for as long as that lease could still last (a restart right
// after a crash); then the error names the holder.
func (g *Gateway) takeNode(ctx context.Context) error {
	cfg := g.Config
	store := &models.NodeLeases{DB: g.DB, Holder: holderName(cfg.NodeName), Min: models.MinNode, Max: models.MaxNode, Grace: NodeLeaseGrace}
	if cfg.NodeID != nil {
		store.Min, store.Max = int(*cfg.NodeID), int(*cfg.NodeID)
	}
	ttl := cfg.NodeLeaseTTL
	if ttl <= 0 {
		ttl = txid.DefaultLeaseTTL
	}
	opts := txid.LeaseOptions{TTL: ttl, Logger: g.Logger.With("component", "txid")}
	lease, err := txid.AcquireLease(ctx, store, opts)
	if cfg.NodeID != nil {
		deadline := time.Now().Add(ttl + NodeLeaseGrace + time.Second)
		for errors.Is(err, models.ErrNoFreeNode) && time.Now().Before(deadline) {
			g.Logger.Warn("waiting for the configured transaction-id node", "node", *cfg.NodeID, "error", err)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(2 * time.Second):
			}
			lease, err = txid.AcquireLease(ctx, store, opts)
		}
		if err != nil {
			return fmt.Errorf("PAYGATE_NODE_ID=%d: %w", *cfg.NodeID, err)
		}
	}
	if err != nil {
		return fmt.Errorf("lease a transaction-id node: %w", err)
	}
	node, _ := lease.Node()
	g.Logger.Info("transaction-id node leased", "node", node, "holder", store.Holder, "configured", cfg.NodeID != nil)
	keepCtx, stop := context.WithCancel(context.Background())
	g.stopLease, g.leaseDone = stop, make(chan struct{})
	go func() {
		defer close(g.leaseDone)
		lease.Keep(keepCtx)
	}()
	g.ids = txid.NewLeasedGenerator(lease)
	return nil
}

// holderName makes name unique to this run of the process: host names and
// pids repeat across containers and restarts.
func holderName(name string) string {
	if name == "" {
		name = "paygate"
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error.
	return name + "/" + hex.EncodeToString(b)
}

// sessionKey signs hosted payment sessions; it is derived from the
// fingerprint key so no other secret needs managing.
func (g *Gateway) sessionKey() []byte { return g.derivedKey("paygate checkout sessions") }

// consoleSignInKey signs the console's sign-in form and trusted-browser
// cookies; derived from the fingerprint key, so every API process of a
// deployment shares it.
func (g *Gateway) consoleSignInKey() []byte { return g.derivedKey("paygate console sign-in") }

// derivedKey is a key of its own for label, derived from the fingerprint
// key, so that one secret serves every use without one use's key opening
// another's.
func (g *Gateway) derivedKey(label string) []byte { return derivedKey(g.Config, label) }

func derivedKey(cfg Config, label string) []byte {
	m := hmac.New(sha256.New, []byte(cfg.FingerprintKey))
	m.Write([]byte(label))
	return m.Sum(nil)
}

// shopperHashKey keys the hashes of shoppers' emails and addresses
// (models.PersonalData.Hash).
func shopperHashKey(cfg Config) []byte { return derivedKey(cfg, "paygate shopper hashes") }

// Close gives the node lease back and releases the clients.
func (g *Gateway) Close() {
	if g.stopLease != nil {
		g.stopLease()
		<-g.leaseDone
	}
	if g.stopBreakers != nil {
		g.stopBreakers()
		<-g.breakersDone
	}
	if g.Temporal != nil {
		g.Temporal.Close()
	}
	if sqlDB, err := g.DB.DB(); err == nil {
		_ = sqlDB.Close()
	}
}

// APIHandler returns the merchant API. The Gateway must have been opened
// with Temporal (and so holds a transaction-id node).
func (g *Gateway) APIHandler() http.Handler {
	orders := &flows.TemporalOrders{Client: g.Temporal}
	if g.eager {
		orders.Answers = g.answers
	}
	// Connectors that cannot be built (FromEnv has checked the addresses,
	// so only a hand-made Config gets here) leave callbacks and
	// POST /v1/optimise refused; every other operation goes on.
	var callbacks payments.CallbackReaders
	var offers api.ConnectorOffers
	settlements := map[string]reconcile.Connector{}
	if set, err := g.connectorSet(); err != nil {
		g.Logger.Error("connectors: every 3-D Secure and APM callback and every optimise request will be refused", "error", err)
	} else {
		callbacks, offers, settlements = set.Callbacks, set.Offers, set.Settlements
	}
	// The back office shares the API's address under /console; its ops
	// users are who may decode histories in the Temporal UI.
	cons := &console.Server{
		Records: models.ConsoleRecords{DB: g.DB}, Ledger: ledger.New(g.DB), Orders: orders, Reruns: g.PayoutReruns(), Redeliver: redeliver.New(g.Temporal, g.DB), Keys: g.Accounts,
		NotifySchedule: g.Config.NotifySchedule, TemporalUIURL: g.Config.Telemetry.TemporalUIURL, Namespace: g.Config.TemporalNamespace,
		SecureCookies: strings.HasPrefix(g.Config.Edge.PublicURL, "https://"), SignInKey: g.consoleSignInKey(),
		Recon:    &reconcile.Service{DB: g.DB, Ledger: ledger.New(g.DB), Connectors: settlements},
		Disputes: models.Records{DB: g.DB}, DisputeRateWarning: g.Config.DisputeRateWarning,
		Logger: g.Logger.With("component", "console"),
	}
	consoleHandler := cons.Handler()
	records := models.Records{DB: g.DB}
	replays := replay.New(g.DB)
	replays.Logger = g.Logger.With("component", "api")
	replays.Keys = g.Keys
	s := &api.Server{
		Accounts: g.Accounts,
		Offers:   offers,
		Records:  records,
		Replays:  replays,

		NotifySchedule: g.Config.NotifySchedule,
		PublicURL:      strings.TrimSuffix(g.Config.Edge.PublicURL, "/"),
		TrustedProxies: g.Config.Edge.TrustedProxies,
		SessionKey:     g.sessionKey(),
		IDs:            g.ids,
		FormOrigins:    formOrigins(g.Config), // The simulated ACS and APM pages live there.
		Logger:         g.Logger.With("component", "api"),

		Admin: &admin.API{Token: g.Config.Edge.AdminToken, Redeliver: redeliver.New(g.Temporal, g.DB), Schedule: g.Config.NotifySchedule,
			PayoutReruns: g.PayoutReruns(), Erasures: erasure.New(g.DB), Logger: g.Logger.With("component", "api")},
		Codec:   g.codecEndpoint(cons),
		Metrics: g.Metrics,
	}
	disputeFlows := &flows.TemporalDisputes{Client: g.Temporal, NotifySchedule: g.Config.NotifySchedule}
	payoutFlows := &flows.TemporalPayouts{Client: g.Temporal, RailCallbacks: g.Config.Payouts.RailCallbackSecret != "", Eager: g.eager}
	s.Capabilities = []api.Capability{
		&payments.Handler{Gate: s, Orders: orders, Shopper: orders, Vault: g.Vault, Callbacks: callbacks,
			TestIntervals: g.Config.SubscriptionTestIntervals, ForbidLiveSimulators: g.Config.Connectors.ForbidLiveSimulators,
			TestConnector: g.Config.TestConnector, Disputes: disputeFlows},
		operations.New(s, orders),
		&payouts.Handler{Gate: s, Starter: payoutFlows, Rail: payoutFlows, RailSecret: g.Config.Payouts.RailCallbackSecret},
		subscriptions.New(s, &flows.TemporalSubscriptions{Client: g.Temporal}),
		disputes.New(s, models.Records{DB: g.DB}, disputeFlows),
		methods.New(s),
		queries.New(s),
	}
	mux := http.NewServeMux()
	mux.Handle("/console/", consoleHandler)
	mux.Handle("/", s.Handler())
	return mux
}

// formOrigins are where the shopper's pages may send the shopper with a
// form: the simulated ACS and APM pages, at the address the browser sees.
func formOrigins(c Config) []string {
	origins := []string{c.Connectors.AcquirerURL}
	if c.Dev.SimulatorPublicURL != "" && c.Dev.SimulatorPublicURL != c.Connectors.AcquirerURL {
		origins = append(origins, c.Dev.SimulatorPublicURL)
	}
	if slices.Contains(c.RunsConnectors(), stripe.Name) {
		// Stripe's 3-D Secure pages, where the payment page's form is
		// sent on to.
		origins = append(origins, stripe.ChallengeOrigin)
	}
	return origins
}

// Limits of the gateway's HTTP servers (API and simulator). A request's
// header must arrive within HTTPReadHeaderTimeout and the whole request (a
// body is at most 1 MiB) within HTTPReadTimeout. An answer may take
// HTTPWriteTimeout from the end of the request's header: /v1/authorise and
// the batch operations wait up to 60 s for a workflow's result, the 3-D
// Secure return up to 30 s, so it is well above those. Idle keep-alive
// connections close after HTTPIdleTimeout.
const (
	HTTPReadHeaderTimeout = 10 * time.Second
	HTTPReadTimeout       = 30 * time.Second
	HTTPWriteTimeout      = 90 * time.Second
	HTTPIdleTimeout       = 2 * time.Minute
	HTTPMaxHeaderBytes    = 64 << 10
)

// NewHTTPServer returns a server for h with the limits above.
func NewHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: HTTPReadHeaderTimeout,
		ReadTimeout:       HTTPReadTimeout,
		WriteTimeout:      HTTPWriteTimeout,
		IdleTimeout:       HTTPIdleTimeout,
		MaxHeaderBytes:    HTTPMaxHeaderBytes,
	}
}

// Activities returns the activities with their clients.
func (g *Gateway) Activities() (*activities.Activities, error) {
	set, err := g.connectorSet()
	if err != nil {
		return nil, err
	}
	return &activities.Activities{
		Records:    models.Records{DB: g.DB},
		Sends:      models.Records{DB: g.DB},
		Vault:      g.Vault,
		Connectors: set.Activities,
		Accounts:   g.Accounts,
		Notifier:   notifyclient.NewClient(10*time.Second, g.Config.NotifyAllowPrivate),
		IDs:        g.transactionIDs(),
		Logger:     g.Logger.With("component", "activities"),
		Metrics:    g.Metrics,
		Health:     g.connectorHealth(),
	}, nil
}

// connectorSet builds the configuration's connectors on first use and
// returns the same ones after: a process that serves the API and runs the
// worker (paygate dev) has one client per connector.
func (g *Gateway) connectorSet() (*ConnectorSet, error) {
	g.connectorsOnce.Do(func() { g.connectors, g.connectorsErr = g.Config.BuildConnectors() })
	return g.connectors, g.connectorsErr
}

// connectorHealth is the process's circuit breakers, one per connector,
// reporting their states to the metrics.
func (g *Gateway) connectorHealth() *connectors.Health {
	g.healthOnce.Do(func() {
		observer := &breakerRecord{records: models.Records{DB: g.DB}, worker: workerName(), logger: g.Logger.With("component", "breakers")}
		if g.Metrics != nil {
			observer.metrics = g.Metrics
		}
		cfg := g.Config.Connectors.Breaker
		if cfg == (routing.BreakerConfig{}) {
			cfg = routing.DefaultBreakerConfig
		}
		g.health = connectors.NewHealth(cfg, nil, observer)
		if g.DB != nil {
			ctx, stop := context.WithCancel(context.Background())
			g.stopBreakers, g.breakersDone = stop, make(chan struct{})
			go func() {
				defer close(g.breakersDone)
				observer.keepSeen(ctx, models.ConnectorHealthSeenEvery)
			}()
		}
	})
	return g.health
}

// breakerRecord tells the metrics and the record (the console's ops view)
// of each change of a breaker. The record is written aside, so that a
// charge never waits on it; a write that lost a race changes nothing.
type breakerRecord struct {
	metrics *telemetry.Metrics
	records models.Records
	worker  string
	logger  *slog.Logger
}

func (b *breakerRecord) BreakerState(connector string, st routing.BreakerState) {
	if b.metrics != nil {
		b.metrics.BreakerState(connector, st)
	}
	row := &models.ConnectorHealth{Connector: connector, Worker: b.worker, State: string(st), ChangedAt: time.Now()}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := b.records.SetConnectorHealth(ctx, row); err != nil {
			b.logger.Warn("record breaker state", "connector", connector, "state", st, "error", err)
		}
	}()
}

// keepSeen says every interval that this process's breakers that are not
// closed still are, until ctx ends: a breaker open for days changes no
// more, and the ops view tells it from a stopped worker's by this.
func (b *breakerRecord) keepSeen(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			if err := b.records.MarkConnectorHealthSeen(wctx, b.worker, now); err != nil && ctx.Err() == nil {
				b.logger.Warn("mark breakers seen", "error", err)
			}
			cancel()
		}
	}
}

// workerName names this process among the workers: its host and pid.
func workerName() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d", host, os.Getpid())
}

// transactionIDs is the process's transaction-id generator, or nil when it
// took no node (a one-off command).
func (g *Gateway) transactionIDs() activities.TransactionIDs {
	if g.ids == nil {
		return nil
	}
	return g.ids
}

// EagerWorker returns a worker, like NewWorker's, for the API of this
// process to start payments on eagerly: APIHandler, called after it, starts
// each payment's workflow with its first task handed to this worker, which
// hands the payment's answer back in the process. It is the caller's to
// start and stop.
//
// It runs workflow tasks and local activities only: the regular activities
// (notifications' deliveries, payouts' rail calls, inquiries retried at
// length) stay on the worker processes.
func (g *Gateway) EagerWorker() (sdkworker.Worker, error) {
	g.eager = true
	return g.newWorker(func(o *sdkworker.Options) {
		o.LocalActivityWorkerOnly = true
		if g.Config.TemporalIdentity != "" {
			// A task this worker polled is recorded under its own
			// identity; one a start handed to it, under the start's.
			o.Identity = g.Config.TemporalIdentity + "/worker"
		}
	})
}

// NewWorker returns a worker with every workflow and activity registered.
func (g *Gateway) NewWorker() (sdkworker.Worker, error) { return g.newWorker() }

// EagerAPIIdentity is the Temporal identity of an API process named node
// (Config.NodeName) that starts workflows eagerly: a workflow task the
// start handed to its worker is recorded under the start's identity, so
// the Temporal UI tells those tasks by it (the worker's own polls carry
// "/worker" after it).
func EagerAPIIdentity(node string) string { return "paygate-api/" + node }

// newWorker is NewWorker with its options adjusted by tune after the
// configuration's.
func (g *Gateway) newWorker(tune ...func(*sdkworker.Options)) (sdkworker.Worker, error) {
	acts, err := g.Activities()
	if err != nil {
		return nil, err
	}
	if g.answers != nil {
		acts.Answers = g.answers
	}
	if n := g.Config.Worker.CacheSize; n > 0 {
		// The SDK keeps this one setting per process, read when the first
		// worker starts.
		sdkworker.SetStickyWorkflowCacheSize(n)
	}
	pacts, err := g.PayoutActivities()
	if err != nil {
		return nil, err
	}
	racts, err := g.ReconActivities()
	if err != nil {
		return nil, err
	}
	dacts := &activities.DisputeActivities{Connectors: acts.Connectors, Records: models.Records{DB: g.DB}, Ledger: ledger.New(g.DB),
		Logger: g.Logger.With("component", "disputes")}
	return worker.New(g.Temporal, worker.Activities{Orders: acts, Payouts: pacts, Ledger: g.LedgerActivities(), Recon: racts,
		Disputes: dacts},
		append([]func(*sdkworker.Options){g.Config.Worker.Tuning.apply}, tune...)...), nil
}

// Reconciler returns the settlement reconciliation over the connectors
// that give settlement reports.
func (g *Gateway) Reconciler() (*reconcile.Service, error) {
	set, err := g.connectorSet()
	if err != nil {
		return nil, err
	}
	return &reconcile.Service{DB: g.DB, Ledger: ledger.New(g.DB), Connectors: set.Settlements}, nil
}

// ReconActivities returns the activities of the settlement reconciliation.
func (g *Gateway) ReconActivities() (*activities.ReconActivities, error) {
	r, err := g.Reconciler()
	if err != nil {
		return nil, err
	}
	return &activities.ReconActivities{Recon: r}, nil
}

// LedgerActivities returns the activities that post orders to the ledger.
func (g *Gateway) LedgerActivities() *activities.LedgerActivities {
	return &activities.LedgerActivities{Ledger: ledger.New(g.DB), Logger: g.Logger.With("component", "ledger")}
}

// EnsureSearchAttributes registers the custom search attributes that are missing.
func EnsureSearchAttributes(ctx context.Context, c client.Client, namespace string) error {
	ops := c.OperatorService()
	have, err := ops.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list search attributes: %w", err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	for name, typ := range workflows.SearchAttributeTypes {
		if _, ok := have.GetCustomAttributes()[name]; ok {
			continue
		}
		v, ok := enumspb.IndexedValueType_value["INDEXED_VALUE_TYPE_"+upper(typ)]
		if !ok {
			return fmt.Errorf("search attribute %s: unknown type %s", name, typ)
		}
		missing[name] = enumspb.IndexedValueType(v)
	}
	if len(missing) == 0 {
		return nil
	}
	_, err = ops.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{Namespace: namespace, SearchAttributes: missing})
	var exists *serviceerror.AlreadyExists
	if err != nil && !errors.As(err, &exists) {
		return fmt.Errorf("add search attributes: %w", err)
	}
	// A server with SQL visibility maps new attributes in the namespace's
	// metadata, which reaches its services with their namespace cache
	// refresh (2 s by default): a workflow started before then is refused
	// for an unmapped attribute. This wait happens once, on the first start
	// against a new namespace.
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(SearchAttributeSettle):
	}
	return nil
}

// SearchAttributeSettle is how long EnsureSearchAttributes waits after
// adding attributes, for every Temporal service to see them.
const SearchAttributeSettle = 3 * time.Second

func upper(s string) string {
	b := []byte(s)
	for i, ch := range b {
		if 'a' <= ch && ch <= 'z' {
			b[i] = ch - 'a' + 'A'
		}
	}
	return string(b)
}
