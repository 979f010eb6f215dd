package checkout_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/botapitest"
	"shopbot/bot/botapitest/types"
	"shopbot/bot/checkout"
	"shopbot/bot/storefront"
	"shopbot/flows"
	"shopbot/flows/shop"
	"shopbot/locales"
	"shopbot/state"
)

// The second buyer of the promo tests.
const buyer2 = int64(5002)

func en(key string, kv ...any) string { return locales.T(locales.En, key, kv...) }

// admin runs /promo arg as the shop's admin and returns the answer.
func (s *payShop) promo(arg string) types.Message {
	s.T.Helper()
	return s.Command(s.b, payAdmin, "promo", arg)
}

// toSummary takes the buyer to the summary of two Apple 10 USD cards.
func (s *payShop) toSummary() {
	s.T.Helper()
	s.Command(s.b, chat, "giftcards", "")
	s.Tap(s.b, "Apple")
	s.Tap(s.b, "US")
	s.Tap(s.b, "Apple Gift Card 10 USD")
	s.Say(s.b, "2")
	if !strings.Contains(s.Menu().Text, "Please check your order") {
		s.T.Fatalf("not a summary: %q", s.Menu().Text)
	}
}

// applyCode taps the summary's promo button and sends code; it returns the
// screen the buyer sees then.
func (s *payShop) applyCode(code string) types.Message {
	s.T.Helper()
	var summary types.Message
	for _, m := range s.BotMessages(chat) {
		if strings.Contains(m.Text, "Please check your order") {
			summary = m
		}
	}
	if m := s.Press(s.b, chat, summary, en("btn.promo")); !strings.Contains(m.Text, "Send your promo code") {
		s.T.Fatalf("no promo prompt: %q", m.Text)
	}
	s.Say(s.b, code)
	return s.Menu()
}

// payQuote taps Pay on the summary and returns the invoice's quote.
func (s *payShop) payQuote() *state.Quote {
	s.T.Helper()
	n := len(s.Fake.CallsFor("sendInvoice"))
	s.Tap(s.b, en("btn.pay"))
	inv := s.Wait("sendInvoice", n+1)[n]
	q, err := s.pay.Quotes.Load(context.Background(), strings.TrimPrefix(inv.String("payload"), "q:"))
	if err != nil {
		s.T.Fatal(err)
	}
	var prices []struct{ Amount int64 }
	if err := inv.JSON("prices", &prices); err != nil || len(prices) != 1 || prices[0].Amount != q.Stars {
		s.T.Fatalf("invoice prices %v (%v) for a quote of %d Stars", prices, err, q.Stars)
	}
	return q
}

// promoQuote is a live quote of one Apple 10 USD card for user with code
// applied: $1 off.
func (s *payShop) promoQuote(user int64, code string) *state.Quote {
	s.T.Helper()
	q := s.quote(1)
	q.ID, q.ChatID, q.UserID = "", user, user
	q.PromoCode, q.ListUSD, q.ListStars = code, q.ShopUSD, q.Stars
	q.DiscountUSD = decimal.NewFromInt(1)
	q.ShopUSD = q.ShopUSD.Sub(q.DiscountUSD)
	q.Stars = (&shop.Pricing{StarsUSDRate: decimal.RequireFromString("0.013")}).Stars(q.ShopUSD)
	if err := s.pay.Quotes.Save(context.Background(), q); err != nil {
		s.T.Fatal(err)
	}
	return q
}

func (s *payShop) payAs(user int64, q *state.Quote) *flows.Reply {
	s.T.Helper()
	env := &flows.Env{Lang: locales.En, Now: time.Now(), User: flows.User{ID: user}}
	r, err := s.pay.Pay(context.Background(), env, &flows.Session{}, q)
	if err != nil {
		s.T.Fatal(err)
	}
	return r
}

