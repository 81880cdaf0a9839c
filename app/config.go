package app

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/paygate/paygate/internal/domain/keyring"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/internal/domain/routing"
	"github.com/paygate/paygate/models"
)

// Config is the gateway's configuration, by part (config.go holds the
// parts). FromEnv reads it.
type Config struct {
	DatabaseURL       string
	TemporalAddress   string
	TemporalNamespace string
	// TemporalTLS and TemporalAPIKey reach a real cluster or Temporal
	// Cloud (temporalclient.go).
	TemporalTLS    TemporalTLS
	TemporalAPIKey string
	// TemporalNoGzip sends requests to Temporal uncompressed
	// (TEMPORAL_GRPC_GZIP=false): our payloads are encrypted and do not
	// compress, and on a local or same-zone link gzip costs both sides CPU.
	TemporalNoGzip bool
	Keyring        string // "id:base64key,..." first is active
	FingerprintKey string // base64, 32 bytes

	// Connectors are the acquirers; Payouts the payout rails.
	Connectors ConnectorsConfig
	Payouts    PayoutsConfig
	// Worker sizes the worker and its housekeeping; Edge is the HTTP
	// side; Telemetry what the operators watch.
	Worker    WorkerConfig
	Edge      EdgeConfig
	Telemetry TelemetryConfig
	// Dev are the simulators `paygate simulator` and `paygate dev` serve,
	// apart from every production setting.
	Dev DevConfig

	// NodeID is this process's transaction-id node when it is configured
	// (PAYGATE_NODE_ID, 0 to 1023); nil leases a free one from Postgres.
	// Either way the process holds the node's lease while it runs, so two
	// processes configured with the same node cannot both start.
	NodeID *uint16
	// NodeName names this process in the node lease table (host/pid by
	// default); a random suffix makes each run's lease its own.
	NodeName string
	// TemporalIdentity names this process to Temporal; empty takes the
	// SDK's (pid@host). An API that starts workflows eagerly sets
	// EagerAPIIdentity.
	TemporalIdentity string
	// NodeLeaseTTL is how long a node lease lasts unless renewed
	// (txid.DefaultLeaseTTL when zero).
	NodeLeaseTTL time.Duration
	// NotifySchedule is the retry schedule of merchant notifications.
	NotifySchedule notify.Schedule
	// NotifyAllowPrivate lets notify_url point at loopback and private
	// addresses: for local development and tests only.
	NotifyAllowPrivate bool
	// SubscriptionTestIntervals admits the subscription intervals "second"
	// and "minute": for local development and tests only.
	SubscriptionTestIntervals bool
	// DisputeRateWarning is the dispute rate, in basis points of a
	// merchant's payments over 30 days, above which the console warns ops
	// (PAYGATE_DISPUTE_RATE_WARNING_BP; console.DefaultDisputeRateWarning
	// when 0).
	DisputeRateWarning int
	// parsedKeys keeps FromEnv's parse of Keyring for CheckSecrets and
	// Open (keyring).
	parsedKeys parsedKeyring
}

// EnvError names the variable whose value is unfit.
type EnvError struct {
	Var string
	Err error
}

func (e *EnvError) Error() string { return e.Var + ": " + e.Err.Error() }

func (e *EnvError) Unwrap() error { return e.Err }

// Reasons a variable is refused, wrapped in an EnvError.
var (
	ErrUnset         = errors.New("is not set")
	ErrDefaultSecret = errors.New("is a default or placeholder value")
	ErrWeakSecret    = errors.New("is too short")
	ErrMalformed     = errors.New("is malformed")
)

