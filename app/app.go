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
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"
	"gorm.io/gorm"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/api/admin"
	"github.com/paygate/paygate/api/console"
	"github.com/paygate/paygate/internal/adapters/erasure"
	"github.com/paygate/paygate/internal/adapters/ledger"
	"github.com/paygate/paygate/internal/adapters/merchant"
	"github.com/paygate/paygate/internal/adapters/notifyclient"
	"github.com/paygate/paygate/internal/adapters/redeliver"
	"github.com/paygate/paygate/internal/adapters/replay"
	"github.com/paygate/paygate/internal/adapters/telemetry"
	"github.com/paygate/paygate/internal/adapters/vault"
	"github.com/paygate/paygate/internal/domain/keyring"
	"github.com/paygate/paygate/internal/domain/notify"
	"github.com/paygate/paygate/internal/domain/txid"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/worker"
	"github.com/paygate/paygate/workflows"
)

// Config is the gateway's configuration. FromEnv reads it.
type Config struct {
	DatabaseURL       string
	TemporalAddress   string
	TemporalNamespace string
	// TemporalTLS and TemporalAPIKey reach a real cluster or Temporal
	// Cloud (temporalclient.go); WorkerTuning sizes the worker.
	TemporalTLS    TemporalTLS
	TemporalAPIKey string
	// TemporalNoGzip sends requests to Temporal uncompressed
	// (TEMPORAL_GRPC_GZIP=false): our payloads are encrypted and do not
	// compress, and on a local or same-zone link gzip costs both sides CPU.
	TemporalNoGzip  bool
	WorkerTuning    WorkerTuning
	Keyring         string // "id:base64key,..." first is active
	FingerprintKey  string // base64, 32 bytes
	AcquirerURL     string
	AcquirerTimeout time.Duration
	// Connectors names the acquirer connectors this deployment runs
	// (PAYGATE_CONNECTORS; connectors.go); accounts may name only these.
	Connectors []string
	// SimBankURL is the second simulated acquirer's base URL (SIMBANK_URL).
	SimBankURL string
	// SimBankAddr is where `paygate simulator` serves the second simulated
	// acquirer (PAYGATE_SIMBANK_ADDR).
	SimBankAddr   string
	HTTPAddr      string
	SimulatorAddr string
	// RailURL is the payout rail's base URL (RAIL_URL): live accounts'
	// payouts go there.
	RailURL string
	// TestRailURL is the simulated rail test accounts' payouts go to
	// (TEST_RAIL_URL). Unset, it is the local rail simulator when RAIL_URL
	// is unset too (both are then the simulator on 127.0.0.1:8092), and
	// otherwise none: a test account's payout is refused rather than sent
	// to a rail that may be real.
	TestRailURL string
	// ForbidLiveSimulators keeps live accounts off the simulators
	// (PAYGATE_LIVE_SIMULATORS=forbid): a live account's orders on a
	// simulated connector are refused (I0030), and RAIL_URL must be another
	// rail than TEST_RAIL_URL. The default, allow, suits a deployment whose
	// every connector and rail is a simulator (development, demos).
	ForbidLiveSimulators bool
	// RailAddr is where `paygate simulator` serves the payout rail
	// simulator (PAYGATE_RAIL_ADDR); RailDataPath is the file it keeps its
	// transfers in (PAYGATE_RAIL_DATA).
	RailAddr     string
	RailDataPath string
	// SimulatorPublicURL is the acquirer simulator as shoppers' browsers
	// reach its ACS and APM pages (PAYGATE_SIMULATOR_PUBLIC_URL; default
	// ACQUIRER_URL); SimulatorCallbackVia is where the simulated APM
	// provider posts its callbacks instead of PAYGATE_PUBLIC_URL's host
	// (PAYGATE_SIMULATOR_CALLBACK_VIA), for a simulator on a container
	// network.
	SimulatorPublicURL   string
	SimulatorCallbackVia string
	// TemporalUIURL is the Temporal UI's address, for the console's links to
	// workflows (PAYGATE_TEMPORAL_UI_URL; none: no links).
	TemporalUIURL string
	// MetricsAddr is where `paygate serve`, `worker` and `dev` serve
	// Prometheus's /metrics and /healthz (PAYGATE_METRICS_ADDR); "" serves
	// none. The metrics are for the operators' network, not the public one.
	MetricsAddr string
	// SimulatorDataPath is the file `paygate simulator` keeps the acquirer
	// simulator's charges and refunds in across restarts
	// (PAYGATE_SIMULATOR_DATA).
	SimulatorDataPath string
	// NodeID is this process's transaction-id node when it is configured
	// (PAYGATE_NODE_ID, 0 to 1023); nil leases a free one from Postgres.
	// Either way the process holds the node's lease while it runs, so two
	// processes configured with the same node cannot both start.
	NodeID *uint16
	// NodeName names this process in the node lease table (host/pid by
	// default); a random suffix makes each run's lease its own.
	NodeName string
	// NodeLeaseTTL is how long a node lease lasts unless renewed
	// (txid.DefaultLeaseTTL when zero).
	NodeLeaseTTL time.Duration
	// NotifySchedule is the retry schedule of merchant notifications.
	NotifySchedule notify.Schedule
	// NotifyAllowPrivate lets notify_url point at loopback and private
	// addresses: for local development and tests only.
	NotifyAllowPrivate bool
	// WorkerCacheSize bounds the workflows the worker keeps in memory
	// between their tasks (the SDK's sticky cache; 10,000 when 0). Every
	// paid order stays open for its refund window, and a cached one holds
	// about 100 KB (three parked goroutines' stacks), so this bounds the
	// worker's memory; an evicted order is replayed from its history when
	// an operation next reaches it.
	WorkerCacheSize int
	// SubscriptionTestIntervals admits the subscription intervals "second"
	// and "minute": for local development and tests only.
	SubscriptionTestIntervals bool
	// AdminToken authenticates the admin API; empty turns it off.
	AdminToken string
	// PublicURL is the API's address as shoppers' browsers and providers
	// reach it (3-D Secure and APM callbacks, hosted pages).
	PublicURL string
	// ProviderSecret checks what the ACS and the APM provider send back.
	ProviderSecret string
	// VaultSweepEvery is how often a worker drops the sealed security codes
	// no order needs any more (PAYGATE_VAULT_SWEEP_EVERY; 0 turns it off).
	VaultSweepEvery time.Duration
	// Codec is the Temporal UI's codec endpoint (codec.go).
	Codec CodecConfig
	// parsedKeys keeps FromEnv's parse of Keyring for CheckSecrets and
	// Open (keyring).
	parsedKeys parsedKeyring

	// PersonalDataRetentionDays is how long closed orders and final payouts
	// keep shoppers' and beneficiaries' personal data after their last
	// change (PAYGATE_PERSONAL_DATA_RETENTION_DAYS; 0 keeps it until it is
	// erased on request). The worker's daily PersonalData run erases it.
	PersonalDataRetentionDays int
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
		DatabaseURL:               os.Getenv("DATABASE_URL"),
		TemporalAddress:           envOr("TEMPORAL_ADDRESS", "127.0.0.1:7233"),
		TemporalNamespace:         envOr("TEMPORAL_NAMESPACE", "default"),
		Keyring:                   os.Getenv("PAYGATE_KEYRING"),
		FingerprintKey:            os.Getenv("PAYGATE_FINGERPRINT_KEY"),
		AcquirerURL:               envOr("ACQUIRER_URL", "http://127.0.0.1:8090"),
		AcquirerTimeout:           10 * time.Second,
		HTTPAddr:                  envOr("PAYGATE_HTTP_ADDR", "127.0.0.1:8080"),
		SimulatorAddr:             envOr("PAYGATE_SIMULATOR_ADDR", "127.0.0.1:8090"),
		SimBankAddr:               envOr("PAYGATE_SIMBANK_ADDR", "127.0.0.1:8091"),
		RailURL:                   envOr("RAIL_URL", "http://127.0.0.1:8092"),
		RailAddr:                  envOr("PAYGATE_RAIL_ADDR", "127.0.0.1:8092"),
		RailDataPath:              envOr("PAYGATE_RAIL_DATA", ".data/rail-transfers.jsonl"),
		SimulatorDataPath:         envOr("PAYGATE_SIMULATOR_DATA", ".data/acquirer-charges.jsonl"),
		MetricsAddr:               os.Getenv("PAYGATE_METRICS_ADDR"),
		TemporalUIURL:             os.Getenv("PAYGATE_TEMPORAL_UI_URL"),
		SimulatorCallbackVia:      os.Getenv("PAYGATE_SIMULATOR_CALLBACK_VIA"),
		NotifySchedule:            notify.DefaultSchedule(),
		AdminToken:                os.Getenv("PAYGATE_ADMIN_TOKEN"),
		ProviderSecret:            os.Getenv("PAYGATE_PROVIDER_SECRET"),
		VaultSweepEvery:           DefaultVaultSweepEvery,
		PersonalDataRetentionDays: DefaultPersonalDataRetentionDays,
	}
	c.TestRailURL = os.Getenv("TEST_RAIL_URL")
	if c.TestRailURL == "" && os.Getenv("RAIL_URL") == "" {
		c.TestRailURL = c.RailURL
	}
	c.PublicURL = envOr("PAYGATE_PUBLIC_URL", "http://"+c.HTTPAddr)
	c.SimulatorPublicURL = envOr("PAYGATE_SIMULATOR_PUBLIC_URL", c.AcquirerURL)
	host, _ := os.Hostname()
	c.NodeName = host + "/" + strconv.Itoa(os.Getpid())

	var errs []error
	fail := func(name string, err error) { errs = append(errs, &EnvError{Var: name, Err: err}) }
	if v := os.Getenv("ACQUIRER_TIMEOUT"); v != "" {
		d, err := positiveDuration(v)
		if err != nil {
			fail("ACQUIRER_TIMEOUT", err)
		}
		c.AcquirerTimeout = d
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
		c.WorkerCacheSize = n
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
			c.VaultSweepEvery = d
		}
	}
	if v := os.Getenv("PAYGATE_PERSONAL_DATA_RETENTION_DAYS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || (n > 0 && n < MinPersonalDataRetentionDays) {
			fail("PAYGATE_PERSONAL_DATA_RETENTION_DAYS", fmt.Errorf("%w: want 0 (kept until erased on request) or a number of days of at least %d", ErrMalformed, MinPersonalDataRetentionDays))
		} else {
			c.PersonalDataRetentionDays = n
		}
	}
	switch v := os.Getenv("PAYGATE_LIVE_SIMULATORS"); v {
	case "", "allow":
	case "forbid":
		c.ForbidLiveSimulators = true
		if os.Getenv("TEST_RAIL_URL") == "" || strings.TrimSuffix(c.TestRailURL, "/") == strings.TrimSuffix(c.RailURL, "/") {
			fail("TEST_RAIL_URL", fmt.Errorf("%w: with PAYGATE_LIVE_SIMULATORS=forbid, test accounts' payouts need a simulated rail of their own, other than RAIL_URL", ErrMalformed))
		}
	default:
		fail("PAYGATE_LIVE_SIMULATORS", fmt.Errorf("%w: want allow or forbid", ErrMalformed))
	}
	if c.TestRailURL != "" && !httpURL(c.TestRailURL) {
		fail("TEST_RAIL_URL", fmt.Errorf("%w: want an absolute http or https URL", ErrMalformed))
	}
	for _, u := range []struct{ name, value string }{
		{"PAYGATE_PUBLIC_URL", c.PublicURL}, {"ACQUIRER_URL", c.AcquirerURL}, {"RAIL_URL", c.RailURL},
	} {
		if !httpURL(u.value) {
			fail(u.name, fmt.Errorf("%w: want an absolute http or https URL", ErrMalformed))
		}
	}
	for _, a := range []struct{ name, value string }{
		{"PAYGATE_HTTP_ADDR", c.HTTPAddr}, {"PAYGATE_SIMULATOR_ADDR", c.SimulatorAddr},
		{"PAYGATE_SIMBANK_ADDR", c.SimBankAddr}, {"PAYGATE_RAIL_ADDR", c.RailAddr},
	} {
		if !listenAddr(a.value) {
			fail(a.name, fmt.Errorf("%w: want host:port such as 127.0.0.1:8080 or :8080", ErrMalformed))
		}
	}
	// Unset, it is ACQUIRER_URL, which is checked above.
	if os.Getenv("PAYGATE_SIMULATOR_PUBLIC_URL") != "" && !httpURL(c.SimulatorPublicURL) {
		fail("PAYGATE_SIMULATOR_PUBLIC_URL", fmt.Errorf("%w: want an absolute http or https URL", ErrMalformed))
	}
	if c.TemporalUIURL != "" && !httpURL(c.TemporalUIURL) {
		fail("PAYGATE_TEMPORAL_UI_URL", fmt.Errorf("%w: want an absolute http or https URL", ErrMalformed))
	}
	if c.SimulatorCallbackVia != "" && !httpURL(c.SimulatorCallbackVia) {
		fail("PAYGATE_SIMULATOR_CALLBACK_VIA", fmt.Errorf("%w: want an absolute http or https URL", ErrMalformed))
	}
	if c.MetricsAddr != "" && !listenAddr(c.MetricsAddr) {
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

// DefaultProviderSecret is the simulators' shared secret in `paygate dev`
// and the tests. Every other process refuses it (CheckSecrets).
const DefaultProviderSecret = "sim-secret"

// Process is what a gateway process runs; it decides which secrets the
// process needs.
type Process int

// The gateway's processes.
const (
	// Serve is the merchant API: it seals cards (keyring, fingerprint
	// key), checks provider callbacks (provider secret) and, when
	// PAYGATE_ADMIN_TOKEN is set, serves the admin API.
	Serve Process = iota + 1
	// Worker runs the workflows and activities: it opens cards and sign
	// keys (keyring, fingerprint key).
	Worker
)

// Minimum lengths of the secrets that are passwords rather than keys.
const (
	minProviderSecret = 16
	minAdminToken     = 32
)

// placeholders are values that are someone's example, never a secret.
var placeholders = []string{
	DefaultProviderSecret, "changeme", "change-me", "secret", "password", "admin", "token", "test",
}

// CheckSecrets refuses a configuration in which a secret that process p
// needs is unset, a default or placeholder, or too weak: the keyring and
// fingerprint key always; for Serve the provider secret (the simulated and
// real 3-D Secure and APM connectors sign their callbacks with it, and
// they are always configured), and the admin token when it is set (unset,
// the admin API is off). Every problem is reported, each an *EnvError.
// `paygate dev` does not call it: it keeps local defaults.
func (c Config) CheckSecrets(p Process) error {
	var errs []error
	fail := func(name string, err error) { errs = append(errs, &EnvError{Var: name, Err: err}) }
	if err := c.checkKeyring(); err != nil {
		fail("PAYGATE_KEYRING", err)
	}
	if err := checkKey(c.FingerprintKey, 32); err != nil {
		fail("PAYGATE_FINGERPRINT_KEY", err)
	}
	if p == Serve {
		if err := checkPassword(c.ProviderSecret, minProviderSecret); err != nil {
			fail("PAYGATE_PROVIDER_SECRET", err)
		}
		if c.AdminToken != "" {
			if err := checkPassword(c.AdminToken, minAdminToken); err != nil {
				fail("PAYGATE_ADMIN_TOKEN", err)
			}
		}
		if err := checkCodecToken(c.Codec.Token); err != nil {
			fail("PAYGATE_CODEC_TOKEN", err)
		}
	}
	return errors.Join(errs...)
}

func checkPassword(v string, minLen int) error {
	v = strings.TrimSpace(v)
	switch {
	case v == "":
		return ErrUnset
	case slices.ContainsFunc(placeholders, func(p string) bool { return strings.EqualFold(v, p) }) || sameByte([]byte(v)):
		return ErrDefaultSecret
	case len(v) < minLen:
		return fmt.Errorf("%w: at least %d characters", ErrWeakSecret, minLen)
	}
	return nil
}

// checkKey checks a standard base64 key of at least minLen bytes.
func checkKey(v string, minLen int) error {
	if strings.TrimSpace(v) == "" {
		return ErrUnset
	}
	b, err := base64.StdEncoding.DecodeString(v)
	switch {
	case err != nil:
		// The decoding error could echo key material; do not include it.
		return fmt.Errorf("%w: not standard base64", ErrMalformed)
	case len(b) < minLen:
		return fmt.Errorf("%w: at least %d bytes", ErrWeakSecret, minLen)
	case sameByte(b):
		return ErrDefaultSecret
	}
	return nil
}

// parsedKeyring is the keyring FromEnv parsed, with the spec it came from.
type parsedKeyring struct {
	spec string
	ring *keyring.Keyring
}

// keyring is the configuration's keyring: the one FromEnv parsed while the
// spec is still the one it parsed (CheckSecrets and Open then parse
// nothing), else the spec parsed now (a Config made by hand, or one whose
// Keyring was set after FromEnv, as paygate dev sets its own).
func (c Config) keyring() (*keyring.Keyring, error) {
	if c.parsedKeys.ring != nil && c.parsedKeys.spec == c.Keyring {
		return c.parsedKeys.ring, nil
	}
	return keyring.Parse(c.Keyring)
}

// checkKeyring checks every key of the keyring: it can be read, and no key
// is a placeholder.
func (c Config) checkKeyring() error {
	spec := c.Keyring
	if strings.TrimSpace(spec) == "" {
		return ErrUnset
	}
	if _, err := c.keyring(); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	for _, entry := range strings.Split(spec, ",") {
		id, b64, _ := strings.Cut(strings.TrimSpace(entry), ":")
		if b, _ := base64.StdEncoding.DecodeString(b64); sameByte(b) {
			return fmt.Errorf("key %q %w", id, ErrDefaultSecret)
		}
	}
	return nil
}

// sameByte reports whether b is one byte repeated (all zeros, "aaaa..."):
// a placeholder, not a secret.
func sameByte(b []byte) bool {
	for _, x := range b {
		if x != b[0] {
			return false
		}
	}
	return true
}

// Gateway holds the opened clients.
type Gateway struct {
	Config   Config
	Logger   *slog.Logger
	DB       *gorm.DB
	Keys     *keyring.Keyring
	Vault    *vault.Vault
	Accounts *merchant.Service
	Temporal client.Client
	// Metrics are the process's Prometheus metrics, the Temporal SDK's
	// among them (served by cmd/paygate on Config.MetricsAddr).
	Metrics *telemetry.Metrics

	ids *txid.Generator // on the leased node

	connectorsOnce sync.Once
	connectors     *ConnectorSet
	connectorsErr  error
	stopLease      context.CancelFunc
	leaseDone      chan struct{}
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
	}
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
			Logger:           sdklog.NewStructuredLogger(logger.With("component", "temporal")),
			DataConverter:    dc,
			FailureConverter: fc,
			MetricsHandler:   g.Metrics.TemporalHandler(),
			Interceptors:     []interceptor.ClientInterceptor{tracing},
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
func openDatabase(ctx context.Context, url string, wait time.Duration, logger *slog.Logger) (*gorm.DB, error) {
	return retryFor(ctx, wait, "postgres", logger, func() (*gorm.DB, error) { return models.Open(ctx, url, logger) })
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
	orders := &api.TemporalOrders{Client: g.Temporal}
	// Connectors that cannot be built (FromEnv has checked the addresses,
	// so only a hand-made Config gets here) leave callbacks and
	// POST /v1/optimise refused; every other operation goes on.
	var callbacks api.CallbackReaders
	var offers api.ConnectorOffers
	if set, err := g.connectorSet(); err != nil {
		g.Logger.Error("connectors: every 3-D Secure and APM callback and every optimise request will be refused", "error", err)
	} else {
		callbacks, offers = set.Callbacks, set.Offers
	}
	// The back office shares the API's address under /console; its ops
	// users are who may decode histories in the Temporal UI.
	cons := &console.Server{
		Records: models.ConsoleRecords{DB: g.DB}, Ledger: ledger.New(g.DB), Orders: orders, Reruns: g.PayoutReruns(), Redeliver: redeliver.New(g.Temporal, g.DB), Keys: g.Accounts,
		NotifySchedule: g.Config.NotifySchedule, TemporalUIURL: g.Config.TemporalUIURL, Namespace: g.Config.TemporalNamespace,
		SecureCookies: strings.HasPrefix(g.Config.PublicURL, "https://"), SignInKey: g.consoleSignInKey(),
		Logger: g.Logger.With("component", "console"),
	}
	consoleHandler := cons.Handler()
	records := models.Records{DB: g.DB}
	replays := replay.New(g.DB)
	replays.Logger = g.Logger.With("component", "api")
	s := &api.Server{
		Accounts:  g.Accounts,
		Callbacks: callbacks,
		Offers:    offers,
		Orders:    orders,
		Ops:       orders,
		Records:   records,
		Replays:   replays,

		NotifySchedule: g.Config.NotifySchedule,
		PublicURL:      strings.TrimSuffix(g.Config.PublicURL, "/"),
		SessionKey:     g.sessionKey(),
		Shopper:        orders,
		Payouts:        &api.TemporalPayouts{Client: g.Temporal},
		Subscriptions:  &api.TemporalSubscriptions{Client: g.Temporal},
		TestIntervals:  g.Config.SubscriptionTestIntervals,
		Vault:          g.Vault,
		IDs:            g.ids,
		FormOrigins:    formOrigins(g.Config), // The simulated ACS and APM pages live there.
		Logger:         g.Logger.With("component", "api"),

		Admin: &admin.API{Token: g.Config.AdminToken, Redeliver: redeliver.New(g.Temporal, g.DB), Schedule: g.Config.NotifySchedule,
			PayoutReruns: g.PayoutReruns(), Erasures: erasure.New(g.DB), Logger: g.Logger.With("component", "api")},
		Codec:   g.codecEndpoint(cons),
		Metrics: g.Metrics,

		ForbidLiveSimulators: g.Config.ForbidLiveSimulators,
	}
	mux := http.NewServeMux()
	mux.Handle("/console/", consoleHandler)
	mux.Handle("/", s.Handler())
	return mux
}

// formOrigins are where the shopper's pages may send the shopper with a
// form: the simulated ACS and APM pages, at the address the browser sees.
func formOrigins(c Config) []string {
	origins := []string{c.AcquirerURL}
	if c.SimulatorPublicURL != "" && c.SimulatorPublicURL != c.AcquirerURL {
		origins = append(origins, c.SimulatorPublicURL)
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
		Vault:      g.Vault,
		Connectors: set.Activities,
		Accounts:   g.Accounts,
		Notifier:   notifyclient.NewClient(10*time.Second, g.Config.NotifyAllowPrivate),
		IDs:        g.transactionIDs(),
		Logger:     g.Logger.With("component", "activities"),
		Metrics:    g.Metrics,
	}, nil
}

// connectorSet builds the configuration's connectors on first use and
// returns the same ones after: a process that serves the API and runs the
// worker (paygate dev) has one client per connector.
func (g *Gateway) connectorSet() (*ConnectorSet, error) {
	g.connectorsOnce.Do(func() { g.connectors, g.connectorsErr = g.Config.BuildConnectors() })
	return g.connectors, g.connectorsErr
}

// transactionIDs is the process's transaction-id generator, or nil when it
// took no node (a one-off command).
func (g *Gateway) transactionIDs() activities.TransactionIDs {
	if g.ids == nil {
		return nil
	}
	return g.ids
}

// NewWorker returns a worker with every workflow and activity registered.
func (g *Gateway) NewWorker() (sdkworker.Worker, error) {
	acts, err := g.Activities()
	if err != nil {
		return nil, err
	}
	if n := g.Config.WorkerCacheSize; n > 0 {
		// The SDK keeps this one setting per process, read when the first
		// worker starts.
		sdkworker.SetStickyWorkflowCacheSize(n)
	}
	pacts, err := g.PayoutActivities()
	if err != nil {
		return nil, err
	}
	return worker.New(g.Temporal, worker.Activities{Orders: acts, Payouts: pacts, Ledger: g.LedgerActivities()},
		g.Config.WorkerTuning.apply), nil
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
