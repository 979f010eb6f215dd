package state

import "strconv"

// SchemaVersion is part of every key, so an incompatible layout change can
// live beside the old one while it drains.
const SchemaVersion = "v1"

// DefaultPrefix is the key prefix used when none is configured.
const DefaultPrefix = "shopbot:" + SchemaVersion + ":"

// chatTag is the hash tag shared by every key the intake scripts touch
// together, so they land in one Redis Cluster slot.
const chatTag = "{chats}:"

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