// FromEnv reads the configuration from the environment, with local defaults
// for addresses and tunings (never for secrets). A value that is set but
// cannot be read is an error naming its variable; all such errors are
// reported together.
func FromEnv() (Config, error) {
	c := Config{
		DatabaseURL:       os.Getenv("DATABASE_URL"),
		TemporalAddress:   envOr("TEMPORAL_ADDRESS", "127.0.0.1:7233"),
		TemporalNamespace: envOr("TEMPORAL_NAMESPACE", "default"),
		Keyring:           os.Getenv("PAYGATE_KEYRING"),
		FingerprintKey:    os.Getenv("PAYGATE_FINGERPRINT_KEY"),
		Connectors: ConnectorsConfig{
			AcquirerURL:     envOr("ACQUIRER_URL", DefaultAcquirerURL),
			AcquirerTimeout: DefaultAcquirerTimeout,
			ProviderSecret:  os.Getenv("PAYGATE_PROVIDER_SECRET"),
		},
		Payouts: PayoutsConfig{RailURL: envOr("RAIL_URL", DefaultRailURL), RailCallbackSecret: os.Getenv("PAYGATE_RAIL_CALLBACK_SECRET")},
		Worker: WorkerConfig{
			CacheSize:                 DefaultWorkerCacheSize,
			VaultSweepEvery:           DefaultVaultSweepEvery,
			PersonalDataRetentionDays: DefaultPersonalDataRetentionDays,
		},
		Edge: EdgeConfig{
			HTTPAddr:   envOr("PAYGATE_HTTP_ADDR", DefaultHTTPAddr),
			AdminToken: os.Getenv("PAYGATE_ADMIN_TOKEN"),
		},
		Telemetry: TelemetryConfig{
			MetricsAddr:   os.Getenv("PAYGATE_METRICS_ADDR"),
			TemporalUIURL: os.Getenv("PAYGATE_TEMPORAL_UI_URL"),
		},
		Dev: DevConfig{
			SimulatorAddr:        envOr("PAYGATE_SIMULATOR_ADDR", DefaultSimulatorAddr),
			SimBankAddr:          envOr("PAYGATE_SIMBANK_ADDR", DefaultSimBankAddr),
			RailAddr:             envOr("PAYGATE_RAIL_ADDR", DefaultRailAddr),
			RailDataPath:         envOr("PAYGATE_RAIL_DATA", DefaultRailDataPath),
			SimulatorDataPath:    envOr("PAYGATE_SIMULATOR_DATA", DefaultSimulatorDataPath),
			SimulatorCallbackVia: os.Getenv("PAYGATE_SIMULATOR_CALLBACK_VIA"),
		},
		NotifySchedule: notify.DefaultSchedule(),
	}
	c.Payouts.TestRailURL = os.Getenv("TEST_RAIL_URL")
	if c.Payouts.TestRailURL == "" && os.Getenv("RAIL_URL") == "" {
		c.Payouts.TestRailURL = c.Payouts.RailURL
	}
	c.Edge.PublicURL = envOr("PAYGATE_PUBLIC_URL", "http://"+c.Edge.HTTPAddr)
	c.Dev.SimulatorPublicURL = envOr("PAYGATE_SIMULATOR_PUBLIC_URL", c.Connectors.AcquirerURL)
	host, _ := os.Hostname()
	c.NodeName = host + "/" + strconv.Itoa(os.Getpid())

	var errs []error
	fail := func(name string, err error) { errs = append(errs, &EnvError{Var: name, Err: err}) }
	if v := os.Getenv("ACQUIRER_TIMEOUT"); v != "" {
		d, err := positiveDuration(v)
		if err != nil {
			fail("ACQUIRER_TIMEOUT", err)
		}
		c.Connectors.AcquirerTimeout = d
	}
	if v := os.Getenv("PAYGATE_NOTIFY_SCHEDULE"); v != "" {
		s, err := notify.ParseSchedule(v)
		if err != nil {
			fail("PAYGATE_NOTIFY_SCHEDULE", fmt.Errorf("%w: %v", ErrMalformed, err))
		}
		c.NotifySchedule = s
	}
	if v := os.Getenv("PAYGATE_NOTIFY_ALLOW_PRIVATE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			fail("PAYGATE_NOTIFY_ALLOW_PRIVATE", fmt.Errorf("%w: want true or false", ErrMalformed))
		}
		c.NotifyAllowPrivate = b
	}
	temporalClientFromEnv(&c, os.Getenv, fail)
	if v := os.Getenv("PAYGATE_WORKER_CACHE_SIZE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1_000_000 {
			fail("PAYGATE_WORKER_CACHE_SIZE", fmt.Errorf("%w: want a whole number from 1 to 1000000", ErrMalformed))
		}
		c.Worker.CacheSize = n
	}
	if v := os.Getenv("PAYGATE_SUBSCRIPTION_TEST_INTERVALS"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			fail("PAYGATE_SUBSCRIPTION_TEST_INTERVALS", fmt.Errorf("%w: want true or false", ErrMalformed))
		}
		c.SubscriptionTestIntervals = b
	}
	if v := os.Getenv("PAYGATE_NODE_ID"); v != "" {
		n, err := strconv.ParseUint(v, 10, 16)
		if err != nil || n > models.MaxNode {
			fail("PAYGATE_NODE_ID", fmt.Errorf("%w: want a number from %d to %d", ErrMalformed, models.MinNode, models.MaxNode))
		} else {
			id := uint16(n)
			c.NodeID = &id
		}
	}
	if v := os.Getenv("PAYGATE_NODE_LEASE_TTL"); v != "" {
		d, err := positiveDuration(v)
		if err == nil && d < minNodeLeaseTTL {
			err = fmt.Errorf("%w: at least %s", ErrMalformed, minNodeLeaseTTL)
		}
		if err != nil {
			fail("PAYGATE_NODE_LEASE_TTL", err)
		}
		c.NodeLeaseTTL = d
	}
	if v := os.Getenv("PAYGATE_VAULT_SWEEP_EVERY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || (d > 0 && d < time.Minute) {
			fail("PAYGATE_VAULT_SWEEP_EVERY", fmt.Errorf("%w: want 0 (off) or a duration of at least 1m such as 15m", ErrMalformed))
		} else {
			c.Worker.VaultSweepEvery = d
		}
	}
	if v := os.Getenv("PAYGATE_PERSONAL_DATA_RETENTION_DAYS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || (n > 0 && n < MinPersonalDataRetentionDays) {
			fail("PAYGATE_PERSONAL_DATA_RETENTION_DAYS", fmt.Errorf("%w: want 0 (kept until erased on request) or a number of days of at least %d", ErrMalformed, MinPersonalDataRetentionDays))
		} else {
			c.Worker.PersonalDataRetentionDays = n
		}
	}
	if v := os.Getenv("PAYGATE_DISPUTE_RATE_WARNING_BP"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10000 {
			fail("PAYGATE_DISPUTE_RATE_WARNING_BP", fmt.Errorf("%w: want basis points from 1 to 10000 (90 is 0.9%%)", ErrMalformed))
		}
		c.DisputeRateWarning = n
	}
	if v := os.Getenv("PAYGATE_EAGER_START"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			fail("PAYGATE_EAGER_START", fmt.Errorf("%w: want true or false", ErrMalformed))
		}
		c.Edge.EagerStart = b
	}
	if v := os.Getenv("PAYGATE_TRUSTED_PROXIES"); v != "" {
		proxies, err := parseTrustedProxies(v)
		if err != nil {
			fail("PAYGATE_TRUSTED_PROXIES", err)
		}
		c.Edge.TrustedProxies = proxies
	}
	switch v := os.Getenv("PAYGATE_LIVE_SIMULATORS"); v {
	case "", "allow":
	case "forbid":
		c.Connectors.ForbidLiveSimulators = true
		if os.Getenv("TEST_RAIL_URL") == "" || strings.TrimSuffix(c.Payouts.TestRailURL, "/") == strings.TrimSuffix(c.Payouts.RailURL, "/") {
			fail("TEST_RAIL_URL", fmt.Errorf("%w: with PAYGATE_LIVE_SIMULATORS=forbid, test accounts' payouts need a simulated rail of their own, other than RAIL_URL", ErrMalformed))
		}
	default:
		fail("PAYGATE_LIVE_SIMULATORS", fmt.Errorf("%w: want allow or forbid", ErrMalformed))
	}
	if c.Payouts.TestRailURL != "" && !httpURL(c.Payouts.TestRailURL) {
		fail("TEST_RAIL_URL", fmt.Errorf("%w: want an absolute http or https URL", ErrMalformed))
	}
	for _, u := range []struct{ name, value string }{
		{"PAYGATE_PUBLIC_URL", c.Edge.PublicURL}, {"ACQUIRER_URL", c.Connectors.AcquirerURL}, {"RAIL_URL", c.Payouts.RailURL},
	} {
		if !httpURL(u.value) {
			fail(u.name, fmt.Errorf("%w: want an absolute http or https URL", ErrMalformed))
		}
	}
	for _, a := range []struct{ name, value string }{
		{"PAYGATE_HTTP_ADDR", c.Edge.HTTPAddr}, {"PAYGATE_SIMULATOR_ADDR", c.Dev.SimulatorAddr},
		{"PAYGATE_SIMBANK_ADDR", c.Dev.SimBankAddr}, {"PAYGATE_RAIL_ADDR", c.Dev.RailAddr},
	} {
		if !listenAddr(a.value) {
			fail(a.name, fmt.Errorf("%w: want host:port such as 127.0.0.1:8080 or :8080", ErrMalformed))
		}
	}
	// Unset, it is ACQUIRER_URL, which is checked above.
	if os.Getenv("PAYGATE_SIMULATOR_PUBLIC_URL") != "" && !httpURL(c.Dev.SimulatorPublicURL) {
		fail("PAYGATE_SIMULATOR_PUBLIC_URL", fmt.Errorf("%w: want an absolute http or https URL", ErrMalformed))
	}
	if c.Telemetry.TemporalUIURL != "" && !httpURL(c.Telemetry.TemporalUIURL) {
		fail("PAYGATE_TEMPORAL_UI_URL", fmt.Errorf("%w: want an absolute http or https URL", ErrMalformed))
	}
	if c.Dev.SimulatorCallbackVia != "" && !httpURL(c.Dev.SimulatorCallbackVia) {
		fail("PAYGATE_SIMULATOR_CALLBACK_VIA", fmt.Errorf("%w: want an absolute http or https URL", ErrMalformed))
	}
	if c.Telemetry.MetricsAddr != "" && !listenAddr(c.Telemetry.MetricsAddr) {
		fail("PAYGATE_METRICS_ADDR", fmt.Errorf("%w: want host:port such as 127.0.0.1:9464", ErrMalformed))
	}
	if !grpcTarget(c.TemporalAddress) {
		fail("TEMPORAL_ADDRESS", fmt.Errorf("%w: want host:port such as temporal:7233", ErrMalformed))
	}
	if c.DatabaseURL != "" {
		// pgx's error quotes the URL; even with the password masked, it
		// stays out of the message.
		if _, err := pgconn.ParseConfig(c.DatabaseURL); err != nil {
			fail("DATABASE_URL", fmt.Errorf("%w: want a Postgres URL such as postgres://user:password@host:5432/paygate", ErrMalformed))
		}
	}
	// How strong the keys are is CheckSecrets' question, for the processes
	// that need them; that they can be read at all is asked of every command.
	if c.Keyring != "" {
		ring, err := keyring.Parse(c.Keyring)
		if err != nil {
			fail("PAYGATE_KEYRING", fmt.Errorf("%w: %v", ErrMalformed, err))
		}
		c.parsedKeys = parsedKeyring{spec: c.Keyring, ring: ring}
	}
	if c.FingerprintKey != "" {
		if _, err := base64.StdEncoding.DecodeString(c.FingerprintKey); err != nil {
			// The decoding error could echo key material; do not include it.
			fail("PAYGATE_FINGERPRINT_KEY", fmt.Errorf("%w: not standard base64", ErrMalformed))
		}
	}
	connectorsFromEnv(&c, os.Getenv, fail)
	codecFromEnv(&c, os.Getenv, fail)
	return c, errors.Join(errs...)
}

