package fulfil

import (
	"crypto/rand"
	"encoding/hex"
)

func newAttemptID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
