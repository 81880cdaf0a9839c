package app

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strconv"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
)

// TemporalTLS is how the gateway reaches a Temporal cluster over TLS, with
// a client certificate when the cluster asks for one (mTLS).
type TemporalTLS struct {
	// CertFile and KeyFile are the client certificate and its key (PEM);
	// both or neither.
	CertFile, KeyFile string
	// CAFile is the CA that signed the server's certificate; empty means
	// the system's roots.
	CAFile string
	// ServerName overrides the name checked in the server's certificate.
	ServerName string
	// Enabled turns TLS on without files (Temporal Cloud with an API key).
	Enabled bool
}

// WorkerTuning sizes the worker; zero values keep the gateway's defaults.
type WorkerTuning struct {
	WorkflowPollers, ActivityPollers                     int
	WorkflowTaskSlots, ActivitySlots, LocalActivitySlots int
}

// on reports whether any TLS setting asks for TLS.
func (t TemporalTLS) on() bool {
	return t.Enabled || t.CertFile != "" || t.KeyFile != "" || t.CAFile != "" || t.ServerName != ""
}

// tlsConfig builds the client's TLS configuration, reading the files.
func (t TemporalTLS) tlsConfig() (*tls.Config, error) {
	if !t.on() {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return nil, errors.New("TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY go together")
	}
	if t.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("temporal client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("temporal CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("temporal CA %s: no PEM certificate in it", t.CAFile)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// clusterOptions adds to opts what a real cluster needs: TLS and an API
// key, and the connection's compression. The key is sent as a bearer token,
// which Temporal Cloud expects over TLS, so an API key turns TLS on.
func clusterOptions(cfg Config, opts client.Options) (client.Options, error) {
	t := cfg.TemporalTLS
	if cfg.TemporalAPIKey != "" {
		t.Enabled = true
		opts.Credentials = client.NewAPIKeyStaticCredentials(cfg.TemporalAPIKey)
	}
	tc, err := t.tlsConfig()
	if err != nil {
		return opts, err
	}
	opts.ConnectionOptions.TLS = tc
	if cfg.TemporalNoGzip {
		opts.ConnectionOptions.GrpcCompression = &client.GrpcCompressionNone{}
	}
	return opts, nil
}

// apply sets the tuning on worker options.
func (w WorkerTuning) apply(o *sdkworker.Options) {
	if w.WorkflowPollers > 0 {
		o.MaxConcurrentWorkflowTaskPollers = w.WorkflowPollers
	}
	if w.ActivityPollers > 0 {
		o.MaxConcurrentActivityTaskPollers = w.ActivityPollers
	}
	if w.WorkflowTaskSlots > 0 {
		o.MaxConcurrentWorkflowTaskExecutionSize = w.WorkflowTaskSlots
	}
	if w.ActivitySlots > 0 {
		o.MaxConcurrentActivityExecutionSize = w.ActivitySlots
	}
	if w.LocalActivitySlots > 0 {
		o.MaxConcurrentLocalActivityExecutionSize = w.LocalActivitySlots
	}
}

// temporalClientFromEnv reads the cluster and worker settings.
func temporalClientFromEnv(c *Config, getenv func(string) string, fail func(string, error)) {
	c.TemporalTLS = TemporalTLS{
		CertFile: getenv("TEMPORAL_TLS_CERT"), KeyFile: getenv("TEMPORAL_TLS_KEY"),
		CAFile: getenv("TEMPORAL_TLS_CA"), ServerName: getenv("TEMPORAL_TLS_SERVER_NAME"),
	}
	if v := getenv("TEMPORAL_TLS"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			fail("TEMPORAL_TLS", fmt.Errorf("%w: want true or false", ErrMalformed))
		}
		c.TemporalTLS.Enabled = b
	}
	if (c.TemporalTLS.CertFile == "") != (c.TemporalTLS.KeyFile == "") {
		fail("TEMPORAL_TLS_KEY", fmt.Errorf("%w: TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY go together", ErrMalformed))
	}
	c.TemporalAPIKey = getenv("TEMPORAL_API_KEY")
	if v := getenv("TEMPORAL_GRPC_GZIP"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			fail("TEMPORAL_GRPC_GZIP", fmt.Errorf("%w: want true or false", ErrMalformed))
		}
		c.TemporalNoGzip = !b
	}
	for _, f := range []struct {
		name string
		to   *int
	}{
		{"PAYGATE_WORKER_WORKFLOW_POLLERS", &c.Worker.Tuning.WorkflowPollers},
		{"PAYGATE_WORKER_ACTIVITY_POLLERS", &c.Worker.Tuning.ActivityPollers},
		{"PAYGATE_WORKER_WORKFLOW_SLOTS", &c.Worker.Tuning.WorkflowTaskSlots},
		{"PAYGATE_WORKER_ACTIVITY_SLOTS", &c.Worker.Tuning.ActivitySlots},
		{"PAYGATE_WORKER_LOCAL_ACTIVITY_SLOTS", &c.Worker.Tuning.LocalActivitySlots},
	} {
		v := getenv(f.name)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10_000 {
			fail(f.name, fmt.Errorf("%w: want a whole number from 1 to 10000", ErrMalformed))
			continue
		}
		*f.to = n
	}
}
