package books_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"shopbot/state/redisstore/intake"
	"shopbot/state/redisstore/records"

	"github.com/shopspring/decimal"

	"shopbot/bot/botapitest"
	"shopbot/bot/botapitest/types"
	"shopbot/bot/bottest"
	"shopbot/bot/checkout"
	"shopbot/bot/storefront"
	"shopbot/flows/golden"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/reseller/resellersim"
	"shopbot/state"
)

// usd parses a decimal for the tests' hand-computed figures.
func usd(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// botMessages are the bot's messages in a chat, oldest first.
// simClient serves sim over HTTP and returns a client for it with key.
func simClient(t *testing.T, sim *resellersim.Sim, key string) *reseller.Client {
	t.Helper()
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	c, err := reseller.New(srv.URL+"/api/v1", key, reseller.WithMaxAttempts(1), reseller.WithTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// reportsBot is a bot with the admin and, when client is not nil, the
// upstream; messages are paced on a fake clock so the tests run fast.
func (h *harness) reportsBot(client *reseller.Client, mod func(*storefront.Options)) *storefront.Shop {
	b := h.NewBot(func(o *storefront.Options) {
		o.Admins, o.Reseller = []int64{admin}, client
		if mod != nil {
			mod(o)
		}
	})
	bottest.FakePace(b.API)
	return b
}

func TestReportsAreUnknownCommandsForBuyers(t *testing.T) {
	h := newHarness(t)
	sim := resellersim.New(resellersim.Config{Seed: 1})
	var upstreamCalls atomic.Int64
	sim.OnRequest(func(r *http.Request, _ []byte) {
		if !strings.HasSuffix(r.URL.Path, "/orders") { // the worker's watermark and orphan scan read the order list
			upstreamCalls.Add(1)
		}
	})
	b := h.reportsBot(simClient(t, sim, "test-key"), nil)
	h.Fake.SetStarBalance(100)
	h.Run(b)
	unknown := locales.T(locales.En, "err.unknown_command")
	cmds := [][2]string{{"balance", ""}, {"transactions", ""}, {"stats", ""}, {"credit", fmt.Sprint(chat, " 10")}, {"credit", ""}}
	for _, c := range cmds {
		if m := h.Command(b, chat, c[0], c[1]); m.RawText != unknown || m.ReplyMarkup != nil {
			t.Fatalf("a buyer's /%s %s got %q", c[0], c[1], m.RawText)
		}
	}
	for _, c := range h.Fake.Calls() {
		if c.Method == "getMyStarBalance" {
			t.Fatalf("a buyer's command read the Star balance")
		}
		if c.Has("chat_id") && c.Int("chat_id") == chat && (c.Method != "sendMessage" || c.String("text") != unknown) {
			t.Fatalf("a buyer got %s %v", c.Method, c.Params)
		}
	}
	if n := len(h.BotMessages(chat)); n != len(cmds) {
		t.Fatalf("the buyer got %d messages for %d commands", n, len(cmds))
	}
	if n := upstreamCalls.Load(); n != 0 {
		t.Fatalf("a buyer's command made %d upstream calls", n)
	}
	w := records.NewWallets(h.Rdb.Client, h.Rdb.Prefix)
	if bal, _ := w.Balance(context.Background(), chat); !bal.IsZero() {
		t.Fatalf("a buyer's /credit moved money: %s", bal)
	}
	if rec, _ := records.NewCreditAudit(h.Rdb.Client, h.Rdb.Prefix).Recent(context.Background(), 10); len(rec) != 0 {
		t.Fatalf("a buyer's /credit was audited: %+v", rec)
	}
	_, doc, _ := b.Queue.Conversation(context.Background(), chat)
	if strings.Contains(string(doc), "rep_") {
		t.Fatalf("a buyer entered an admin flow: %s", doc)
	}
	h.NoViolations()
}

// /balance when the upstream refuses (401 key, 403 blocked account) or
// fails (503), and the Star balance cannot be read: each part says so and
// the others still show.
func TestBalanceWhenTheUpstreamFails(t *testing.T) {
	for _, c := range []struct {
		name  string
		key   string
		setup func(*resellersim.Sim, *botapitest.Server)
		want  string
	}{
		{"401", "wrong-key", func(*resellersim.Sim, *botapitest.Server) {}, "the API key was rejected (401)"},
		{"403", "test-key", func(sim *resellersim.Sim, _ *botapitest.Server) { sim.SetAccountStatus(resellersim.StatusBlocked) }, "the account is blocked (403)"},
		{"503", "test-key", func(sim *resellersim.Sim, fake *botapitest.Server) {
			sim.FailNextOn("/me", 1, 503)
			fake.FailNext("getMyStarBalance", 1, 500, "Internal Server Error", 0)
		}, "server error (503)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			sim := resellersim.New(resellersim.Config{Seed: 1})
			b := h.reportsBot(simClient(t, sim, c.key), nil)
			h.Fake.SetStarBalance(1500)
			c.setup(sim, h.Fake)
			h.Run(b)
			m := h.Command(b, admin, "balance", "")
			if !strings.Contains(m.RawText, c.want) || !strings.Contains(m.RawText, locales.T(locales.En, "rep.bal.pending_none")) {
				t.Fatalf("/balance = %s", m.RawText)
			}
			if c.name != "503" && !strings.Contains(m.RawText, "1,500\u00a0⭐ (≈ $19.50 at $0.013 a Star)") { // 1,500 × 0.013
				t.Fatalf("the Star balance is missing: %s", m.RawText)
			}
			golden.Check(t, "reports/balance_"+c.name, bottest.Render(m))
			h.NoViolations()
		})
	}
}

// txSim is a simulator with a fixed, steppable clock and 25 transactions
// of our account: the deposit (#2) and 24 adjustments (#5..#28; the
// simulator's #1, #3 and #4 belong to another account), alternately
// credits and debits.
func txSim(t *testing.T) *resellersim.Sim {
	var mu sync.Mutex
	now := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	sim := resellersim.New(resellersim.Config{Seed: 1, Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }})
	bal := usd("1000")
	for i := 1; i <= 24; i++ {
		mu.Lock()
		now = now.Add(time.Hour)
		mu.Unlock()
		if i%2 == 1 {
			bal = bal.Add(decimal.NewFromInt(int64(i)))
		} else {
			bal = bal.Sub(decimal.NewFromInt(int64(i) / 2))
		}
		sim.SetBalance(bal)
	}
	return sim
}

func TestTransactionsPagingAndFilters(t *testing.T) {
	h := newHarness(t)
	b := h.reportsBot(simClient(t, txSim(t), "test-key"), nil)
	h.Run(b)
	page1 := h.Command(b, admin, "transactions", "")
	if !strings.Contains(page1.RawText, "page 1") || !strings.Contains(page1.RawText, "<b>#28</b>") || !strings.Contains(page1.RawText, "<b>#19</b>") || strings.Contains(page1.RawText, "<b>#18</b>") {
		t.Fatalf("page 1 = %s", page1.RawText)
	}
	golden.Check(t, "reports/tx_page1", bottest.Render(page1))
	edits := len(h.Fake.CallsFor("editMessageText"))
	page2 := h.Press(b, admin, page1, locales.T(locales.En, "rep.btn.older"))
	if !strings.Contains(page2.RawText, "page 2") || !strings.Contains(page2.RawText, "<b>#18</b>") || !strings.Contains(page2.RawText, "<b>#9</b>") || strings.Contains(page2.RawText, "<b>#19</b>") {
		t.Fatalf("page 2 = %s", page2.RawText)
	}
	golden.Check(t, "reports/tx_page2", bottest.Render(page2))
	page3 := h.Press(b, admin, page2, locales.T(locales.En, "rep.btn.older"))
	// #8..#5 and the deposit #2: the last page, no Older button.
	if !strings.Contains(page3.RawText, "<b>#8</b>") || !strings.Contains(page3.RawText, "<b>#2</b>") || strings.Contains(page3.RawText, "<b>#9</b>") || strings.Contains(page3.RawText, "<b>#3</b>") {
		t.Fatalf("page 3 = %s", page3.RawText)
	}
	golden.Check(t, "reports/tx_page3", bottest.Render(page3))
	back2 := h.Press(b, admin, page3, locales.T(locales.En, "rep.btn.newer"))
	if bottest.Render(back2) != bottest.Render(page2) {
		t.Fatalf("Back from page 3 shows\n%s\nwant page 2\n%s", bottest.Render(back2), bottest.Render(page2))
	}
	back1 := h.Press(b, admin, back2, locales.T(locales.En, "rep.btn.newer"))
	if bottest.Render(back1) != bottest.Render(page1) {
		t.Fatalf("Back to page 1 shows\n%s", bottest.Render(back1))
	}
	credits := h.Press(b, admin, back1, "Direction: all")
	// Credits: the deposit #2 and the odd adjustments #5, #7, ..., #27: 13, so two pages.
	if !strings.Contains(credits.RawText, "Direction: credit") || strings.Contains(credits.RawText, "debit") || !strings.Contains(credits.RawText, "<b>#27</b>") || strings.Contains(credits.RawText, "<b>#28</b>") {
		t.Fatalf("credits = %s", credits.RawText)
	}
	golden.Check(t, "reports/tx_credits", bottest.Render(credits))
	deposits := h.Press(b, admin, credits, "Type: all")
	if !strings.Contains(deposits.RawText, "<b>#2</b>") || strings.Contains(deposits.RawText, "<b>#5</b>") {
		t.Fatalf("credit deposits = %s", deposits.RawText)
	}
	golden.Check(t, "reports/tx_credit_deposits", bottest.Render(deposits))
	if n := len(h.Fake.CallsFor("editMessageText")) - edits; n != 6 {
		t.Fatalf("navigation made %d edits, want 6 (every step edits the message in place)", n)
	}
	if n := len(h.BotMessages(admin)); n != 1 {
		t.Fatalf("navigation sent %d messages, want the one edited in place", n)
	}
	h.NoViolations()
}

// statsOrders stores the orders of the /stats tests with a fixed clock.
// The figures the tests expect are computed by hand from this table at
// STARS_USD_RATE 0.013 (so 1,000 Stars are $13.00).
func statsOrders(t *testing.T, h *harness) time.Time {
	t.Helper()
	now := time.Date(2026, 11, 23, 15, 0, 0, 0, time.UTC)
	orders := records.NewOrders(h.Rdb.Client, h.Rdb.Prefix)
	ctx := context.Background()
	type row struct {
		line, method string
		stars        int64
		shop         string
		status       string
		charged      string
		at           time.Time
	}
	day := func(m time.Month, d, hour, min int) time.Time {
		return time.Date(2026, m, d, hour, min, 0, 0, time.UTC)
	}
	rows := []row{
		{"giftcards", state.PayWallet, 0, "50.00", state.OrderDelivered, "40.00", day(9, 1, 12, 0)},     // I: outside 30 days
		{"giftcards", state.PayWallet, 0, "99.00", state.OrderDelivered, "80.00", day(10, 24, 23, 0)},   // H: 30 min before the 30-day window
		{"keys", state.PayStars, 300, "3.90", state.OrderRefunding, "", day(10, 25, 6, 0)},              // G: 30 days
		{"games", state.PayWallet, 0, "8.00", state.OrderDelivered, "7.25", day(11, 16, 23, 30)},        // F: 30 days, not 7
		{"giftcards", state.PayStars, 2000, "26.00", state.OrderDelivered, "21.00", day(11, 17, 0, 30)}, // E: 7 days
		{"keys", state.PayWallet, 0, "20.00", state.OrderDelivered, "15.50", day(11, 20, 12, 0)},        // D: 7 days
		{"giftcards", state.PayStars, 1000, "13.00", state.OrderDelivered, "10.00", day(11, 23, 9, 0)},  // A: today
		{"giftcards", state.PayWallet, 0, "12.50", state.OrderRefunded, "", day(11, 23, 10, 0)},         // B: today
		{"stars", state.PayStars, 500, "6.50", state.OrderPlaced, "", day(11, 23, 11, 0)},               // C: today
	}
	paths := map[string][]string{
		state.OrderDelivered: {state.OrderPlacing, state.OrderPlaced, state.OrderDelivered},
		state.OrderPlaced:    {state.OrderPlacing, state.OrderPlaced},
		state.OrderRefunded:  {state.OrderRefunding, state.OrderRefunded},
		state.OrderRefunding: {state.OrderRefunding},
	}
	for i, r := range rows {
		orders.Now = func() time.Time { return r.at }
		o, _, err := orders.CreatePaid(ctx, &state.Order{UserID: 100 + int64(i), ChatID: 100 + int64(i), Line: r.line,
			PayMethod: r.method, Stars: r.stars, ShopUSD: usd(r.shop), ChargeID: fmt.Sprint("charge-", i), Lang: "en"})
		if err != nil {
			t.Fatal(err)
		}
		for _, to := range paths[r.status] {
			_, err := orders.Transition(ctx, o.ID, []string{o.Status}, to, func(n *state.Order) error {
				if to == state.OrderPlaced {
					n.UpstreamNumber = 5000 + int64(i)
				}
				if to == state.OrderDelivered {
					n.ChargedUSD = usd(r.charged)
				}
				return nil
			}, "")
			if err != nil {
				t.Fatalf("order %d -> %s: %v", o.ID, to, err)
			}
			o, _ = orders.Get(ctx, o.ID)
		}
		if o.Status != r.status {
			t.Fatalf("order %d is %s, want %s", o.ID, o.Status, r.status)
		}
	}
	return now
}

func TestStatsTodaySevenAndThirtyDays(t *testing.T) {
	h := newHarness(t)
	now := statsOrders(t, h)
	b := h.reportsBot(nil, func(o *storefront.Options) { o.Now = func() time.Time { return now } })
	h.Run(b)
	m := h.Command(b, admin, "stats", "")
	text := strings.ReplaceAll(m.RawText, "\u00a0", " ")
	for _, want := range []string{
		// Today: A (delivered), B (refunded), C (in progress).
		"<b>Today</b> (Nov 23, 2026)\n3 orders: 1 delivered, 1 in progress, 1 refunded\n" +
			"Revenue: <b>$19.50</b> = 1,500 ⭐ ($19.50) + wallets $0.00\n" + // A 1,000 + C 500 Stars; B refunded
			"Upstream cost: $10.00 · margin <b>$3.00</b> (23.1% of delivered revenue)\n" + // A: 13.00 − 10.00; 3/13
			"Refund rate: 50.0% (1 of 2 finished)\n" +
			"• ⭐ Telegram Stars: 1 order · $6.50 · cost $0.00 · margin $0.00 · refunds 0/0\n" +
			"• 💳 Gift cards: 2 orders · $13.00 · cost $10.00 · margin $3.00 · refunds 1/2",
		// 7 days: A–E.
		"<b>Last 7 days</b> (Nov 17, 2026 – Nov 23, 2026)\n5 orders: 3 delivered, 1 in progress, 1 refunded\n" +
			"Revenue: <b>$65.50</b> = 3,500 ⭐ ($45.50) + wallets $20.00\n" + // A, C, E Stars; D wallet
			"Upstream cost: $46.50 · margin <b>$12.50</b> (21.2% of delivered revenue)\n" + // 10 + 15.50 + 21; (13 + 20 + 26) − 46.50; 12.5/59
			"Refund rate: 25.0% (1 of 4 finished)\n" +
			"• ⭐ Telegram Stars: 1 order · $6.50 · cost $0.00 · margin $0.00 · refunds 0/0\n" +
			"• 💳 Gift cards: 3 orders · $39.00 · cost $31.00 · margin $8.00 · refunds 1/3\n" +
			"• 🔑 Game keys: 1 order · $20.00 · cost $15.50 · margin $4.50 · refunds 0/1",
		// 30 days: A–G; H is 30 minutes too old, I months.
		"<b>Last 30 days</b> (Oct 25, 2026 – Nov 23, 2026)\n7 orders: 4 delivered, 1 in progress, 2 refunded\n" +
			"Revenue: <b>$73.50</b> = 3,500 ⭐ ($45.50) + wallets $28.00\n" + // G refunding; D 20 + F 8
			"Upstream cost: $53.75 · margin <b>$13.25</b> (19.8% of delivered revenue)\n" + // 46.50 + 7.25; 67 − 53.75; 13.25/67
			"Refund rate: 33.3% (2 of 6 finished)\n" +
			"• ⭐ Telegram Stars: 1 order · $6.50 · cost $0.00 · margin $0.00 · refunds 0/0\n" +
			"• 💳 Gift cards: 3 orders · $39.00 · cost $31.00 · margin $8.00 · refunds 1/3\n" +
			"• 🔑 Game keys: 2 orders · $20.00 · cost $15.50 · margin $4.50 · refunds 1/2\n" +
			"• 🎮 In-game top-ups: 1 order · $8.00 · cost $7.25 · margin $0.75 · refunds 0/1",
		"UTC",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/stats lacks\n%s\n--- got:\n%s", want, text)
		}
	}
	golden.Check(t, "reports/stats", bottest.Render(m))
	h.NoViolations()
}

