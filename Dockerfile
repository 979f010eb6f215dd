# Build a static binary, then ship it alone in a distroless image as a non-root user.
# The version is stamped at build: docker build --build-arg VERSION=$(git describe --always --dirty) .
FROM golang:1.26 AS build
ARG VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X shopbot/bot.Version=${VERSION}" -o /out/shopbot ./cmd/shopbot
# The journal's directory (JOURNAL_DIR), owned by the runtime user so that a
# volume mounted there starts writable (distroless has no shell to mkdir).
RUN mkdir -p /out/journal

FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=dev
LABEL org.opencontainers.image.title="shopbot" org.opencontainers.image.version="${VERSION}"
COPY --from=build /out/shopbot /shopbot
COPY --from=build --chown=nonroot:nonroot /out/journal /var/lib/shopbot/journal
ENV JOURNAL_DIR=/var/lib/shopbot/journal
USER nonroot:nonroot
EXPOSE 8080
# /healthz on HTTP_ADDR answers 200 when the shop runs and Redis answers
# (distroless has no shell or curl: the binary asks itself).
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 CMD ["/shopbot", "check", "--live"]
ENTRYPOINT ["/shopbot"]
