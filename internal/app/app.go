// Package app wires the gateway's parts from configuration: the database,
// Temporal, the vault, the API handler and the worker. The commands and the
// integration tests build the gateway the same way through it.
package app

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"
	"gorm.io/gorm"

	"github.com/paygate/paygate/activities"
	"github.com/paygate/paygate/api"
	"github.com/paygate/paygate/internal/connector/acquirer"
	"github.com/paygate/paygate/internal/keyring"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/notify"
	"github.com/paygate/paygate/internal/redeliver"
	"github.com/paygate/paygate/internal/txid"
	"github.com/paygate/paygate/internal/vault"
	"github.com/paygate/paygate/models"
	"github.com/paygate/paygate/worker"
	"github.com/paygate/paygate/workflows"
)

// Config is the gateway's configuration. FromEnv reads it.
type Config struct {
	DatabaseURL       string
	TemporalAddress   string
	TemporalNamespace string
	Keyring           string // "id:base64key,..." first is active
	FingerprintKey    string // base64, 32 bytes
	AcquirerURL       string
	AcquirerTimeout   time.Duration
	HTTPAddr          string
	SimulatorAddr     string
	NodeName          string
	// NotifySchedule is the retry schedule of merchant notifications.
	NotifySchedule notify.Schedule
	// NotifyAllowPrivate lets notify_url point at loopback and private
	// addresses: for local development and tests only.
	NotifyAllowPrivate bool
	// AdminToken authenticates the admin API; empty turns it off.
	AdminToken string
	// PublicURL is the API's address as shoppers' browsers and providers
	// reach it (3-D Secure and APM callbacks, hosted pages).
	PublicURL string
	// ProviderSecret checks what the ACS and the APM provider send back.
	ProviderSecret string
}

// FromEnv reads the configuration from the environment, with local defaults.
func FromEnv() Config {
	c := Config{
		DatabaseURL:       os.Getenv("DATABASE_URL"),
		TemporalAddress:   envOr("TEMPORAL_ADDRESS", "127.0.0.1:7233"),
		TemporalNamespace: envOr("TEMPORAL_NAMESPACE", "default"),
		Keyring:           os.Getenv("PAYGATE_KEYRING"),
		FingerprintKey:    os.Getenv("PAYGATE_FINGERPRINT_KEY"),
		AcquirerURL:       envOr("ACQUIRER_URL", "http://127.0.0.1:8090"),
		AcquirerTimeout:   10 * time.Second,
		HTTPAddr:          envOr("PAYGATE_HTTP_ADDR", "127.0.0.1:8080"),
		SimulatorAddr:     envOr("PAYGATE_SIMULATOR_ADDR", "127.0.0.1:8090"),
	}
	if v := os.Getenv("ACQUIRER_TIMEOUT"); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			c.AcquirerTimeout = d
		}
	}
	c.NotifySchedule = notify.DefaultSchedule()
	if v := os.Getenv("PAYGATE_NOTIFY_SCHEDULE"); v != "" {
		if s, err := notify.ParseSchedule(v); err == nil {
			c.NotifySchedule = s
		}
	}
	c.NotifyAllowPrivate = os.Getenv("PAYGATE_NOTIFY_ALLOW_PRIVATE") == "true"
	c.AdminToken = os.Getenv("PAYGATE_ADMIN_TOKEN")
	c.PublicURL = envOr("PAYGATE_PUBLIC_URL", "http://"+c.HTTPAddr)
	c.ProviderSecret = envOr("PAYGATE_PROVIDER_SECRET", DefaultProviderSecret)
	c.NodeName, _ = os.Hostname()
	c.NodeName += "/" + strconv.Itoa(os.Getpid())
	return c
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// DefaultProviderSecret is the simulators' shared secret when none is set;
// real connectors bring their own.
const DefaultProviderSecret = "sim-secret"

// Gateway holds the opened clients.
type Gateway struct {
	Config   Config
	Logger   *slog.Logger
	DB       *gorm.DB
	Keys     *keyring.Keyring
	Vault    *vault.Vault
	Accounts *merchant.Service
	Temporal client.Client
}

