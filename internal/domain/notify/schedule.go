package notify

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"
)

// Schedule is the retry schedule of deliveries. It is deterministic, so
// workflows may use it.
type Schedule struct {
	Initial time.Duration // first retry delay, default 30s
	Max     time.Duration // longest delay, default 1h
	Horizon time.Duration // give up once this long has passed since the first attempt, default 72h
}

// Default schedule values.
const (
	DefaultInitial = 30 * time.Second
	DefaultMax     = time.Hour
	DefaultHorizon = 72 * time.Hour
)

// DefaultSchedule returns the schedule of docs/design.md §6: 30s doubling up to 1h,
// for 72 hours.
func DefaultSchedule() Schedule {
	return Schedule{Initial: DefaultInitial, Max: DefaultMax, Horizon: DefaultHorizon}
}

// WithDefaults returns s with its zero (or negative) fields set to the defaults.
func (s Schedule) WithDefaults() Schedule {
	if s.Initial <= 0 {
		s.Initial = DefaultInitial
	}
	if s.Max <= 0 {
		s.Max = DefaultMax
	}
	if s.Horizon <= 0 {
		s.Horizon = DefaultHorizon
	}
	return s
}

// ParseSchedule reads a schedule such as "initial=30s,max=1h,horizon=72h".
// Any subset of the keys may be given, the rest take their defaults; the
// empty string gives DefaultSchedule. Unknown or repeated keys, bad or
// non-positive durations and a max below initial are errors.
func ParseSchedule(spec string) (Schedule, error) {
	var s Schedule
	seen := map[string]bool{}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, value, ok := strings.Cut(part, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok {
			return Schedule{}, fmt.Errorf("retry schedule %q: want key=duration", part)
		}
		var field *time.Duration
		switch name {
		case "initial":
			field = &s.Initial
		case "max":
			field = &s.Max
		case "horizon":
			field = &s.Horizon
		default:
			return Schedule{}, fmt.Errorf("retry schedule: unknown key %q (want initial, max or horizon)", name)
		}
		if seen[name] {
			return Schedule{}, fmt.Errorf("retry schedule: %s given twice", name)
		}
		seen[name] = true
		d, err := time.ParseDuration(value)
		if err != nil {
			return Schedule{}, fmt.Errorf("retry schedule %s: %w", name, err)
		}
		if d <= 0 {
			return Schedule{}, fmt.Errorf("retry schedule %s: %s is not positive", name, value)
		}
		*field = d
	}
	s = s.WithDefaults()
	if s.Max < s.Initial {
		return Schedule{}, fmt.Errorf("retry schedule: max %s is below initial %s", s.Max, s.Initial)
	}
	return s, nil
}

// Delay is the wait before retry number attempt, counted from 1 (after the
// first failed attempt, attempt is 1). The base delay is Initial*2^(attempt-1)
// capped at Max (zero fields take their defaults; attempt below 1 counts as
// 1). The result lies in [base/2, base], in whole milliseconds, at a point
// chosen by an FNV-1a hash of seed and attempt, so the same seed and attempt
// always give the same delay. Horizon is not applied here: the caller stops
// retrying once Horizon has passed since the first attempt.
func (s Schedule) Delay(seed string, attempt int) time.Duration {
	s = s.WithDefaults()
	if attempt < 1 {
		attempt = 1
	}
	d := s.Initial
	for i := 1; i < attempt && d < s.Max; i++ {
		if d > s.Max/2 { // doubling would pass Max (and might overflow)
			d = s.Max
			break
		}
		d *= 2
	}
	d = min(d, s.Max)
	h := fnv.New64a()
	h.Write([]byte(seed))
	h.Write([]byte{0})
	h.Write([]byte(strconv.Itoa(attempt)))
	half := d / 2
	steps := uint64((d - half) / time.Millisecond) // jitter in whole milliseconds
	return half + time.Duration(h.Sum64()%(steps+1))*time.Millisecond
}
