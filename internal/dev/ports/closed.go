package ports

import (
	"fmt"
	"net"
	"strconv"
	"syscall"
)

// ClosedPort is a loopback address that refuses every connection, for
// tests of a server that is down. Its port is bound but not listening, so
// a connection is refused at once and no other socket can take the port
// while it is held.
type ClosedPort struct {
	fd   int
	addr string
}

// Closed binds a socket to a loopback port without listening on it.
func Closed() (*ClosedPort, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("closed port: %w", err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		_ = syscall.Close(fd)
		return nil, fmt.Errorf("closed port: bind: %w", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		_ = syscall.Close(fd)
		return nil, fmt.Errorf("closed port: %w", err)
	}
	port := sa.(*syscall.SockaddrInet4).Port
	return &ClosedPort{fd: fd, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}, nil
}

// Addr is "127.0.0.1:<port>".
func (c *ClosedPort) Addr() string { return c.addr }

// Close frees the port.
func (c *ClosedPort) Close() error { return syscall.Close(c.fd) }
