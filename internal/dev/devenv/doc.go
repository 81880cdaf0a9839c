// Package devenv bootstraps the local services Paygate needs during
// development and in tests: a PostgreSQL server (an existing one, or a
// private cluster it creates and starts) and a Temporal dev server run from
// the temporal CLI.
package devenv
