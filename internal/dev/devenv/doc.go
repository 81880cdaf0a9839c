// Package devenv bootstraps the local services Paygate needs during
// development and in tests: a PostgreSQL server (an existing one, or a
// private cluster it creates and starts) and a Temporal dev server: the
// temporal CLI built at a pinned version, started through the SDK's own
// launcher (go.temporal.io/sdk/testsuite).
package devenv
