package devenv

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// UICodecArgs are the dev server flags that point its Web UI at the
// gateway's codec endpoint, so the UI shows the encrypted payloads decoded;
// none for an empty endpoint. The UI's browser calls endpoint + "/decode",
// so the endpoint carries its secret as a path segment (api.CodecEndpoint).
func UICodecArgs(endpoint string) []string {
	if endpoint == "" {
		return nil
	}
	return []string{"--ui-codec-endpoint", endpoint}
}

// withoutCodecSecret returns logger with the codec endpoint's secret (its
// last path segment) replaced in every attribute. The SDK's launcher logs
// the dev server's arguments, which hold the endpoint, and whoever reads
// the log must not be able to decrypt the histories with it.
func withoutCodecSecret(logger *slog.Logger, endpoint string) *slog.Logger {
	i := strings.LastIndexByte(endpoint, '/')
	if endpoint == "" || i < 0 || i == len(endpoint)-1 {
		return logger
	}
	return slog.New(&redactHandler{Handler: logger.Handler(), secret: endpoint[i+1:]})
}

// redactHandler replaces a secret in the attributes of every record it
// passes on.
type redactHandler struct {
	slog.Handler
	secret string
}

func (h *redactHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.redact(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.Handler.Handle(ctx, out)
}

func (h *redactHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = h.attr(a)
	}
	return &redactHandler{Handler: h.Handler.WithAttrs(clean), secret: h.secret}
}

func (h *redactHandler) WithGroup(name string) slog.Handler {
	return &redactHandler{Handler: h.Handler.WithGroup(name), secret: h.secret}
}

func (h *redactHandler) redact(s string) string { return strings.ReplaceAll(s, h.secret, "(secret)") }

// attr redacts one attribute: strings, lists of strings (the launcher's
// arguments), groups, and anything else by its printed form.
func (h *redactHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.redact(v.String()))
	case slog.KindGroup:
		group := v.Group()
		clean := make([]any, len(group))
		for i, g := range group {
			clean[i] = h.attr(g)
		}
		return slog.Group(a.Key, clean...)
	case slog.KindAny:
		if list, ok := v.Any().([]string); ok {
			clean := make([]string, len(list))
			for i, s := range list {
				clean[i] = h.redact(s)
			}
			return slog.Any(a.Key, clean)
		}
		if s := fmt.Sprint(v.Any()); strings.Contains(s, h.secret) {
			return slog.String(a.Key, h.redact(s))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