// Open connects to Postgres (and migrates it) and, when withTemporal is set,
// to Temporal (and registers the search attributes).
func Open(ctx context.Context, cfg Config, logger *slog.Logger, withTemporal bool) (*Gateway, error) {
	if cfg.DatabaseURL == "" {
		return nil, errors.New("DATABASE_URL is not set")
	}
	keys, err := keyring.Parse(cfg.Keyring)
	if err != nil {
		return nil, fmt.Errorf("PAYGATE_KEYRING: %w", err)
	}
	fpKey, err := base64.StdEncoding.DecodeString(cfg.FingerprintKey)
	if err != nil || len(fpKey) < 32 {
		return nil, errors.New("PAYGATE_FINGERPRINT_KEY must be at least 32 bytes in standard base64")
	}
	db, err := models.Open(ctx, cfg.DatabaseURL, logger)
	if err != nil {
		return nil, err
	}
	if err := models.Migrate(ctx, db); err != nil {
		return nil, err
	}
	g := &Gateway{
		Config:   cfg,
		Logger:   logger,
		DB:       db,
		Keys:     keys,
		Vault:    vault.New(db, keys, fpKey),
		Accounts: merchant.NewService(db, keys, 5*time.Second),
	}
	if withTemporal {
		c, err := client.DialContext(ctx, client.Options{
			HostPort:  cfg.TemporalAddress,
			Namespace: cfg.TemporalNamespace,
			Logger:    sdklog.NewStructuredLogger(logger.With("component", "temporal")),
		})
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

// sessionKey signs hosted payment sessions; it is derived from the
// fingerprint key so no other secret needs managing.
func (g *Gateway) sessionKey() []byte {
	m := hmac.New(sha256.New, []byte(g.Config.FingerprintKey))
	m.Write([]byte("paygate checkout sessions"))
	return m.Sum(nil)
}

// Close releases the clients.
func (g *Gateway) Close() {
	if g.Temporal != nil {
		g.Temporal.Close()
	}
	if sqlDB, err := g.DB.DB(); err == nil {
		_ = sqlDB.Close()
	}
}

// APIHandler returns the merchant API.
func (g *Gateway) APIHandler() http.Handler {
	orders := &api.TemporalOrders{Client: g.Temporal}
	s := &api.Server{
		Accounts: g.Accounts,
		Orders:   orders,
		Ops:      orders,
		Store:    api.DBStore{DB: g.DB},

		NotifySchedule: g.Config.NotifySchedule,
		PublicURL:      strings.TrimSuffix(g.Config.PublicURL, "/"),
		ProviderSecret: g.Config.ProviderSecret,
		SessionKey:     g.sessionKey(),
		Shopper:        orders,
		Vault:          g.Vault,
		IDs:            txid.NewGenerator(txid.NodeFromString(g.Config.NodeName)),
		DB:             g.DB,
		Logger:         g.Logger.With("component", "api"),

		Admin: &api.Admin{Token: g.Config.AdminToken, Redeliver: redeliver.New(g.Temporal, g.DB), Schedule: g.Config.NotifySchedule},
	}
	return s.Handler()
}

// Activities returns the activities with their clients.
func (g *Gateway) Activities() (*activities.Activities, error) {
	acq, err := acquirer.NewClient(g.Config.AcquirerURL, g.Config.AcquirerTimeout)
	if err != nil {
		return nil, fmt.Errorf("acquirer client: %w", err)
	}
	return &activities.Activities{
		DB:        g.DB,
		Vault:     g.Vault,
		Acquirer:  acq,
		Accounts:  g.Accounts,
		Notifier:  notify.NewClient(10*time.Second, g.Config.NotifyAllowPrivate),
		Connector: workflows.ConnectorName,
		Logger:    g.Logger.With("component", "activities"),
	}, nil
}

// NewWorker returns a worker with every workflow and activity registered.
func (g *Gateway) NewWorker() (sdkworker.Worker, error) {
	acts, err := g.Activities()
	if err != nil {
		return nil, err
	}
	return worker.New(g.Temporal, acts), nil
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
	return nil
}

func upper(s string) string {
	b := []byte(s)
	for i, ch := range b {
		if 'a' <= ch && ch <= 'z' {
			b[i] = ch - 'a' + 'A'
		}
	}
	return string(b)
}
