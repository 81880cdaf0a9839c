// Package connectors finds an acquirer connector by its name. The
// connectors themselves live one per sub-package (simacquirer, simbank, stripe);
// the composition root builds the ones the configuration names and
// registers them here. The registry is generic so that each user sees the
// connectors through its own interface: the activities ask for what they
// call, the API for what verifies callbacks.
package connectors

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

var (
	// ErrUnknown means no connector of that name is registered: the
	// configuration does not run it.
	ErrUnknown = errors.New("unknown connector")
	// ErrDuplicate means a connector of that name is already registered.
	ErrDuplicate = errors.New("connector registered twice")
	// ErrInvalidName means a name cannot name a connector.
	ErrInvalidName = errors.New("invalid connector name")
)

// MaxNameLen bounds a connector name: it is stored on accounts and orders.
const MaxNameLen = 32

// Registry maps connector names to connectors of type C. It is filled once
// at start-up and only read afterwards; it is safe for concurrent reads.
type Registry[C any] struct {
	def    string
	byName map[string]C
}

// New returns an empty registry whose default (the connector an empty name
// asks for) is defaultName.
func New[C any](defaultName string) *Registry[C] {
	return &Registry[C]{def: defaultName, byName: map[string]C{}}
}

// Register adds c under name. A name registered before is refused with
// ErrDuplicate, an unusable one with ErrInvalidName.
func (r *Registry[C]) Register(name string, c C) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if _, ok := r.byName[name]; ok {
		return fmt.Errorf("%w: %q", ErrDuplicate, name)
	}
	r.byName[name] = c
	return nil
}

// Get returns the connector registered under name; an empty name asks for
// the default. A name that is not registered is refused with ErrUnknown,
// naming the registered ones.
func (r *Registry[C]) Get(name string) (C, error) {
	if name == "" {
		name = r.def
	}
	c, ok := r.byName[name]
	if !ok {
		var zero C
		return zero, fmt.Errorf("%w %q (registered: %s)", ErrUnknown, name, strings.Join(r.Names(), ", "))
	}
	return c, nil
}

// Default is the name an empty name stands for.
func (r *Registry[C]) Default() string { return r.def }

// Names lists the registered names in order.
func (r *Registry[C]) Names() []string {
	names := make([]string, 0, len(r.byName))
	for n := range r.byName {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// CheckName refuses a name that cannot name a connector: empty, longer than
// MaxNameLen, or with characters other than lower-case letters, digits and
// '-'.
func CheckName(name string) error {
	if name == "" || len(name) > MaxNameLen {
		return fmt.Errorf("%w: %q must be 1 to %d characters", ErrInvalidName, name, MaxNameLen)
	}
	for _, ch := range name {
		if (ch < 'a' || ch > 'z') && (ch < '0' || ch > '9') && ch != '-' {
			return fmt.Errorf("%w: %q may hold only a-z, 0-9 and '-'", ErrInvalidName, name)
		}
	}
	return nil
}
