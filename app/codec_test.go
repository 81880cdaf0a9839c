package app

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/domain/keyring"
)

func TestCodecFromEnv(t *testing.T) {
	const token = "Zx4-9f2c1e7a4b5d6e8f0a1b2c3d4e5f6a7b8c9d"
	tests := []struct {
		name    string
		token   string
		origins string
		bad     []string
		want    CodecConfig
	}{
		{name: "off", want: CodecConfig{}},
		{name: "token and the UI's origin", token: token, origins: "http://127.0.0.1:8233",
			want: CodecConfig{Token: token, CORSOrigins: []string{"http://127.0.0.1:8233"}}},
		{name: "origins listed, normalised as browsers send them", origins: " HTTP://LocalHost:8233/ , https://temporal.example.com",
			want: CodecConfig{CORSOrigins: []string{"http://localhost:8233", "https://temporal.example.com"}}},
		{name: "token with a slash", token: "abc/def" + token, bad: []string{"PAYGATE_CODEC_TOKEN"}},
		{name: "token with a space", token: "abc def" + token, bad: []string{"PAYGATE_CODEC_TOKEN"}},
		{name: "origin with a path", origins: "http://127.0.0.1:8233/namespaces", bad: []string{"PAYGATE_CODEC_CORS_ORIGIN"}},
		{name: "origin without a scheme", origins: "127.0.0.1:8233", bad: []string{"PAYGATE_CODEC_CORS_ORIGIN"}},
		{name: "origin a wildcard", origins: "*", bad: []string{"PAYGATE_CODEC_CORS_ORIGIN"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearEnv(t)
			t.Setenv("PAYGATE_CODEC_TOKEN", tt.token)
			t.Setenv("PAYGATE_CODEC_CORS_ORIGIN", tt.origins)
			c, err := FromEnv()
			got := refused(err)
			if len(got) != len(tt.bad) {
				t.Fatalf("FromEnv() error = %v, want refusals of %v", err, tt.bad)
			}
			for _, name := range tt.bad {
				if !errors.Is(got[name], ErrMalformed) {
					t.Errorf("%s: %v, want ErrMalformed", name, got[name])
				}
			}
			if tt.bad == nil && (c.Edge.Codec.Token != tt.want.Token || !slices.Equal(c.Edge.Codec.CORSOrigins, tt.want.CORSOrigins)) {
				t.Errorf("Codec = %+v, want %+v", c.Edge.Codec, tt.want)
			}
		})
	}
}

func TestCheckSecretsCodecToken(t *testing.T) {
	spec, err := keyring.GenerateSpec("k1")
	if err != nil {
		t.Fatal(err)
	}
	good := Config{
		Keyring:        spec,
		FingerprintKey: "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=",
		Connectors:     ConnectorsConfig{ProviderSecret: "9f2c1e7a4b5d6e8f0a1b2c3d"},
	}
	for _, tc := range []struct {
		name  string
		token string
		p     Process
		want  error
	}{
		{"off", "", Serve, nil},
		{"long and random", "b7e1c9d2a4f6081e3c5a7b9d1f2e4c6a8b0d", Serve, nil},
		{"short", "0123456789abcdef", Serve, ErrWeakSecret},
		{"placeholder", "token", Serve, ErrDefaultSecret},
		{"one character repeated", strings.Repeat("a", 40), Serve, ErrDefaultSecret},
		{"the worker serves no endpoint", "short", Worker, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := good
			c.Edge.Codec.Token = tc.token
			got := refused(c.CheckSecrets(tc.p))["PAYGATE_CODEC_TOKEN"]
			if !errors.Is(got, tc.want) || (tc.want == nil && got != nil) {
				t.Errorf("PAYGATE_CODEC_TOKEN %q: %v, want %v", tc.token, got, tc.want)
			}
		})
	}
}
