package fulfil_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"shopbot/bot/bottest"
	"shopbot/reseller"
	"shopbot/reseller/resellersim"
	"shopbot/state"
)

// TestImpossibleUpstreamChargeSendsTheOrderToReview: an upstream that
// reports a negative charged_usd, or more than twice the quoted cost, for
// a completed order does not get it delivered and counted: the order goes
// to review with the reason, the figure is not stored, the buyer gets no
// codes yet and the admins are alerted.
func TestImpossibleUpstreamChargeSendsTheOrderToReview(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, charged, why string }{
		{"negative", "-1000.0000", "is negative"},
		{"far above the quote", "25.0000", "is more than 2 times the quoted 10.0000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newShop(t)
			srv := httptest.NewServer(resellersim.ReportCharged(s.Sim, tc.charged))
			t.Cleanup(srv.Close)
			client, err := reseller.New(srv.URL+"/api/v1", "test-key", reseller.WithMaxAttempts(1), reseller.WithTimeout(5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			s.Client = client
			o := s.Paid(giftCards(1), state.PayStars)
			b := s.Worker(nil)
			s.Run(b)
			got := s.WaitStatus(o.ID, state.OrderNeedsReview)
			if !strings.Contains(got.Reason, "charged_usd "+tc.charged+" "+tc.why) {
				t.Fatalf("reason %q", got.Reason)
			}
			// The upstream took its real price for the order in review.
			up, _ := s.Sim.Order(int(got.UpstreamNumber))
			s.External = s.External.Add(up.ChargedUSD)
			if !got.ChargedUSD.IsZero() || len(got.Codes) != 0 {
				t.Fatalf("stored charged %s, %d codes", got.ChargedUSD, len(got.Codes))
			}
			s.WaitMessage(bottest.Admin, "charged_usd")
			s.Idle(b)
			for _, m := range s.BotMessages(chat) {
				if strings.Contains(m.RawText, "<code>") {
					t.Fatalf("the buyer got codes: %q", m.RawText)
				}
			}
		})
	}
}