func (s *payShop) invoiceIn(c int64) types.Message {
	s.T.Helper()
	var inv types.Message
	if !s.Until(func() bool {
		for _, m := range s.Fake.MessagesIn(c) {
			if m.Invoice != nil {
				inv = m
				return true
			}
		}
		return false
	}) {
		s.T.Fatalf("no invoice in chat %d", c)
	}
	return inv
}

func (s *payShop) uses(code string) (used, held int) {
	s.T.Helper()
	p, err := s.b.Promos.Get(context.Background(), code)
	if err != nil {
		s.T.Fatal(err)
	}
	return p.Used, p.Held
}

// The admin creates a code; the buyer applies it on the summary, sees the
// discount, pays the discounted price in Stars, and the order records it;
// /stats counts the discount.
func TestPromoCodeAppliedAndPaidInStars(t *testing.T) {
	s := newPayShop(t, true, false)
	if m := s.promo("add save1 $1 uses=10"); !strings.Contains(m.Text, "Promo code SAVE1 added: $1.00 off · 10 uses") {
		t.Fatalf("admin told %q", m.Text)
	}
	s.toSummary()
	m := s.applyCode("save1")
	if !strings.Contains(m.Text, "Promo code SAVE1: −") || !strings.Contains(m.Text, "Total: ") || !bottestHasStrike(m) {
		t.Fatalf("summary with the code: %q", m.RawText)
	}
	q := s.payQuote()
	if q.PromoCode != "SAVE1" || !q.DiscountUSD.Equal(decimal.NewFromInt(1)) || !q.ShopUSD.Equal(q.ListUSD.Sub(decimal.NewFromInt(1))) || q.Stars >= q.ListStars {
		t.Fatalf("quote %+v", q)
	}
	res := s.payInvoice(botapitest.PayOptions{})
	if res.Declined || res.TotalAmount != q.Stars {
		t.Fatalf("declined=%v %q, paid %d of %d", res.Declined, res.ErrorMessage, res.TotalAmount, q.Stars)
	}
	o := s.order(q.ID)
	if o.PromoCode != "SAVE1" || !o.DiscountUSD.Equal(decimal.NewFromInt(1)) || o.Stars != q.Stars || !o.ShopUSD.Equal(q.ShopUSD) {
		t.Fatalf("order %+v", o)
	}
	// A repeated successful_payment and the sweep consume nothing more.
	s.Fake.PushSuccessfulPayment(chat, res.Payload, res.TotalAmount, res.ChargeID)
	s.Idle(s.b)
	s.sweep()
	if used, held := s.uses("SAVE1"); used != 1 || held != 0 {
		t.Fatalf("used %d, held %d", used, held)
	}
	st := s.Command(s.b, payAdmin, "stats", "")
	if !strings.Contains(st.Text, "Promo codes: 1 order, $1.00 off · their margin after the discount") {
		t.Fatalf("stats: %q", st.Text)
	}
	s.NoViolations()
}

func bottestHasStrike(m types.Message) bool { return strings.Contains(m.RawText, "<s>") }

// The discount stops at the upstream cost unless the code allows going
// below it.
func TestPromoDiscountFloorsAtUpstreamCost(t *testing.T) {
	s := newPayShop(t, true, false)
	s.promo("add half 50%")
	s.promo("add halfb 50% belowcost")
	s.toSummary()
	s.applyCode("HALF")
	q := s.payQuote()
	// The buyer is told the discount is smaller than the code's terms and why.
	capped := s.texts(chat, "Promo code HALF applied: ")
	if len(capped) != 1 || !strings.Contains(capped[0], "off instead of $") || !strings.Contains(capped[0], "cannot go any lower") {
		t.Fatalf("the capped discount is not explained: %q", capped)
	}
	if !q.ShopUSD.Equal(q.UpstreamUSD.RoundUp(2)) || decimal.NewFromInt(q.Stars).Mul(decimal.RequireFromString("0.013")).LessThan(q.UpstreamUSD) {
		t.Fatalf("HALF: price %s (%d Stars) for an upstream cost of %s", q.ShopUSD, q.Stars, q.UpstreamUSD)
	}
	s.applyCode("halfb")
	q2 := s.payQuote()
	want := q2.ListUSD.Sub(q2.ListUSD.Mul(decimal.NewFromInt(50)).Div(decimal.NewFromInt(100)).RoundDown(2))
	if q2.PromoCode != "HALFB" || !q2.ShopUSD.Equal(want) || !q2.ShopUSD.LessThan(q2.UpstreamUSD) {
		t.Fatalf("HALFB: price %s, want %s (upstream %s)", q2.ShopUSD, want, q2.UpstreamUSD)
	}
}

