# Paygate: `make run` runs the whole gateway locally, `make test` runs every test.
SHELL := /bin/bash
GO ?= go
export GOTOOLCHAIN := local
export GOFLAGS := -buildvcs=false

TEMPORAL_CLI_VERSION := v1.5.1
TEMPORAL := .bin/temporal

.PHONY: run test test-short build bench vet

run:
	$(GO) run ./cmd/paygate dev

test: $(TEMPORAL)
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 60m ./...

test-short:
	$(GO) test -count=1 -short ./...

build:
	$(GO) build -o paygate ./cmd/paygate

bench: $(TEMPORAL)
	$(GO) run ./cmd/paygate bench

# The Temporal dev server (with its Web UI), built from Go modules at a pinned
# version on first use.
$(TEMPORAL):
	GOBIN=$(CURDIR)/.bin $(GO) install github.com/temporalio/cli/cmd/temporal@$(TEMPORAL_CLI_VERSION)