func TestStatsInRussian(t *testing.T) {
	h := newHarness(t)
	now := statsOrders(t, h)
	b := h.reportsBot(nil, func(o *storefront.Options) { o.Now = func() time.Time { return now } })
	h.Fake.SetUser(admin, types.User{ID: admin, FirstName: "Админ", LanguageCode: "ru"})
	h.Run(b)
	m := h.Command(b, admin, "stats", "")
	text := strings.ReplaceAll(m.RawText, "\u00a0", " ")
	for _, want := range []string{
		"<b>Сегодня</b> (23 нояб. 2026)\n3 заказа: доставлено 1, в работе 1, возвращено 1",
		"Выручка: <b>73,50 $</b> = 3 500 ⭐ (45,50 $) + кошельки 28,00 $",
		"маржа <b>13,25 $</b> (19,8 % выручки доставленных)",
		"Доля возвратов: 33,3 % (2 из 6 завершённых)",
		"• 🔑 Ключи для игр: 2 заказа · 20,00 $ · себест. 15,50 $ · маржа 4,50 $ · возвраты 1/2",
		"7 заказов: доставлено 4, в работе 1, возвращено 2",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/stats in Russian lacks %q:\n%s", want, text)
		}
	}
	golden.Check(t, "reports/stats_ru", bottest.Render(m))
	h.NoViolations()
}

