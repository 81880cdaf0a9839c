package ports

import (
	"errors"
	"net"
	"slices"
	"syscall"
	"testing"
	"time"
)

func TestReserveGivesDistinctPortsBelowTheEphemeralRange(t *testing.T) {
	lo, hi := portRange()
	r, err := Reserve(8)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	seen := map[int]bool{}
	for _, p := range r.Ports() {
		if p < lo || p >= hi {
			t.Errorf("port %d outside %d-%d", p, lo, hi)
		}
		if seen[p] {
			t.Errorf("port %d given twice", p)
		}
		seen[p] = true
	}
}

// A second reservation, in this process or another, never gets a port a
// live reservation holds; a released one may be had again.
func TestReservationsExcludeEachOther(t *testing.T) {
	dir, err := lockDir()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Reserve(1)
	if err != nil {
		t.Fatal(err)
	}
	p := r.Port(0)
	if _, ok := tryBlock(dir, p, []int{0}); ok {
		t.Fatalf("port %d was reserved twice", p)
	}
	r.Release()
	locks, ok := tryBlock(dir, p, []int{0})
	if !ok {
		t.Fatalf("port %d stays held after Release", p)
	}
	for _, f := range locks {
		f.Close()
	}
	r.Release() // twice is harmless
}

// A port something already listens on is never reserved.
func TestReserveSkipsAPortInUse(t *testing.T) {
	dir, err := lockDir()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Reserve(1)
	if err != nil {
		t.Fatal(err)
	}
	p := r.Port(0)
	ln, err := net.Listen("tcp", r.Addr(0))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	r.Release()
	if _, ok := tryBlock(dir, p, []int{0}); ok {
		t.Fatalf("port %d reserved while a server listens on it", p)
	}
}

func TestReserveBlock(t *testing.T) {
	offsets := []int{0, 1, 10, 50, 100}
	r, err := ReserveBlock(offsets...)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	got := r.Ports()
	want := make([]int, len(offsets))
	for i, off := range offsets {
		want[i] = got[0] + off
	}
	if !slices.Equal(got, want) {
		t.Errorf("ReserveBlock = %v, want %v", got, want)
	}
	// The server that takes the block can listen on every port of it.
	for i := range got {
		ln, err := net.Listen("tcp", r.Addr(i))
		if err != nil {
			t.Fatalf("listen on reserved %s: %v", r.Addr(i), err)
		}
		ln.Close()
	}
}

func TestClosedRefusesAndHoldsItsPort(t *testing.T) {
	c, err := Closed()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = net.DialTimeout("tcp", c.Addr(), time.Second)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial %s: %v, want connection refused", c.Addr(), err)
	}
	if ln, err := net.Listen("tcp", c.Addr()); err == nil {
		ln.Close()
		t.Errorf("another socket could listen on %s", c.Addr())
	}
}