// Two buyers pay at once for the last use of a code: exactly one
// pre-checkout holds it and is paid; the other is refused clearly and
// never charged.
func TestPromoLastUseTwoBuyersAtOnceStars(t *testing.T) {
	s := newPayShop(t, true, false)
	s.promo("add last1 $1 uses=1")
	qs := map[int64]*state.Quote{chat: s.promoQuote(chat, "LAST1"), buyer2: s.promoQuote(buyer2, "LAST1")}
	invs := map[int64]types.Message{}
	for c, q := range qs {
		s.payAs(c, q)
		invs[c] = s.invoiceIn(c)
	}
	var mu sync.Mutex
	results := map[int64]botapitest.PayResult{}
	var wg sync.WaitGroup
	for c, inv := range invs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.Fake.Pay(context.Background(), c, inv.MessageID, botapitest.PayOptions{})
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			results[c] = res
			mu.Unlock()
		}()
	}
	wg.Wait()
	var paid, refused []int64
	for c, res := range results {
		if res.Declined {
			if res.ErrorMessage != en("pay.refuse_promo") {
				t.Fatalf("buyer %d refused with %q", c, res.ErrorMessage)
			}
			refused = append(refused, c)
			continue
		}
		paid = append(paid, c)
	}
	if len(paid) != 1 || len(refused) != 1 {
		t.Fatalf("paid %v, refused %v", paid, refused)
	}
	o := s.order(qs[paid[0]].ID)
	if o.PromoCode != "LAST1" || o.Stars != qs[paid[0]].Stars {
		t.Fatalf("winner's order %+v", o)
	}
	s.noOrder(qs[refused[0]].ID)
	for _, tx := range s.Fake.StarTransactions() {
		if tx.Source != nil && tx.Source.User != nil && tx.Source.User.ID == refused[0] {
			t.Fatalf("the refused buyer was charged: %+v", tx)
		}
	}
	if used, held := s.uses("LAST1"); used != 1 || held != 0 {
		t.Fatalf("used %d, held %d", used, held)
	}
}

// The same race from wallets: the loser's wallet is never debited.
func TestPromoLastUseTwoBuyersAtOnceWallet(t *testing.T) {
	s := newPayShop(t, false, true)
	s.promo("add last2 $1 uses=1")
	ctx := context.Background()
	for _, c := range []int64{chat, buyer2} {
		if _, _, err := s.pay.Wallets.Credit(ctx, c, decimal.NewFromInt(50), "test:"+itoa(c), "", "9001"); err != nil {
			t.Fatal(err)
		}
	}
	qs := map[int64]*state.Quote{chat: s.promoQuote(chat, "LAST2"), buyer2: s.promoQuote(buyer2, "LAST2")}
	var mu sync.Mutex
	replies := map[int64]*flows.Reply{}
	var wg sync.WaitGroup
	for c, q := range qs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := s.payAs(c, q)
			mu.Lock()
			replies[c] = r
			mu.Unlock()
		}()
	}
	wg.Wait()
	winners := 0
	for c, r := range replies {
		bal, _ := s.pay.Wallets.Balance(ctx, c)
		if r.Screen != nil {
			winners++
			if !bal.Equal(decimal.NewFromInt(50).Sub(qs[c].ShopUSD)) {
				t.Fatalf("winner %d balance %s, paid %s", c, bal, qs[c].ShopUSD)
			}
			if o := s.order(qs[c].ID); o.PromoCode != "LAST2" {
				t.Fatalf("order %+v", o)
			}
			continue
		}
		if r.Answer != en("pay.promo_gone", "code", "LAST2") || !bal.Equal(decimal.NewFromInt(50)) {
			t.Fatalf("loser %d told %q, balance %s", c, r.Answer, bal)
		}
		s.noOrder(qs[c].ID)
	}
	if winners != 1 {
		t.Fatalf("%d winners", winners)
	}
	if used, held := s.uses("LAST2"); used != 1 || held != 0 {
		t.Fatalf("used %d, held %d", used, held)
	}
}