func TestCreditRejectsBadArguments(t *testing.T) {
	h := newHarness(t)
	b := h.reportsBot(nil, nil)
	h.Run(b)
	var all strings.Builder
	for _, arg := range []string{"", "123", "abc 10", "0 10", "-5 10", "123 0", "123 -1", "123 10.555", "123 10001", "123 1e3", "123 ten", "123 10 20"} {
		m := h.Command(b, admin, "credit", arg)
		want := "Usage: <code>/credit"
		if !strings.Contains(m.RawText, want) || m.ReplyMarkup != nil {
			t.Fatalf("/credit %s answered %q", arg, m.RawText)
		}
		fmt.Fprintf(&all, "/credit %s\n%s---\n", arg, bottest.Render(m))
	}
	golden.Check(t, "reports/credit_bad_arguments", all.String())
	if rec, _ := records.NewCreditAudit(h.Rdb.Client, h.Rdb.Prefix).Recent(context.Background(), 10); len(rec) != 0 {
		t.Fatalf("bad arguments credited: %+v", rec)
	}
	if n := len(h.Fake.CallsFor("editMessageText")); n != 0 {
		t.Fatalf("bad arguments showed a confirmation")
	}
	h.NoViolations()
}

const buyer = int64(7007)

// creditShop is a bot with wallet payments on and a buyer who started the
// bot, chose Russian, and has $2.00 in the wallet.
func creditShop(t *testing.T, wallet bool) (*harness, *storefront.Shop, *records.Wallets) {
	h := newHarness(t)
	b := h.reportsBot(nil, func(o *storefront.Options) {
		if wallet {
			o.Checkout = &checkout.Options{Stars: true, Wallet: true}
		}
	})
	h.Run(b)
	h.Command(b, buyer, "start", "")
	lang := h.Command(b, buyer, "language", "")
	h.Press(b, buyer, lang, locales.LanguageName(locales.Ru))
	w := records.NewWallets(h.Rdb.Client, h.Rdb.Prefix)
	if _, _, err := w.Credit(context.Background(), buyer, usd("2"), "credit:earlier", "earlier", "admin:1"); err != nil {
		t.Fatal(err)
	}
	return h, b, w
}

