// Package ports hands loopback TCP ports to the servers that tests and
// `paygate dev` start, without the race of choosing a free port, releasing
// it and binding it again later.
//
// Two kinds of server need a port number before they listen: a child
// process that chooses its own socket (Postgres, the Temporal server), and a
// server that must come back on the same address after a restart (the fault
// suite restarts every part). Reserve serves both. Its ports lie below the
// kernel's ephemeral range, which the kernel never hands to a bind on port 0
// or to an outgoing connection, and each is held under a lock file that
// every reservation in every process honours, for as long as the
// reservation lives. Nothing else on the machine takes such a port unless
// it asks for that very number.
//
// Everything else should bind port 0 and keep its listener; Closed gives an
// address that refuses connections for tests of a server that is down.
package ports

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// lowest is the bottom of the range reservations come from. The top is the
// start of the ephemeral range, and at most 32767: the Temporal server
// keeps membership ports in a smallint.
const (
	lowest  = 20000
	highest = 32768
)

// Reservation holds ports until Release.
type Reservation struct {
	ports []int

	mu    sync.Mutex
	locks []*os.File
}

// Reserve holds n distinct ports.
func Reserve(n int) (*Reservation, error) {
	r := &Reservation{}
	for range n {
		base, locks, err := claim([]int{0})
		if err != nil {
			r.Release()
			return nil, err
		}
		r.ports = append(r.ports, base)
		r.locks = append(r.locks, locks...)
	}
	return r, nil
}

// ReserveBlock holds base+off for every offset, for servers that take a run
// of neighbouring ports from one base. The first port is the base.
func ReserveBlock(offsets ...int) (*Reservation, error) {
	base, locks, err := claim(offsets)
	if err != nil {
		return nil, err
	}
	r := &Reservation{locks: locks}
	for _, off := range offsets {
		r.ports = append(r.ports, base+off)
	}
	return r, nil
}

// Ports returns the reserved ports in the order they were asked for.
func (r *Reservation) Ports() []int { return r.ports }

// Port returns the i-th reserved port.
func (r *Reservation) Port(i int) int { return r.ports[i] }

// Addr returns "127.0.0.1:<i-th port>".
func (r *Reservation) Addr(i int) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(r.ports[i]))
}

// Release lets other reservations have the ports. It is safe to call more
// than once and on nil.
func (r *Reservation) Release() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range r.locks {
		_ = f.Close() // closing the file drops its lock
	}
	r.locks = nil
}

// claim finds a base for which every base+off is locked here and bindable.
func claim(offsets []int) (int, []*os.File, error) {
	lo, hi := portRange()
	span := 0
	for _, off := range offsets {
		span = max(span, off)
	}
	if hi-lo <= span {
		return 0, nil, fmt.Errorf("reserve ports: the range %d-%d below the ephemeral ports is too small", lo, hi)
	}
	dir, err := lockDir()
	if err != nil {
		return 0, nil, err
	}
	for range 500 {
		base := lo + rand.IntN(hi-lo-span)
		if locks, ok := tryBlock(dir, base, offsets); ok {
			return base, locks, nil
		}
	}
	return 0, nil, errors.New("reserve ports: no free port found in 500 tries")
}

func tryBlock(dir string, base int, offsets []int) ([]*os.File, bool) {
	var locks []*os.File
	for _, off := range offsets {
		f, ok := lockPort(dir, base+off)
		if !ok {
			for _, l := range locks {
				_ = l.Close()
			}
			return nil, false
		}
		locks = append(locks, f)
	}
	return locks, true
}

// lockPort takes the port's lock file and then checks that nothing on the
// machine listens on the port already. A check after the lock is enough:
// every other reserver waits on the lock, and the kernel never picks the
// port on its own.
func lockPort(dir string, port int) (*os.File, bool) {
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)), os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		return nil, false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		return nil, false
	}
	for _, host := range []string{"127.0.0.1", "0.0.0.0"} {
		ln, err := net.Listen("tcp4", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			_ = f.Close()
			return nil, false
		}
		_ = ln.Close()
	}
	return f, true
}

var (
	dirOnce sync.Once
	dirPath string
	dirErr  error
)

// lockDir is one directory for every user of the machine, so that tests
// run by different users do not take each other's ports.
func lockDir() (string, error) {
	dirOnce.Do(func() {
		dirPath = filepath.Join(os.TempDir(), "paygate-ports")
		if dirErr = os.MkdirAll(dirPath, 0o777); dirErr != nil {
			return
		}
		// Sticky and open to all, as /tmp itself.
		_ = os.Chmod(dirPath, 0o1777)
	})
	if dirErr != nil {
		return "", fmt.Errorf("reserve ports: %w", dirErr)
	}
	return dirPath, nil
}

// portRange is [lowest, the start of the ephemeral range), capped at
// highest.
func portRange() (int, int) {
	hi := highest
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > lowest {
				hi = min(hi, n)
			}
		}
	}
	return lowest, hi
}