// A payment whose update was lost, settled by the sweep after its hold
// lapsed and the last use went to another buyer, is refunded: the money
// and the uses agree.
func TestPromoPaymentSettledAfterItsUseWentElsewhereIsRefunded(t *testing.T) {
	s := newPayShop(t, true, false)
	s.promo("add late1 $1 uses=1")
	q := s.promoQuote(chat, "LATE1")
	s.payAs(chat, q)
	res := s.payInvoice(botapitest.PayOptions{LoseUpdate: true})
	if res.Declined {
		t.Fatalf("declined: %q", res.ErrorMessage)
	}
	// The hold lapses (released here: the same for the store) and another
	// buyer takes the last use.
	ctx := context.Background()
	if err := s.b.Promos.Release(ctx, "LATE1", q.ID, chat); err != nil {
		t.Fatal(err)
	}
	if err := s.b.Promos.Reserve(ctx, "LATE1", "other-quote", buyer2, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.b.Promos.Commit(ctx, "LATE1", "other-quote", buyer2); err != nil {
		t.Fatal(err)
	}
	s.startedSweep()
	s.sweep()
	if !s.Until(func() bool { return s.Fake.Refunded(res.ChargeID) }) {
		t.Fatal("the charge was not refunded")
	}
	s.noOrder(q.ID)
	s.WaitText(chat, "the promo code LATE1 could no longer be used")
	if used, _ := s.uses("LATE1"); used != 1 {
		t.Fatalf("used %d", used)
	}
}

// A refunded order gives its use back, once.
func TestPromoRefundedOrderGivesItsUseBack(t *testing.T) {
	s := newPayShopWith(t, false, true, func(o *storefront.Options) { o.Reseller = upstreamHere }, nil)
	s.promo("add back1 $1 uses=1")
	ctx := context.Background()
	if _, _, err := s.pay.Wallets.Credit(ctx, chat, decimal.NewFromInt(50), "test:1", "", "9001"); err != nil {
		t.Fatal(err)
	}
	s.sim.SetBalance(decimal.NewFromInt(1)) // the upstream cannot place it: refunded
	q := s.promoQuote(chat, "BACK1")
	if r := s.payAs(chat, q); r.Screen == nil {
		t.Fatalf("wallet payment: %+v", r)
	}
	o := s.order(q.ID)
	var got *state.Order
	if !s.Until(func() bool {
		got, _ = s.pay.Orders.Get(ctx, o.ID)
		return got != nil && got.Status == state.OrderRefunded && got.NotifiedStatus == state.OrderRefunded
	}) {
		t.Fatalf("order %d never refunded: %+v", o.ID, got)
	}
	if !s.Until(func() bool { used, _ := s.uses("BACK1"); return used == 0 }) {
		t.Fatal("the use was not given back")
	}
	if bal, _ := s.pay.Wallets.Balance(ctx, chat); !bal.Equal(decimal.NewFromInt(50)) {
		t.Fatalf("wallet %s after the refund", bal)
	}
	// Given back once: again changes nothing, and the use is free for the
	// next buyer.
	if err := checkout.ReturnPromo(ctx, s.b.Promos, got); err != nil {
		t.Fatal(err)
	}
	if used, _ := s.uses("BACK1"); used != 0 {
		t.Fatalf("used %d after a second return", used)
	}
	if err := s.b.Promos.Reserve(ctx, "BACK1", "next", buyer2, time.Now().Add(time.Hour)); err != nil {
		t.Fatalf("the use given back cannot be taken: %v", err)
	}
}

// Every code that cannot be used says why, and the buyer keeps the
// summary at its price.
func TestPromoRefusalsKeepTheSummary(t *testing.T) {
	s := newPayShop(t, false, true)
	ctx := context.Background()
	s.promo("add once1 $1 once")
	s.promo("add keysonly 10% lines=keys")
	s.promo("add big 10% min=1000")
	if err := s.b.Promos.Add(ctx, &state.Promo{Code: "OLD1", Percent: decimal.NewFromInt(10), Expires: time.Now().Add(-time.Minute)}); err != nil {
		t.Fatal(err)
	}
	// The buyer used ONCE1 already.
	if _, _, err := s.pay.Wallets.Credit(ctx, chat, decimal.NewFromInt(50), "test:1", "", "9001"); err != nil {
		t.Fatal(err)
	}
	if r := s.payAs(chat, s.promoQuote(chat, "ONCE1")); r.Screen == nil {
		t.Fatalf("first use: %+v", r)
	}
	s.toSummary()
	before := s.Menu().Text
	for code, want := range map[string]string{
		"nope1":    "There is no promo code NOPE1",
		"old1":     "The promo code OLD1 has expired",
		"once1":    "You have already used the promo code ONCE1",
		"keysonly": "does not apply to this section",
		"big":      "applies to orders of $1,000.00 or more",
	} {
		m := s.applyCode(code)
		if len(s.texts(chat, want)) == 0 {
			t.Fatalf("%s: no %q", code, want)
		}
		if m.Text != before {
			t.Fatalf("%s: summary now %q, was %q", code, m.Text, before)
		}
	}
	// Another buyer may still use ONCE1.
	if _, err := s.b.Promos.Check(ctx, "ONCE1", buyer2); err != nil {
		t.Fatal(err)
	}
}

// /promo: strict arguments, bulk generation as a .txt file, list, disable;
// buyers do not have it.
func TestPromoAdminCommands(t *testing.T) {
	s := newPayShop(t, true, false)
	for arg, want := range map[string]string{
		"":                              "/promo add CODE 10%",
		"add":                           "/promo add CODE 10%",
		"add X 10%":                     "X is not a valid code",
		"add GOOD 10":                   "10 is not a discount",
		"add GOOD 150%":                 "150% is not a discount",
		"add GOOD 10% usess=3":          "Unknown option usess=3",
		"add GOOD 10% uses=0":           "Bad value in uses=0",
		"add GOOD 10% lines=xx":         "Bad value in lines=xx",
		"add GOOD 10% until=2020-01-01": "2020-01-01 is in the past",
		"add GOOD 10% once once":        "that option is given twice",
		"gen 0 10%":                     "0 is not a number of codes",
		"gen 5 10% uses=2":              "Unknown option uses=2",
		"frobnicate":                    "Unknown /promo action frobnicate",
	} {
		m := s.promo(arg)
		if !strings.Contains(m.Text, want) {
			t.Fatalf("/promo %s: %q, want %q", arg, m.Text, want)
		}
		if arg != "" && arg != "add" && !strings.Contains(m.Text, "/promo gen N 10%") {
			t.Fatalf("/promo %s: no usage in %q", arg, m.Text)
		}
	}
	if _, err := s.b.Promos.Get(context.Background(), "GOOD"); !errors.Is(err, state.ErrPromoUnknown) {
		t.Fatalf("a refused /promo stored a code: %v", err)
	}
	m := s.promo("add xmas 12.5% lines=keys,giftcards min=$5 uses=100 once until=2099-12-31 belowcost")
	if !strings.Contains(m.Text, "Promo code XMAS added: 12.50% off · only 🔑 Game keys, 💳 Gift cards · orders from $5.00 · 100 uses · one per buyer · until ") ||
		!strings.Contains(m.Text, "· may go below cost") {
		t.Fatalf("add with every option: %q", m.Text)
	}
	if p, err := s.b.Promos.Get(context.Background(), "XMAS"); err != nil || !p.Expires.Equal(time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)) || !p.BelowCost || len(p.Lines) != 2 {
		t.Fatalf("stored %+v %v", p, err)
	}
	if m := s.promo("add XMAS 5%"); !strings.Contains(m.Text, "The code XMAS already exists") {
		t.Fatalf("add twice: %q", m.Text)
	}
	if _, err := s.b.Promos.Disable(context.Background(), "XMAS"); err != nil {
		t.Fatal(err)
	}
	n := len(s.Fake.CallsFor("sendDocument"))
	s.promo("gen 5 10% prefix=xm once")
	s.Wait("sendDocument", n+1)
	var doc types.Message
	for _, m := range s.Fake.MessagesIn(payAdmin) {
		if m.Document != nil {
			doc = m
		}
	}
	if !strings.HasSuffix(doc.Document.FileName, ".txt") || !strings.Contains(doc.Caption, "5 one-time promo codes: 10% off · 1 use · one per buyer") {
		t.Fatalf("document %q, caption %q", doc.Document.FileName, doc.Caption)
	}
	codes := strings.Split(strings.TrimSpace(string(doc.FileData)), "\n")
	if len(codes) != 5 {
		t.Fatalf("%d codes in the file", len(codes))
	}
	seen := map[string]bool{}
	for _, c := range codes {
		p, err := s.b.Promos.Get(context.Background(), c)
		if err != nil || !strings.HasPrefix(c, "XM") || seen[c] || p.MaxUses != 1 || !p.PerBuyer {
			t.Fatalf("code %q: %+v %v", c, p, err)
		}
		seen[c] = true
	}
	if m := s.promo("list"); !strings.Contains(m.Text, "Promo codes (newest 6 of 6)") || !strings.Contains(m.Text, codes[0]) {
		t.Fatalf("list: %q", m.Text)
	}
	if m := s.promo("disable " + strings.ToLower(codes[0])); !strings.Contains(m.Text, "disabled") {
		t.Fatalf("disable: %q", m.Text)
	}
	if _, err := s.b.Promos.Check(context.Background(), codes[0], chat); !errors.Is(err, state.ErrPromoDisabled) {
		t.Fatalf("disabled code: %v", err)
	}
	if m := s.promo("disable NOSUCH"); !strings.Contains(m.Text, "There is no code NOSUCH") {
		t.Fatalf("disable unknown: %q", m.Text)
	}
	if m := s.Command(s.b, chat, "promo", "list"); m.Text != locales.T(locales.En, "err.unknown_command") {
		t.Fatalf("a buyer got %q", m.Text)
	}
	s.NoViolations()
}

// A code that cannot be used asks the buyer to send it again: the next
// message is taken as a code on the summary (not "use the buttons"), and
// anything else the buyer does there ends that invitation.
func TestPromoWrongCodeThenSentAgainApplies(t *testing.T) {
	s := newPayShop(t, true, false)
	s.promo("add save1 $1")
	s.toSummary()
	s.applyCode("sav1")
	if len(s.texts(chat, "There is no promo code SAV1")) == 0 {
		t.Fatal("the wrong code is not explained")
	}
	s.Say(s.b, "save1")
	if m := s.Menu(); !strings.Contains(m.Text, "Promo code SAVE1: −") {
		t.Fatalf("the code sent again is not applied: %q", m.Text)
	}
	if n := len(s.texts(chat, en("err.use_buttons"))); n != 0 {
		t.Fatalf("told to use the buttons %d times", n)
	}
	if q := s.payQuote(); q.PromoCode != "SAVE1" {
		t.Fatalf("quote %+v", q)
	}
}
