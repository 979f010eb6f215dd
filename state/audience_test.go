package state_test

import (
	"errors"
	"testing"

	"shopbot/state"
)

// An audience reads back as it is written; malformed ones are refused.
func TestAudienceParseAndString(t *testing.T) {
	for _, s := range []string{"all", "lang:ru", "line:giftcards", "recent:30", "inactive:60", "wallet", "never", "referred"} {
		a, err := state.ParseAudience(s)
		if err != nil || a.String() != s {
			t.Errorf("%q: %+v %v, reads back as %q", s, a, err, a.String())
		}
	}
	if a, err := state.ParseAudience(""); err != nil || a.Kind != state.AudienceAll {
		t.Errorf(`"": %+v %v`, a, err)
	}
	for _, s := range []string{"lang", "lang:", "line:", "recent:0", "recent:x", "inactive:99999", "wallet:1", "everyone"} {
		if _, err := state.ParseAudience(s); !errors.Is(err, state.ErrBadAudience) {
			t.Errorf("%q accepted: %v", s, err)
		}
	}
}
