package models

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"
)

// TestSparingLogger: the SQL of a statement is rendered only when it is
// logged: an error other than not-found, a slow statement, or every one at
// Info.
func TestSparingLogger(t *testing.T) {
	tests := []struct {
		name     string
		level    gormlogger.LogLevel
		took     time.Duration
		err      error
		rendered bool
	}{
		{"a quick statement", gormlogger.Warn, time.Millisecond, nil, false},
		{"a row not found", gormlogger.Warn, time.Millisecond, gorm.ErrRecordNotFound, false},
		{"an error", gormlogger.Warn, time.Millisecond, errors.New("deadlock detected"), true},
		{"a slow statement", gormlogger.Warn, slowStatement + time.Second, nil, true},
		{"every statement at Info", gormlogger.Info, time.Millisecond, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			inner := gormlogger.NewSlogLogger(slog.New(slog.NewJSONHandler(&out, nil)), gormlogger.Config{
				SlowThreshold: slowStatement, LogLevel: gormlogger.Warn, IgnoreRecordNotFoundError: true})
			l := sparingLogger{Interface: inner}.LogMode(tt.level)
			rendered := false
			l.Trace(context.Background(), time.Now().Add(-tt.took), func() (string, int64) {
				rendered = true
				return "SELECT 1", 1
			}, tt.err)
			if rendered != tt.rendered {
				t.Errorf("rendered %v, want %v", rendered, tt.rendered)
			}
			if logged := out.Len() > 0; logged != tt.rendered {
				t.Errorf("logged %v (%s), want %v", logged, out.String(), tt.rendered)
			}
		})
	}
}