// checkCreditedOnce: the buyer's wallet got the 15.50 once (ledger,
// balance, audit) and the buyer was told once, in Russian.
func checkCreditedOnce(t *testing.T, h *harness, w *records.Wallets) {
	t.Helper()
	ctx := context.Background()
	if bal, _ := w.Balance(ctx, buyer); !bal.Equal(usd("17.50")) {
		t.Fatalf("buyer balance %s, want 17.50", bal)
	}
	led, _ := w.Ledger(ctx, buyer, 0, 10)
	if len(led) != 2 || !led[0].Amount.Equal(usd("15.50")) || led[0].Actor != fmt.Sprint("admin:", admin) {
		t.Fatalf("ledger %+v", led)
	}
	rec, _ := records.NewCreditAudit(h.Rdb.Client, h.Rdb.Prefix).Recent(ctx, 10)
	if len(rec) != 1 || rec[0].Admin != admin || rec[0].User != buyer || !rec[0].Amount.Equal(usd("15.50")) || rec[0].Ref != led[0].Ref {
		t.Fatalf("audit %+v, ledger ref %s", rec, led[0].Ref)
	}
	told := 0
	for _, m := range h.BotMessages(buyer) {
		if strings.Contains(m.RawText, "зачислено") {
			told++
		}
	}
	if told != 1 {
		t.Fatalf("the buyer was told %d times", told)
	}
}