// listenAddr reports whether v is a host:port to listen on (the host may
// be empty: every interface).
func listenAddr(v string) bool {
	_, port, err := net.SplitHostPort(v)
	if err != nil {
		return false
	}
	_, err = strconv.ParseUint(port, 10, 16)
	return err == nil
}

// grpcTarget reports whether v is a Temporal frontend address: host:port,
// or gRPC's resolver form scheme:///name that the SDK also takes.
func grpcTarget(v string) bool {
	if scheme, rest, ok := strings.Cut(v, ":///"); ok {
		return scheme != "" && rest != ""
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil || host == "" {
		return false
	}
	n, err := strconv.ParseUint(port, 10, 16)
	return err == nil && n > 0
}

// DefaultPersonalDataRetentionDays keeps personal data for 400 days after
// an order's or payout's last change: well past the common card dispute
// window of about 120 days, with margin for late questions about a refund.
const DefaultPersonalDataRetentionDays = 400

// MinPersonalDataRetentionDays is the shortest retention accepted: shorter
// would erase shoppers' data while disputes about their payments are still
// commonly opened.
const MinPersonalDataRetentionDays = 30

// DefaultVaultSweepEvery is how often a worker sweeps the vault unless
// PAYGATE_VAULT_SWEEP_EVERY says otherwise.
const DefaultVaultSweepEvery = 15 * time.Minute

// minNodeLeaseTTL bounds PAYGATE_NODE_LEASE_TTL: the lease is renewed every
// third of it.
const minNodeLeaseTTL = 3 * time.Second

func positiveDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%w: %q is not a duration such as 10s or 1m", ErrMalformed, v)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%w: %s is not positive", ErrMalformed, v)
	}
	return d, nil
}

func httpURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// The parts of the configuration, each with what it holds and its
// defaults; FromEnv fills them from the environment.

// ConnectorsConfig are the acquirer connectors this deployment runs
// (connectors.go).
type ConnectorsConfig struct {
	// Names are the connectors (PAYGATE_CONNECTORS); accounts may name
	// only these.
	Names []string
	// AcquirerURL is the acquirer simulator's base URL (ACQUIRER_URL),
	// AcquirerTimeout the bound of one call to it (ACQUIRER_TIMEOUT).
	AcquirerURL     string
	AcquirerTimeout time.Duration
	// SimBankURL is the second simulated acquirer's base URL (SIMBANK_URL).
	SimBankURL string
	// Breaker says when a connector's circuit breaker opens and for how
	// long (zero: routing.DefaultBreakerConfig).
	Breaker routing.BreakerConfig
	// StripeSecretKey is the Stripe account's secret key
	// (STRIPE_SECRET_KEY), required when the connectors include stripe;
	// StripeURL is Stripe's API address (STRIPE_API_URL, by default
	// Stripe's own; stripe-mock's for a trial without an account).
	StripeSecretKey string
	StripeURL       string
	// StripeWebhookSecret is the signing secret of the Stripe webhook
	// endpoint (STRIPE_WEBHOOK_SECRET, whsec_...); unset, Stripe's events
	// are refused and orders ask Stripe themselves.
	StripeWebhookSecret string
	// ProviderSecret checks what the ACS and the APM provider send back
	// (PAYGATE_PROVIDER_SECRET).
	ProviderSecret string
	// ForbidLiveSimulators keeps live accounts off the simulators
	// (PAYGATE_LIVE_SIMULATORS=forbid): a live account's orders on a
	// simulated connector are refused (I0030), and RAIL_URL must be another
	// rail than TEST_RAIL_URL. The default, allow, suits a deployment whose
	// every connector and rail is a simulator (development, demos).
	ForbidLiveSimulators bool
}

