//go:build !skewnext

package main

import (
	"context"
	"log/slog"

	"shopbot/state/redisstore"
)

// nextGenWork runs the work only a build of the next schema generation
// knows; this generation has none (skewnext.go is the version-skew test's
// next generation).
func nextGenWork(context.Context, redisstore.Client, *slog.Logger) (stop func()) { return func() {} }