func TestCreditConfirmDoubleTapCreditsOnce(t *testing.T) {
	h, b, w := creditShop(t, true)
	confirm := h.Command(b, admin, "credit", fmt.Sprint(buyer, " 15,50"))
	golden.Check(t, "reports/credit_confirm", bottest.Render(confirm))
	data := bottest.Button(t, confirm, locales.T(locales.En, "rep.btn.confirm"))
	// Both taps arrive while the bot is busy elsewhere: handled back to back.
	q1 := h.Fake.Press(admin, confirm.MessageID, data)
	q2 := h.Fake.Press(admin, confirm.MessageID, data)
	a1, a2 := h.WaitAnswer(q1), h.WaitAnswer(q2)
	h.Idle(b)
	if a1.Text != locales.T(locales.En, "rep.credit.done_answer") || a2.Text != locales.T(locales.En, "err.outdated") {
		t.Fatalf("taps answered %q and %q", a1.Text, a2.Text)
	}
	checkCreditedOnce(t, h, w)
	done, _ := h.Fake.Message(admin, confirm.MessageID)
	golden.Check(t, "reports/credit_done", bottest.Render(done))
	var told types.Message
	for _, m := range h.BotMessages(buyer) {
		if strings.Contains(m.RawText, "зачислено") {
			told = m
		}
	}
	golden.Check(t, "reports/credit_buyer_ru", bottest.Render(told))
	h.NoViolations()
}