// Defaults of the connectors.
const (
	DefaultAcquirerURL     = "http://127.0.0.1:8090"
	DefaultAcquirerTimeout = 10 * time.Second
)

// PayoutsConfig are the payout rails.
type PayoutsConfig struct {
	// RailURL is the payout rail's base URL (RAIL_URL): live accounts'
	// payouts go there.
	RailURL string
	// TestRailURL is the simulated rail test accounts' payouts go to
	// (TEST_RAIL_URL). Unset, it is the local rail simulator when RAIL_URL
	// is unset too (both are then the simulator on 127.0.0.1:8092), and
	// otherwise none: a test account's payout is refused rather than sent
	// to a rail that may be real.
	TestRailURL string
	// RailCallbackSecret is the secret the rail signs its callbacks with
	// (PAYGATE_RAIL_CALLBACK_SECRET). Set, a payout is woken by the rail's
	// word that its transfer moved and polls the rail rarely; unset, the
	// callback route is refused and payouts poll as before.
	RailCallbackSecret string
}

// DefaultWorkerCacheSize bounds a worker's cache of workflows: about 200 MB
// of cached open orders at most, where the SDK's own 10,000 would let a
// worker grow past 1 GB under steady traffic.
const DefaultWorkerCacheSize = 2000

// DefaultRailURL is the local rail simulator.
const DefaultRailURL = "http://127.0.0.1:8092"

// WorkerConfig sizes the worker and its housekeeping.
type WorkerConfig struct {
	// Tuning sizes the worker's pollers and slots (temporalclient.go).
	Tuning WorkerTuning
	// CacheSize bounds the workflows the worker keeps in memory between
	// their tasks (the SDK's sticky cache; DefaultWorkerCacheSize unless
	// PAYGATE_WORKER_CACHE_SIZE says otherwise; the SDK's 10,000 when 0).
	// Every paid order stays open for its refund window, and a cached one
	// holds about 100 KB (three parked goroutines' stacks), so this bounds
	// the worker's memory; an evicted order is replayed from its history
	// when an operation next reaches it.
	CacheSize int
	// VaultSweepEvery is how often a worker drops the sealed security codes
	// no order needs any more (PAYGATE_VAULT_SWEEP_EVERY; 0 turns it off).
	VaultSweepEvery time.Duration
	// PersonalDataRetentionDays is how long closed orders and final payouts
	// keep shoppers' and beneficiaries' personal data after their last
	// change (PAYGATE_PERSONAL_DATA_RETENTION_DAYS; 0 keeps it until it is
	// erased on request). The worker's daily PersonalData run erases it.
	PersonalDataRetentionDays int
}

