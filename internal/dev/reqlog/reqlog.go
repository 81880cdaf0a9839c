// Package reqlog is the request log of the simulators: one structured line
// per request with its method, path (identifiers only, never the body),
// status and duration, plus what the handlers noted in an info value of
// the simulator's own type.
package reqlog

import (
	"context"
	"log/slog"
	"net/http"
	"time"
)

type infoKey[T any] struct{}

// From returns the info value the middleware put in ctx for handlers to
// fill in, or a fresh one outside a logged request.
func From[T any](ctx context.Context) *T {
	if info, ok := ctx.Value(infoKey[T]{}).(*T); ok {
		return info
	}
	return new(T)
}

// Middleware logs each request under msg. newInfo makes the request's info
// value (it may read headers); attrs turns it into the line's own fields.
func Middleware[T any](logger *slog.Logger, msg string, newInfo func(*http.Request) *T, attrs func(*T) []slog.Attr, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info := newInfo(r)
		rec := &statusRecorder{ResponseWriter: w}
		ctx := context.WithValue(r.Context(), infoKey[T]{}, info)
		next.ServeHTTP(rec, r.WithContext(ctx))
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		fields := []slog.Attr{
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", status),
		}
		fields = append(fields, attrs(info)...)
		fields = append(fields, slog.Duration("duration", time.Since(start)))
		logger.LogAttrs(ctx, slog.LevelInfo, msg, fields...)
	})
}

// statusRecorder remembers the status a handler answered with.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}