func TestCreditDuplicateUpdateCreditsOnce(t *testing.T) {
	h, b, w := creditShop(t, true)
	confirm := h.Command(b, admin, "credit", fmt.Sprint(buyer, " 15.50"))
	press := types.Update{UpdateID: 1 << 30, CallbackQuery: &types.CallbackQuery{
		ID: "dup-press", From: h.Fake.User(admin), Message: &confirm, ChatInstance: "1",
		Data: bottest.Button(t, confirm, locales.T(locales.En, "rep.btn.confirm")),
	}}
	h.Fake.PushUpdate(press)
	h.Fake.PushUpdate(press) // Telegram delivers the same update again
	h.WaitText(admin, "Credited")
	h.Idle(b)
	checkCreditedOnce(t, h, w)
}

// A confirmation replayed because its session save was lost (Redis lost
// the last second in a crash) credits nothing more and tells nobody again.
func TestCreditReplayedAfterALostSaveCreditsOnce(t *testing.T) {
	h, b, w := creditShop(t, true)
	confirm := h.Command(b, admin, "credit", fmt.Sprint(buyer, " 15.50"))
	_, before, err := b.Queue.Conversation(context.Background(), admin)
	if err != nil || before == nil {
		t.Fatal(err)
	}
	data := bottest.Button(t, confirm, locales.T(locales.En, "rep.btn.confirm"))
	h.Press(b, admin, confirm, locales.T(locales.En, "rep.btn.confirm"))
	checkCreditedOnce(t, h, w)
	conv := intake.NewQueue(h.Rdb.Client, h.Rdb.Prefix).ConvKey(admin)
	if err := h.Rdb.Client.HSet(context.Background(), conv, "doc", before).Err(); err != nil {
		t.Fatal(err)
	}
	q := h.Fake.Press(admin, confirm.MessageID, data)
	if a := h.WaitAnswer(q); a.Text != locales.T(locales.En, "rep.credit.done_answer") {
		t.Fatalf("the replayed confirmation answered %q", a.Text)
	}
	h.Idle(b)
	checkCreditedOnce(t, h, w)
	again, _ := h.Fake.Message(admin, confirm.MessageID)
	if !strings.Contains(again.RawText, "already made") || !strings.Contains(again.RawText, "$17.50") {
		t.Fatalf("replay shows %q", again.RawText)
	}
	golden.Check(t, "reports/credit_replayed", bottest.Render(again))
	h.NoViolations()
}