// EdgeConfig is the gateway's HTTP side.
type EdgeConfig struct {
	// HTTPAddr is where `paygate serve` listens (PAYGATE_HTTP_ADDR).
	HTTPAddr string
	// PublicURL is the API's address as shoppers' browsers and providers
	// reach it (3-D Secure and APM callbacks, hosted pages;
	// PAYGATE_PUBLIC_URL, default http://HTTPAddr).
	PublicURL string
	// AdminToken authenticates the admin API (PAYGATE_ADMIN_TOKEN); empty
	// turns it off.
	AdminToken string
	// Codec is the Temporal UI's codec endpoint (codec.go).
	Codec CodecConfig
	// TrustedProxies are the load balancers' addresses (IPs or CIDRs,
	// PAYGATE_TRUSTED_PROXIES) whose X-Forwarded-For the API believes for
	// the client's address; none believes the TCP peer alone.
	TrustedProxies []string
	// EagerStart runs a worker inside `paygate serve` and starts each
	// payment's workflow eagerly on it, the answer handed over in the
	// process (PAYGATE_EAGER_START; flows.TemporalOrders.Answers).
	EagerStart bool
}

// parseTrustedProxies reads a comma-separated list of IP addresses and CIDR
// ranges.
func parseTrustedProxies(spec string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(spec, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if _, err := netip.ParsePrefix(p); err != nil {
			if _, err := netip.ParseAddr(p); err != nil {
				return nil, fmt.Errorf("%w: %q is neither an IP address nor a CIDR range", ErrMalformed, p)
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// DefaultHTTPAddr is where the API listens by default.
const DefaultHTTPAddr = "127.0.0.1:8080"

// TelemetryConfig is what the operators watch.
type TelemetryConfig struct {
	// MetricsAddr is where `paygate serve`, `worker` and `dev` serve
	// Prometheus's /metrics and /healthz (PAYGATE_METRICS_ADDR); "" serves
	// none. The metrics are for the operators' network, not the public one.
	MetricsAddr string
	// TemporalUIURL is the Temporal UI's address, for the console's links to
	// workflows (PAYGATE_TEMPORAL_UI_URL; none: no links).
	TemporalUIURL string
}

// DevConfig are the simulators of development and demos: the acquirer
// (with its ACS and APM provider), the second acquirer and the payout rail.
// A production deployment sets none of it.
type DevConfig struct {
	// SimulatorAddr, SimBankAddr and RailAddr are where `paygate
	// simulator` serves the acquirer, the second acquirer and the rail
	// (PAYGATE_SIMULATOR_ADDR, PAYGATE_SIMBANK_ADDR, PAYGATE_RAIL_ADDR).
	SimulatorAddr string
	SimBankAddr   string
	RailAddr      string
	// SimulatorDataPath and RailDataPath are the files the acquirer
	// simulator and the rail keep their charges and transfers in across
	// restarts (PAYGATE_SIMULATOR_DATA, PAYGATE_RAIL_DATA).
	SimulatorDataPath string
	RailDataPath      string
	// SimulatorPublicURL is the acquirer simulator as shoppers' browsers
	// reach its ACS and APM pages (PAYGATE_SIMULATOR_PUBLIC_URL; default
	// ACQUIRER_URL); SimulatorCallbackVia is where the simulated APM
	// provider posts its callbacks instead of PAYGATE_PUBLIC_URL's host
	// (PAYGATE_SIMULATOR_CALLBACK_VIA), for a simulator on a container
	// network.
	SimulatorPublicURL   string
	SimulatorCallbackVia string
}

// Defaults of the simulators.
const (
	DefaultSimulatorAddr     = "127.0.0.1:8090"
	DefaultSimBankAddr       = "127.0.0.1:8091"
	DefaultRailAddr          = "127.0.0.1:8092"
	DefaultSimulatorDataPath = ".data/acquirer-charges.jsonl"
	DefaultRailDataPath      = ".data/rail-transfers.jsonl"
)
