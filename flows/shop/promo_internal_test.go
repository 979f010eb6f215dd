package shop

import (
	"shopbot/flows"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/locales"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// The discount of a code: percent and fixed, floored at the upstream cost
// unless the code allows going below, never below a cent or a Star; a
// second code replaces the first; lines and minimum order are checked.
func TestDiscounted(t *testing.T) {
	sh := &Shop{Pricing: Pricing{StarsUSDRate: dec("0.013")}}
	env := &flows.Env{Lang: locales.En, Now: time.Now()}
	base := &flows.Quote{Line: "keys", UpstreamUSD: dec("18.00"), ShopUSD: dec("20.00"), Stars: 1539}
	for _, tc := range []struct {
		name  string
		p     flows.Promo
		price string
		why   string
	}{
		{"percent", flows.Promo{Code: "P5", Percent: dec("5")}, "19.00", ""},
		{"fixed", flows.Promo{Code: "F1", OffUSD: dec("1.5")}, "18.50", ""},
		{"floor at cost", flows.Promo{Code: "P50", Percent: dec("50")}, "18.00", ""},
		{"below cost allowed", flows.Promo{Code: "P50B", Percent: dec("50"), BelowCost: true}, "10.00", ""},
		{"never free", flows.Promo{Code: "ALL", Percent: dec("100"), BelowCost: true}, "0.01", ""},
		{"other line", flows.Promo{Code: "GC", Percent: dec("5"), Lines: []string{"giftcards"}}, "", "does not apply"},
		{"minimum", flows.Promo{Code: "MIN", Percent: dec("5"), MinUSD: dec("25")}, "", "orders of $25.00 or more"},
	} {
		q, why, _ := sh.discounted(env, base, &tc.p)
		if tc.why != "" {
			if q != nil || !contains(why, tc.why) {
				t.Fatalf("%s: %v %q", tc.name, q, why)
			}
			continue
		}
		if why != "" || !q.ShopUSD.Equal(dec(tc.price)) || q.PromoCode != tc.p.Code || !q.ListUSD.Equal(base.ShopUSD) ||
			!q.DiscountUSD.Equal(base.ShopUSD.Sub(q.ShopUSD)) || q.Stars < 1 || q.Stars > base.Stars || q.ID != "" {
			t.Fatalf("%s: %+v %q", tc.name, q, why)
		}
		if !tc.p.BelowCost && decimal.NewFromInt(q.Stars).Mul(dec("0.013")).LessThan(base.UpstreamUSD) {
			t.Fatalf("%s: %d Stars are below the cost", tc.name, q.Stars)
		}
	}
	// A code replaces the one applied before: it counts from the list price.
	q1, _, _ := sh.discounted(env, base, &flows.Promo{Code: "F1", OffUSD: dec("1")})
	q2, _, _ := sh.discounted(env, q1, &flows.Promo{Code: "P5", Percent: dec("5")})
	if !q2.ShopUSD.Equal(dec("19.00")) || q2.ListStars != base.Stars || q2.PromoCode != "P5" {
		t.Fatalf("replaced: %+v", q2)
	}
	// A code that cannot lower the price says so.
	atCost := &flows.Quote{Line: "keys", UpstreamUSD: dec("20.00"), ShopUSD: dec("20.00"), Stars: 1539}
	if q, why, _ := sh.discounted(env, atCost, &flows.Promo{Code: "P5", Percent: dec("5")}); q != nil || !contains(why, "gives no discount") {
		t.Fatalf("at cost: %v %q", q, why)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
