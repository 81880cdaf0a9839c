# Paygate: `make run` runs the whole gateway locally, `make test` runs every test.
SHELL := /bin/bash
GO ?= go
export GOTOOLCHAIN := local
# -trimpath keeps the checkout's directory out of the build cache's keys, so a fresh
# clone (CI) reuses what an earlier run here compiled.
export GOFLAGS := -buildvcs=false -trimpath

TEMPORAL_CLI_VERSION := v1.5.1
TEMPORAL := .bin/temporal
# The SDK's determinism checker; v0.6.0 builds with Go 1.26 and reads
# workflows written against SDK v1.50.0. The version is in the file name, so
# changing it installs the new one.
WORKFLOWCHECK_VERSION := v0.6.0
WORKFLOWCHECK := .bin/workflowcheck-$(WORKFLOWCHECK_VERSION)
# Stripe's mock of its API: the Stripe connector's tests send every call to
# it (internal/adapters/connectors/stripe), which it checks against Stripe's
# published API. The version is in the file name, so changing it installs
# the new one; the tests find it by PAYGATE_STRIPE_MOCK.
STRIPE_MOCK_VERSION := v0.203.0
STRIPE_MOCK := .bin/stripe-mock-$(STRIPE_MOCK_VERSION)
export PAYGATE_STRIPE_MOCK := $(CURDIR)/$(STRIPE_MOCK)
# Reads go test -json: results, failed tests' output, where the time went.
TESTREPORT := .bin/testreport

.PHONY: run test test-short test-race flake-hunt flake-hunt-clean build bench bench-recon vet chromium fuzz workflowcheck rerun-load test-temporal-postgres chaos

run:
	$(GO) run ./cmd/paygate dev

# make test prints each package's result as it ends, the whole output of
# any test that failed, and at the end where the time went (cmd/testreport);
# the same report is kept in .data/test-report.txt.
test: $(TEMPORAL) $(WORKFLOWCHECK) $(STRIPE_MOCK) chromium $(TESTREPORT)
	@t0=$$(date +%s); \
	$(GO) vet ./... && $(WORKFLOWCHECK) ./workflows/... || exit 1; \
	t1=$$(date +%s); mkdir -p .data; \
	set -o pipefail; $(GO) test -json -count=1 -timeout 60m ./... | $(TESTREPORT) | tee .data/test-report.txt || exit 1; \
	t2=$$(date +%s); \
	$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZ_SMOKE_TIME) || exit 1; \
	t3=$$(date +%s); \
	echo "make test passed in $$((t3-t0)) s: vet and workflowcheck $$((t1-t0)) s, tests $$((t2-t1)) s, fuzz smoke $$((t3-t2)) s" | tee -a .data/test-report.txt

