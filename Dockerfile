# Build a static binary, then ship it alone in a distroless image as a non-root user.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/shopbot ./cmd/shopbot

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/shopbot /shopbot
USER nonroot:nonroot
EXPOSE 8080
ENTRYPOINT ["/shopbot"]
