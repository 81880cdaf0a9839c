package app

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
)

// writeCert writes a self-signed certificate and its key as PEM files.
func writeCert(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "paygate-worker"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "client.pem"), filepath.Join(dir, "client.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

func TestTemporalClientFromEnv(t *testing.T) {
	tests := []struct {
		name  string
		env   map[string]string
		bad   []string
		check func(t *testing.T, c Config)
	}{
		{name: "nothing set: plain, default worker", check: func(t *testing.T, c Config) {
			if c.TemporalTLS.on() || c.TemporalAPIKey != "" || c.Worker.Tuning != (WorkerTuning{}) {
				t.Errorf("config = %+v %+v", c.TemporalTLS, c.Worker.Tuning)
			}
		}},
		{name: "mtls files", env: map[string]string{"TEMPORAL_TLS_CERT": "c.pem", "TEMPORAL_TLS_KEY": "c.key",
			"TEMPORAL_TLS_CA": "ca.pem", "TEMPORAL_TLS_SERVER_NAME": "temporal.internal"}, check: func(t *testing.T, c Config) {
			want := TemporalTLS{CertFile: "c.pem", KeyFile: "c.key", CAFile: "ca.pem", ServerName: "temporal.internal"}
			if c.TemporalTLS != want {
				t.Errorf("tls = %+v, want %+v", c.TemporalTLS, want)
			}
		}},
		{name: "api key", env: map[string]string{"TEMPORAL_API_KEY": "k-123"}, check: func(t *testing.T, c Config) {
			if c.TemporalAPIKey != "k-123" {
				t.Errorf("api key = %q", c.TemporalAPIKey)
			}
		}},
		{name: "worker tuning", env: map[string]string{"PAYGATE_WORKER_WORKFLOW_POLLERS": "4", "PAYGATE_WORKER_ACTIVITY_POLLERS": "8",
			"PAYGATE_WORKER_WORKFLOW_SLOTS": "400", "PAYGATE_WORKER_ACTIVITY_SLOTS": "300", "PAYGATE_WORKER_LOCAL_ACTIVITY_SLOTS": "500"},
			check: func(t *testing.T, c Config) {
				want := WorkerTuning{WorkflowPollers: 4, ActivityPollers: 8, WorkflowTaskSlots: 400, ActivitySlots: 300, LocalActivitySlots: 500}
				if c.Worker.Tuning != want {
					t.Errorf("tuning = %+v, want %+v", c.Worker.Tuning, want)
				}
			}},
		{name: "gzip off", env: map[string]string{"TEMPORAL_GRPC_GZIP": "false"}, check: func(t *testing.T, c Config) {
			if !c.TemporalNoGzip {
				t.Error("TemporalNoGzip = false, want true")
			}
		}},
		{name: "gzip on, as the SDK's default", env: map[string]string{"TEMPORAL_GRPC_GZIP": "true"}, check: func(t *testing.T, c Config) {
			if c.TemporalNoGzip {
				t.Error("TemporalNoGzip = true, want false")
			}
		}},
		{name: "gzip not a boolean", env: map[string]string{"TEMPORAL_GRPC_GZIP": "fast"}, bad: []string{"TEMPORAL_GRPC_GZIP"}},
		{name: "a certificate without its key", env: map[string]string{"TEMPORAL_TLS_CERT": "c.pem"}, bad: []string{"TEMPORAL_TLS_KEY"}},
		{name: "tls not a boolean", env: map[string]string{"TEMPORAL_TLS": "on"}, bad: []string{"TEMPORAL_TLS"}},
		{name: "pollers zero", env: map[string]string{"PAYGATE_WORKER_WORKFLOW_POLLERS": "0"}, bad: []string{"PAYGATE_WORKER_WORKFLOW_POLLERS"}},
		{name: "slots not a number", env: map[string]string{"PAYGATE_WORKER_ACTIVITY_SLOTS": "many"}, bad: []string{"PAYGATE_WORKER_ACTIVITY_SLOTS"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Config
			var failed []string
			temporalClientFromEnv(&c, func(k string) string { return tt.env[k] }, func(name string, _ error) { failed = append(failed, name) })
			if strings.Join(failed, ",") != strings.Join(tt.bad, ",") {
				t.Fatalf("refused %v, want %v", failed, tt.bad)
			}
			if tt.check != nil {
				tt.check(t, c)
			}
		})
	}
}

func TestClusterOptions(t *testing.T) {
	dir := t.TempDir()
	cert, key := writeCert(t, dir)
	notPEM := filepath.Join(dir, "ca.txt")
	_ = os.WriteFile(notPEM, []byte("not a certificate"), 0o600)
	tests := []struct {
		name      string
		cfg       Config
		wantTLS   bool
		wantCerts int
		wantRoots bool
		wantCreds bool
		wantPlain bool // requests sent without gzip
		wantErr   string
	}{
		{name: "plain", cfg: Config{}},
		{name: "mtls with a CA", cfg: Config{TemporalTLS: TemporalTLS{CertFile: cert, KeyFile: key, CAFile: cert, ServerName: "t.internal"}},
			wantTLS: true, wantCerts: 1, wantRoots: true},
		{name: "api key turns tls on", cfg: Config{TemporalAPIKey: "k"}, wantTLS: true, wantCreds: true},
		{name: "gzip off", cfg: Config{TemporalNoGzip: true}, wantPlain: true},
		{name: "missing certificate file", cfg: Config{TemporalTLS: TemporalTLS{CertFile: filepath.Join(dir, "nope.pem"), KeyFile: key}},
			wantErr: "temporal client certificate"},
		{name: "a CA file without PEM", cfg: Config{TemporalTLS: TemporalTLS{CAFile: notPEM}}, wantErr: "no PEM certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, err := clusterOptions(tt.cfg, client.Options{HostPort: "t.internal:7233"})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc := opts.ConnectionOptions.TLS
			if (tc != nil) != tt.wantTLS {
				t.Fatalf("tls = %v, want on %t", tc, tt.wantTLS)
			}
			if tc != nil && (len(tc.Certificates) != tt.wantCerts || (tc.RootCAs != nil) != tt.wantRoots) {
				t.Errorf("tls: %d certificates, roots %t", len(tc.Certificates), tc.RootCAs != nil)
			}
			if (opts.Credentials != nil) != tt.wantCreds {
				t.Errorf("credentials = %v, want set %t", opts.Credentials, tt.wantCreds)
			}
			// nil is the SDK's default, gzip.
			_, plain := opts.ConnectionOptions.GrpcCompression.(*client.GrpcCompressionNone)
			if plain != tt.wantPlain || !plain && opts.ConnectionOptions.GrpcCompression != nil {
				t.Errorf("compression = %T, want none %t", opts.ConnectionOptions.GrpcCompression, tt.wantPlain)
			}
		})
	}
}

func TestWorkerTuningApplies(t *testing.T) {
	o := sdkworker.Options{MaxConcurrentActivityExecutionSize: 200, MaxConcurrentWorkflowTaskExecutionSize: 200}
	WorkerTuning{WorkflowPollers: 3, WorkflowTaskSlots: 50}.apply(&o)
	if o.MaxConcurrentWorkflowTaskPollers != 3 || o.MaxConcurrentWorkflowTaskExecutionSize != 50 || o.MaxConcurrentActivityExecutionSize != 200 {
		t.Errorf("options = %+v", o)
	}
}