// With wallet payments off the confirmation warns; a buyer who blocked the
// bot does not make the credit fail.
func TestCreditWithWalletsOffToABuyerWhoBlockedTheBot(t *testing.T) {
	h, b, w := creditShop(t, false)
	h.Fake.BlockChat(buyer)
	// The bot learns of the block from the my_chat_member update it polls.
	if !h.UntilWithin(5*time.Second, func() bool { blocked, _ := b.Users.Blocked(context.Background(), buyer); return blocked }) {
		t.Fatal("the bot never saw the buyer block it")
	}
	confirm := h.Command(b, admin, "credit", fmt.Sprint(buyer, " 15.50"))
	if !strings.Contains(confirm.RawText, "Wallet payments are off") {
		t.Fatalf("no wallet warning: %s", confirm.RawText)
	}
	golden.Check(t, "reports/credit_confirm_wallet_off", bottest.Render(confirm))
	done := h.Press(b, admin, confirm, locales.T(locales.En, "rep.btn.confirm"))
	if !strings.Contains(done.RawText, "Credited") || !strings.Contains(done.RawText, "blocked the bot") {
		t.Fatalf("result %q", done.RawText)
	}
	if bal, _ := w.Balance(context.Background(), buyer); !bal.Equal(usd("17.50")) {
		t.Fatalf("balance %s", bal)
	}
	golden.Check(t, "reports/credit_done_blocked", bottest.Render(done))
	// A credit to someone who never started the bot: said before and after.
	other := h.Command(b, admin, "credit", "424242 1")
	if !strings.Contains(other.RawText, "has not started the bot") {
		t.Fatalf("confirmation %q", other.RawText)
	}
	if done := h.Press(b, admin, other, locales.T(locales.En, "rep.btn.confirm")); !strings.Contains(done.RawText, "not started the bot, so they were not told") {
		t.Fatalf("result %q", done.RawText)
	}
	// The buyer comes back, but Telegram refuses the message (403): the
	// credit still stands.
	h.Fake.UnblockChat(buyer)
	h.Command(b, buyer, "start", "")
	third := h.Command(b, admin, "credit", fmt.Sprint(buyer, " 0.50"))
	h.Fake.FailNext("sendMessage", 1, 403, "Forbidden: bot was blocked by the user", 0)
	if done := h.Press(b, admin, third, locales.T(locales.En, "rep.btn.confirm")); !strings.Contains(done.RawText, "blocked the bot, so they were not told") {
		t.Fatalf("result %q", done.RawText)
	}
	// Cancel credits nothing.
	fourth := h.Command(b, admin, "credit", fmt.Sprint(buyer, " 100"))
	if got := h.Press(b, admin, fourth, locales.T(locales.En, "btn.cancel")); !strings.Contains(got.RawText, "Credit cancelled") || bottest.HasButton(got, bottest.En("line.giftcards")) {
		t.Fatalf("cancelled credit shows %q", got.RawText)
	}
	fifth := h.Command(b, admin, "credit", fmt.Sprint(buyer, " 100"))
	if got := h.Command(b, admin, "cancel", ""); !strings.Contains(got.RawText, "Credit cancelled") || strings.Contains(got.RawText, "Nothing was charged") {
		t.Fatalf("/cancel of a credit shows %q (the confirmation was %q)", got.RawText, fifth.RawText)
	}
	if bal, _ := w.Balance(context.Background(), buyer); !bal.Equal(usd("18.00")) { // 2 + 15.50 + 0.50
		t.Fatalf("balance %s after a cancelled credit", bal)
	}
	if rec, _ := records.NewCreditAudit(h.Rdb.Client, h.Rdb.Prefix).Recent(context.Background(), 10); len(rec) != 3 {
		t.Fatalf("audit has %d records, want 3", len(rec))
	}
	for _, c := range h.Fake.CallsFor("sendMessage") {
		if c.Int("chat_id") == 424242 {
			t.Fatal("a message went to a user who never started the bot")
		}
	}
	h.NoViolations()
}

