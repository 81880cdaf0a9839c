package devenv

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
)

// TestDevServerWiresTheUIToTheCodec: with a codec endpoint the dev server's
// UI is pointed at it, after the tuning flags; without one nothing changes.
func TestDevServerWiresTheUIToTheCodec(t *testing.T) {
	const endpoint = "http://127.0.0.1:8080/codec/s3cret"
	o := TemporalOptions{Binary: "/bin/temporal", DBFile: "t.db", CodecEndpoint: endpoint}.withDefaults()
	got, err := devServerOptions(o, io.Discard, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(TemporalTuning), "--ui-codec-endpoint", endpoint)
	if !slices.Equal(got.ExtraArgs, want) || !got.EnableUI {
		t.Errorf("ExtraArgs = %q (UI %v), want %q", got.ExtraArgs, got.EnableUI, want)
	}
	if UICodecArgs("") != nil {
		t.Errorf("UICodecArgs(\"\") = %q, want none", UICodecArgs(""))
	}
}

// TestDevServerLogHidesTheCodecSecret: the launcher logs the dev server's
// arguments; the codec endpoint's secret is not among what it writes.
func TestDevServerLogHidesTheCodecSecret(t *testing.T) {
	const secret = "f6a20fd3ddb0f60556191837cc0144f7"
	var buf bytes.Buffer
	logger := withoutCodecSecret(slog.New(slog.NewJSONHandler(&buf, nil)), "http://127.0.0.1:8080/codec/"+secret)
	logger.With("endpoint", "http://x/codec/"+secret).WithGroup("g").Info("Starting DevServer "+secret,
		"Args", []string{"server", "--ui-codec-endpoint", "http://127.0.0.1:8080/codec/" + secret},
		"err", errors.New("dial "+secret), slog.Group("nested", "v", secret), "port", 7233)
	if strings.Contains(buf.String(), secret) || !strings.Contains(buf.String(), "/codec/(secret)") || !strings.Contains(buf.String(), "7233") {
		t.Errorf("log: %s", buf.String())
	}
	if l := withoutCodecSecret(logger, ""); l != logger {
		t.Error("no endpoint: the logger is wrapped all the same")
	}
}
