# syntax=docker/dockerfile:1

# Build stage: a static paygate binary.
FROM golang:1.26 AS build
WORKDIR /src
ENV CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -ldflags="-s -w" -o /out/paygate ./cmd/paygate
# The simulator keeps its charges and payouts under /data; a volume mounted
# there takes this directory's owner, so the unprivileged user can write.
RUN mkdir -p /out/data

# Runtime stage: no shell, no package manager, runs as an unprivileged user.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/paygate /usr/local/bin/paygate
COPY --from=build --chown=65532:65532 /out/data /data
USER nonroot:nonroot
EXPOSE 8080 8090 8091 8092 9464
ENTRYPOINT ["/usr/local/bin/paygate"]
CMD ["serve"]