// Without an upstream (RESELLER_BASE_URL unset) /transactions and /balance
// say so instead of failing.
func TestReportsWithoutAnUpstream(t *testing.T) {
	h := newHarness(t)
	b := h.reportsBot(nil, nil)
	h.Run(b)
	want := locales.T(locales.En, "rep.up.not_configured")
	if m := h.Command(b, admin, "transactions", ""); !strings.Contains(m.RawText, want) || len(m.ReplyMarkup.InlineKeyboard) != 2 {
		t.Fatalf("/transactions = %s", bottest.Render(m))
	}
	if m := h.Command(b, admin, "balance", ""); !strings.Contains(m.RawText, want) || !strings.Contains(m.RawText, "0\u00a0⭐") {
		t.Fatalf("/balance = %s", m.RawText)
	}
	h.NoViolations()
}

// After a confirmed credit, what the admin types is not an answer to it:
// a "1" does not show "Credited" again, as if it had credited twice.
func TestCreditDoneThenTypingDoesNotShowItAgain(t *testing.T) {
	h, b, w := creditShop(t, true)
	confirm := h.Command(b, admin, "credit", fmt.Sprint(buyer, " 15,50"))
	h.Press(b, admin, confirm, locales.T(locales.En, "rep.btn.confirm"))
	h.Idle(b)
	credited := func() int {
		n := 0
		for _, m := range h.BotMessages(admin) {
			if strings.Contains(m.Text, "Credited") {
				n++
			}
		}
		return n
	}
	before := credited()
	h.Fake.SendText(admin, "1")
	h.Idle(b)
	if n := credited(); n != before {
		t.Fatalf("\"Credited\" shown %d times after typing 1, %d before", n, before)
	}
	checkCreditedOnce(t, h, w)
	h.NoViolations()
}
