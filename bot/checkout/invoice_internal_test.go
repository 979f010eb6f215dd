package checkout

import (
	"testing"

	"shopbot/state"
)

// The invoice names the recipient as the summary did: a Stars username
// keeps its @, an in-game top-up its label; a gift's invite link is left
// out for the field values.
func TestInvoiceRecipientAsTheSummaryShowedIt(t *testing.T) {
	for _, tc := range []struct {
		q    state.Quote
		want string
	}{
		{state.Quote{Line: "stars", For: "@durov", Fields: map[string]string{"username": "durov"}}, "@durov"},
		{state.Quote{Line: "games", For: "Player ID: 5123456789", Fields: map[string]string{"player_id": "5123456789"}}, "Player ID: 5123456789"},
		{state.Quote{Line: "gifts", For: "https://s.team/p/x", Fields: map[string]string{"region": "EU", "invite_url": "https://s.team/p/x"}}, "EU"},
	} {
		if got := recipient(&tc.q); got != tc.want {
			t.Errorf("%s: recipient %q, want %q", tc.q.Line, got, tc.want)
		}
	}
}
