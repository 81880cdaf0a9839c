package migrations

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoad(t *testing.T) {
	file := func(body string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(body)} }
	tests := []struct {
		name     string
		fsys     fstest.MapFS
		versions []int
		wantErr  string // part of the error; "" for none
	}{
		{name: "in order whatever the listing", fsys: fstest.MapFS{
			"0002_b.sql": file("B"), "0001_a.sql": file("A"), "README": file("not a migration"),
		}, versions: []int{1, 2}},
		{name: "gap", fsys: fstest.MapFS{"0001_a.sql": file("A"), "0003_c.sql": file("C")}, wantErr: "want version 2"},
		{name: "repeat", fsys: fstest.MapFS{"0001_a.sql": file("A"), "0001_b.sql": file("B")}, wantErr: "want version 2"},
		{name: "starts at 2", fsys: fstest.MapFS{"0002_a.sql": file("A")}, wantErr: "want version 1"},
		{name: "no number", fsys: fstest.MapFS{"baseline.sql": file("A")}, wantErr: "want a name such as"},
		{name: "short number", fsys: fstest.MapFS{"1_a.sql": file("A")}, wantErr: "want a name such as"},
		{name: "zero", fsys: fstest.MapFS{"0000_a.sql": file("A")}, wantErr: "want a name such as"},
		{name: "none", fsys: fstest.MapFS{}, wantErr: "no migrations"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := load(tt.fsys)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("load() error = %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("load() error = %v", err)
			}
			var got []int
			for _, m := range ms {
				got = append(got, m.Version)
				if len(m.Checksum) != 64 {
					t.Errorf("%s: checksum %q", m.Name, m.Checksum)
				}
			}
			if len(got) != len(tt.versions) || got[0] != tt.versions[0] || got[len(got)-1] != tt.versions[len(tt.versions)-1] {
				t.Errorf("versions = %v, want %v", got, tt.versions)
			}
		})
	}
}

func TestEmbeddedMigrationsLoad(t *testing.T) {
	ms, err := All()
	if err != nil {
		t.Fatal(err)
	}
	if Latest() != len(ms) || ms[0].Name != "0001_baseline.sql" {
		t.Errorf("Latest() = %d, first %s; want %d and 0001_baseline.sql", Latest(), ms[0].Name, len(ms))
	}
}

func TestCompare(t *testing.T) {
	ms := []Migration{{Version: 1, Name: "0001_a.sql", Checksum: "aa"}, {Version: 2, Name: "0002_b.sql", Checksum: "bb"}}
	tests := []struct {
		name    string
		rows    []applied
		pending int
		wantErr error
	}{
		{name: "fresh", pending: 2},
		{name: "part way", rows: []applied{{1, "0001_a.sql", "aa"}}, pending: 1},
		{name: "up to date", rows: []applied{{1, "0001_a.sql", "aa"}, {2, "0002_b.sql", "bb"}}},
		{name: "newer", rows: []applied{{1, "0001_a.sql", "aa"}, {2, "0002_b.sql", "bb"}, {3, "0003_c.sql", "cc"}}, wantErr: ErrAhead},
		{name: "edited", rows: []applied{{1, "0001_a.sql", "a2"}}, wantErr: ErrEdited},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pending, err := compare(ms, tt.rows)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("compare() error = %v, want %v", err, tt.wantErr)
			}
			if len(pending) != tt.pending {
				t.Errorf("pending = %v, want %d", pending, tt.pending)
			}
		})
	}
}
