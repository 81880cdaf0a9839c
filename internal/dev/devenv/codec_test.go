package devenv

import (
	"bytes"
	"errors"
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
	got, err := devServerArgs(o, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(TemporalTuning), "--ui-codec-endpoint", endpoint)
	if tail := got[len(got)-len(want):]; !slices.Equal(tail, want) || slices.Contains(got, "--headless") {
		t.Errorf("args = %q, want them to end in %q, UI on", got, want)
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