$(TESTREPORT): $(wildcard cmd/testreport/*.go internal/dev/testreport/*.go)
	$(GO) build -o $@ ./cmd/testreport

# The unit and integration packages under the race detector (the fault
# suite's processes are built without it; its own package is included).
# Several times slower than make test.
test-race: $(TEMPORAL) $(STRIPE_MOCK) chromium $(TESTREPORT)
	@mkdir -p .data
	set -o pipefail; $(GO) test -race -json -count=1 -timeout 90m ./... | $(TESTREPORT) | tee .data/test-race-report.txt

# The flake hunt: the slow packages (the integration suite, the fault
# suite's short plan, the console, the commands, the dev environment)
# FLAKE_COUNT times in a row, each run as make test runs it (a fresh stack
# and database each time; -count would reuse one suite's database), each
# failure listed at the end (.data/flake-hunt.txt). make flake-hunt-clean
# runs the whole make test FLAKE_RUNS times, each on a fresh clone of HEAD,
# and reports each run's verdict and time.
FLAKE_COUNT ?= 5
FLAKE_RUNS ?= 3
FLAKE_PKGS ?= ./integration/ ./integration/chaos/ ./api/console/ ./cmd/paygate/ ./internal/dev/devenv/
flake-hunt: $(TEMPORAL) chromium $(TESTREPORT)
	@mkdir -p .data; : > .data/flake-hunt.txt; failed=0; \
	for i in $$(seq 1 $(FLAKE_COUNT)); do \
	  start=$$(date +%s); \
	  if set -o pipefail; $(GO) test -json -count=1 -timeout 60m $(FLAKE_PKGS) | $(TESTREPORT) > .data/flake-hunt-$$i.txt; then verdict=passed; else verdict=FAILED; failed=$$((failed+1)); fi; \
	  echo "run $$i of $(FLAKE_COUNT): $$verdict in $$(( $$(date +%s) - start )) s" | tee -a .data/flake-hunt.txt; \
	  grep -E '^FAIL ' .data/flake-hunt-$$i.txt | tee -a .data/flake-hunt.txt; \
	done; \
	echo "flake hunt: $$failed of $(FLAKE_COUNT) runs failed (each run's report: .data/flake-hunt-N.txt)" | tee -a .data/flake-hunt.txt; \
	[ $$failed = 0 ]

flake-hunt-clean:
	@mkdir -p .data; : > .data/flake-hunt-clean.txt; \
	for i in $$(seq 1 $(FLAKE_RUNS)); do \
	  dir=$$(mktemp -d); git clone -q . $$dir/paygate; \
	  start=$$(date +%s); \
	  if (cd $$dir/paygate && CI=true $(MAKE) --no-print-directory test) > $$dir/make-test.log 2>&1; then verdict=passed; else verdict=FAILED; fi; \
	  line="run $$i on a fresh clone of $$(git rev-parse --short HEAD): $$verdict in $$(( $$(date +%s) - start )) s"; \
	  echo "$$line" | tee -a .data/flake-hunt-clean.txt; \
	  grep -E '^FAIL' $$dir/make-test.log | tee -a .data/flake-hunt-clean.txt; \
	  if [ $$verdict = passed ]; then rm -rf $$dir; else echo "  log kept: $$dir/make-test.log" | tee -a .data/flake-hunt-clean.txt; fi; \
	done

# make test ends with a smoke of every fuzz target: 500 new inputs
# each (a count, not a time: a time limit can lapse while the workers start
# on a busy machine), on top of the committed seeds go test has just run. Long runs
# are make fuzz.
FUZZ_SMOKE_TIME ?= 500x

# Non-deterministic calls in workflow code (time.Now, map iteration, ...);
# a finding fails the target. Silence one only with a //workflowcheck:ignore
# comment that says why it is safe.
workflowcheck: $(WORKFLOWCHECK)
	$(WORKFLOWCHECK) ./workflows/...

test-short: $(STRIPE_MOCK)
	$(GO) test -count=1 -short ./...

# Every fuzz target (func FuzzXxx in a *_fuzz_test.go) runs for FUZZTIME, one
# after another, from one instrumented test binary per package (built once,
# not once per target); a failure is reported and the others still run. New failing
# inputs land in the package's testdata/fuzz/FuzzXxx/, where plain go test
# (make test) runs them from then on.
FUZZTIME ?= 30s
FUZZ_PKGS ?= $(sort $(patsubst %/,%,$(dir $(shell find . -name '*_fuzz_test.go' -not -path './.*'))))

fuzz:
	@failed=""; bin=$$(mktemp -d); cache=$$($(GO) env GOCACHE)/fuzz; mod=$$($(GO) list -m); \
	for pkg in $(FUZZ_PKGS); do \
	  $(GO) test -c -fuzz=. -o $$bin/pkg.test $$pkg || { failed="$$failed $$pkg"; continue; }; \
	  for name in $$(cd $$pkg && $$bin/pkg.test -test.list '^Fuzz' | grep '^Fuzz'); do \
	    echo "== $$pkg $$name for $(FUZZTIME)"; \
	    (cd $$pkg && $$bin/pkg.test -test.run='^$$' -test.fuzz="^$$name\$$" -test.fuzztime=$(FUZZTIME) \
	      -test.fuzzcachedir=$$cache/$$mod/$${pkg#./}) || failed="$$failed $$pkg:$$name"; \
	  done; \
	done; \
	rm -rf $$bin; \
	if [ -n "$$failed" ]; then echo "fuzz: failed:$$failed"; exit 1; fi; echo "fuzz: every target passed"

build:
	$(GO) build -o paygate ./cmd/paygate

bench: $(TEMPORAL)
	$(GO) run ./cmd/paygate bench

# One settlement day of RECON_LINES captures reconciled whole: fetched,
# matched, stored, posted to the ledger and checked (docs/benchmarks.md).
# make test runs the same path with 2,000 (TestReconcileDayAtScaleSmoke).
RECON_LINES ?= 100000
bench-recon:
	PAYGATE_RECON_LINES=$(RECON_LINES) $(GO) test -count=1 -timeout 30m -run '^$$' -bench '^BenchmarkReconcileDay$$' -benchtime 1x ./internal/adapters/reconcile/

# 1,000 payouts failed once at the rail, re-run as one batch that is cut
# short and resumed; each must complete and be paid once. make test runs the
# same test with 20.
RERUN_LOAD ?= 1000
rerun-load: $(TEMPORAL)
	PAYGATE_RERUN_LOAD=$(RERUN_LOAD) $(GO) test -count=1 -timeout 30m -v -run '^TestPayoutRerunBatchInterruptedResumes$$' ./integration/

# The fault suite's full run: ten minutes of traffic while every part of the
# stack is broken alone and then together (make test runs a two-minute
# version). The report's table ends the output and .data/chaos-report.txt.
# PAYGATE_CHAOS_TEMPORAL=postgres runs Temporal on the suite's Postgres
# instead of the dev server (its binaries built on first use).
chaos: $(TEMPORAL)
	@mkdir -p .data
	set -o pipefail; PAYGATE_CHAOS=full $(GO) test -count=1 -timeout 40m -v -run '^TestChaos$$' ./integration/chaos/ | tee .data/chaos-report.txt

# The integration suite on the Temporal server backed by Postgres (server,
# schema tool and UI built from Go modules at a pinned version on first use,
# several minutes); make test keeps the faster dev server.
test-temporal-postgres:
	PAYGATE_TEST_TEMPORAL=postgres $(GO) test -count=1 -timeout 30m ./integration/

# The Temporal dev server (with its Web UI), built from Go modules at a pinned
# version on first use.
$(TEMPORAL):
	GOBIN=$(CURDIR)/.bin $(GO) install github.com/temporalio/cli/cmd/temporal@$(TEMPORAL_CLI_VERSION)

# workflowcheck, built from Go modules at a pinned version on first use.
$(WORKFLOWCHECK):
	GOBIN=$(CURDIR)/.bin/workflowcheck.tmp $(GO) install go.temporal.io/sdk/contrib/tools/workflowcheck@$(WORKFLOWCHECK_VERSION)
	mv .bin/workflowcheck.tmp/workflowcheck $@ && rmdir .bin/workflowcheck.tmp

$(STRIPE_MOCK):
	GOBIN=$(CURDIR)/.bin/stripe-mock.tmp $(GO) install github.com/stripe/stripe-mock@$(STRIPE_MOCK_VERSION)
	mv .bin/stripe-mock.tmp/stripe-mock $@ && rmdir .bin/stripe-mock.tmp

# Debian's Chromium drives the hosted payment pages in the browser tests.
# Installed when missing and we may (root); otherwise the tests say what to do.
chromium:
	@command -v chromium >/dev/null 2>&1 || command -v $${PAYGATE_CHROMIUM:-chromium} >/dev/null 2>&1 || \
	  { if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	      echo "installing Debian's chromium for the browser tests"; \
	      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	    else echo "chromium is missing: install Debian's chromium (apt-get install chromium) or set PAYGATE_CHROMIUM"; fi; }
