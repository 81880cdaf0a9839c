package railsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
)

// errClosed is returned by the Server's methods after Close.
var errClosed = errors.New("rail simulator: closed")

// store is the data file: one JSON line per change of a transfer, the last
// line of a transfer being its current state. Only one process may use a
// file at a time.
type store struct {
	path string
	f    *os.File
	// err is set once a write failed. The file may then end in a torn line,
	// so nothing more is appended to it; the next start drops that line.
	err error
}

// openStore reads the transfers kept at path, rewrites the file with one
// line per transfer so that it does not grow without end, and opens it for
// appending.
func openStore(path string, logger *slog.Logger) (*store, []*record, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, nil, fmt.Errorf("create data directory: %w", err)
	}
	recs, err := readRecords(path, logger)
	if err != nil {
		return nil, nil, err
	}
	if err := rewrite(path, recs); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, fileMode)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &store{path: path, f: f}, recs, nil
}

// readRecords returns the current state of every transfer in path, in
// creation order. A last line without its newline is a write that a crash
// cut short; it was never acknowledged, so it is dropped. Any other line
// that is not a transfer means the file is not what we wrote, and the rail
// refuses to start rather than forget a payment.
func readRecords(path string, logger *slog.Logger) ([]*record, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	byID := make(map[string]*record)
	idOfKey := make(map[string]string)
	var order []string
	for lineNo := 1; len(data) > 0; lineNo++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			logger.Warn("rail simulator: dropping a torn last line", "path", path, "line", lineNo, "bytes", len(data))
			break
		}
		line := data[:i]
		data = data[i+1:]
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		r := &record{}
		if err := json.Unmarshal(line, r); err != nil || r.ID == "" || r.IdempotencyKey == "" || len(r.Attempts) == 0 {
			return nil, fmt.Errorf("%s line %d: not a transfer record", path, lineNo)
		}
		if id, ok := idOfKey[r.IdempotencyKey]; ok && id != r.ID {
			return nil, fmt.Errorf("%s line %d: a second transfer under one idempotency key", path, lineNo)
		}
		idOfKey[r.IdempotencyKey] = r.ID
		if _, ok := byID[r.ID]; !ok {
			order = append(order, r.ID)
		}
		byID[r.ID] = r
	}
	recs := make([]*record, len(order))
	for i, id := range order {
		recs[i] = byID[id]
	}
	return recs, nil
}

// rewrite replaces path with recs atomically: a temporary file is written
// and fsynced, renamed over path, and the directory fsynced so the rename
// itself survives a crash.
func rewrite(path string, recs []*record) error {
	var buf bytes.Buffer
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("encode transfer %s: %w", r.ID, err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fileMode)
	if err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	_, err = f.Write(buf.Bytes())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename %s: %w", tmp, err)
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// append writes r as one line and fsyncs it.
func (st *store) append(r *record) error {
	if st.err != nil {
		return st.err
	}
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode transfer %s: %w", r.ID, err)
	}
	line = append(line, '\n')
	if _, err := st.f.Write(line); err != nil {
		st.err = fmt.Errorf("append to %s: %w", st.path, err)
		return st.err
	}
	if err := st.f.Sync(); err != nil {
		st.err = fmt.Errorf("sync %s: %w", st.path, err)
		return st.err
	}
	return nil
}

func (st *store) close() error {
	if err := st.f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", st.path, err)
	}
	return nil
}
