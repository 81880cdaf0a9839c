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

# Runtime stage: no shell, no package manager, runs as an unprivileged user.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/paygate /usr/local/bin/paygate
USER nonroot:nonroot
EXPOSE 8080 8090
ENTRYPOINT ["/usr/local/bin/paygate"]
CMD ["serve"]
