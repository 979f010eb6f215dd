package referral_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"shopbot/state/redisstore/records"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/botapitest/types"
	"shopbot/bot/bottest"
	"shopbot/bot/checkout"
	"shopbot/bot/fulfil"
	"shopbot/bot/referral"
	"shopbot/bot/storefront"
	"shopbot/flows"
	flowshop "shopbot/flows/shop"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/reseller/resellersim"
	"shopbot/reseller/resellersim/simcatalog"
	"shopbot/state"
)

// The people of the tests: a buyer who invites (owner), buyers who come
// through the link, and an admin.
const (
	owner  = int64(7001)
	friend = int64(7002)
	third  = int64(7003)
	fourth = int64(7004)
	admin  = int64(9001)
)

// shop is the whole shop with the wallet on, the fulfilment worker over
// the upstream simulator, and referrals at a percent.
type shop struct {
	*bottest.Harness
	b      *storefront.Shop
	sim    *resellersim.Sim
	client *reseller.Client
	refs   *records.Referrals
	stop   func() time.Duration
}

// fastFulfil is the worker's timing for tests: polls and retries in
// milliseconds, a short lease so an abandoned job comes back soon.
var fastFulfil = fulfil.Config{
	Tick: 10 * time.Millisecond, Lease: 500 * time.Millisecond, PollMin: 20 * time.Millisecond, PollMax: 100 * time.Millisecond,
	Grace: 300 * time.Millisecond, AnsweredGrace: 100 * time.Millisecond, Settle: 300 * time.Millisecond,
	CodeSettle: 50 * time.Millisecond, StuckAfter: time.Hour, RetryMin: 20 * time.Millisecond, RetryMax: 200 * time.Millisecond,
}

func newShop(t *testing.T, percent string) *shop {
	t.Helper()
	return newShopVia(t, percent, nil)
}

// newShopVia is newShop with the upstream's answers passed through wrap
// (nil: as they are).
func newShopVia(t *testing.T, percent string, wrap func(http.Handler) http.Handler) *shop {
	t.Helper()
	h := bottest.New(t)
	sim := resellersim.New(resellersim.Config{Seed: 1})
	var upstream http.Handler = sim
	if wrap != nil {
		upstream = wrap(sim)
	}
	srv := httptest.NewServer(upstream)
	t.Cleanup(srv.Close)
	client, err := reseller.New(srv.URL+"/api/v1", "test-key")
	if err != nil {
		t.Fatal(err)
	}
	s := &shop{Harness: h, sim: sim, client: client, refs: records.NewReferrals(h.Rdb.Client, h.Rdb.Prefix)}
	s.start(percent, nil)
	return s
}

// start runs a shop process (another one after restart) with the
// referral percent and a fulfilment failpoint (nil: none).
func (s *shop) start(percent string, failpoint func(step string, id int64) error) {
	s.T.Helper()
	cfg := fastFulfil
	cfg.Failpoint = failpoint
	s.b = s.NewBot(func(o *storefront.Options) {
		o.Admins = []int64{admin}
		o.Reseller = s.client
		o.Fulfil = cfg
		o.Checkout = &checkout.Options{Wallet: true, Upstream: s.client}
		o.Referral = referral.Options{Percent: decimal.RequireFromString(percent)}
		o.Books.StarsUSDRate = decimal.RequireFromString("0.013")
	})
	s.stop = s.Run(s.b)
	s.Listening()
}

// restart stops the running process and starts another on the same Redis.
func (s *shop) restart(percent string, failpoint func(step string, id int64) error) {
	s.T.Helper()
	s.stop()
	s.start(percent, failpoint)
}

var linkRE = regexp.MustCompile(`https://t\.me/shopbot_test_bot\?start=r([a-z0-9]+)`)

// link asks /referrals as user and returns their invite code and the
// message.
func (s *shop) link(user int64) (string, types.Message) {
	s.T.Helper()
	m := s.Command(s.b, user, "referrals", "")
	got := linkRE.FindStringSubmatch(m.Text)
	if got == nil {
		s.T.Fatalf("/referrals of %d shows no link: %q", user, m.Text)
	}
	return got[1], m
}

// startWith sends /start with payload (none when "") as user.
func (s *shop) startWith(user int64, payload string) {
	s.T.Helper()
	s.Command(s.b, user, "start", payload)
}

func (s *shop) referrer(user int64) int64 {
	s.T.Helper()
	ref, _, err := s.refs.Referrer(context.Background(), user)
	if err != nil {
		s.T.Fatal(err)
	}
	return ref
}

// buy pays an order of one Apple 10 USD card from user's wallet (credited
// first), with the shop's price shopUSD ("" for the upstream price plus
// 10%), and returns it.
func (s *shop) buy(user int64, shopUSD string) *state.Order {
	s.T.Helper()
	ctx := context.Background()
	offers, err := s.client.GiftCardOffers(ctx, simcatalog.DemoGiftCategory)
	if err != nil {
		s.T.Fatal(err)
	}
	var price decimal.Decimal
	for _, o := range offers.Offers {
		if o.CardID == simcatalog.DemoGiftCard {
			price = o.PriceUSD.Decimal
		}
	}
	q := &state.Quote{
		ID: "q" + strings.ReplaceAll(time.Now().Format("150405.000000000"), ".", ""), Line: "giftcards", Item: simcatalog.DemoGiftCard,
		Category: simcatalog.DemoGiftCategory, ItemName: "Apple Gift Card 10 USD", Quantity: 1, UpstreamUSD: price,
		ChatID: user, UserID: user, Created: time.Now(), Expires: time.Now().Add(15 * time.Minute),
	}
	pricing := flowshop.Pricing{Markup: flowshop.Markup{Percent: decimal.NewFromInt(10)}}
	q.ShopUSD = pricing.ShopUSD(q.Line, price)
	if shopUSD != "" {
		q.ShopUSD = decimal.RequireFromString(shopUSD)
	}
	pay := s.b.Checkout
	if err := pay.Quotes.Save(ctx, q); err != nil {
		s.T.Fatal(err)
	}
	if _, _, err := pay.Wallets.Credit(ctx, user, q.ShopUSD, "test:topup:"+q.ID, "", "9001"); err != nil {
		s.T.Fatal(err)
	}
	env := &flows.Env{Lang: locales.En, Now: time.Now(), User: flows.User{ID: user}}
	if _, err := pay.Pay(ctx, env, &flows.Session{}, q); err != nil {
		s.T.Fatal(err)
	}
	var o *state.Order
	if !s.Until(func() bool { o, err = pay.Orders.ByQuote(ctx, q.ID); return err == nil }) {
		s.T.Fatalf("no order for quote %s: %v", q.ID, err)
	}
	return o
}

// finished waits until order id is delivered to its buyer (or refunded)
// and returns it.
func (s *shop) finished(id int64, status string) *state.Order {
	s.T.Helper()
	var o *state.Order
	if !s.Until(func() bool {
		o, _ = s.b.Checkout.Orders.Get(context.Background(), id)
		return o != nil && o.Status == status && o.NotifiedStatus == status
	}) {
		s.T.Fatalf("order %d never %s: %+v", id, status, o)
	}
	return o
}

func (s *shop) balance(user int64) decimal.Decimal {
	s.T.Helper()
	bal, err := s.b.Checkout.Wallets.Balance(context.Background(), user)
	if err != nil {
		s.T.Fatal(err)
	}
	return bal
}

// rewardNotices are the reward messages in user's chat.
func (s *shop) rewardNotices(user int64, lang locales.Lang) []string {
	head, _, _ := strings.Cut(locales.T(lang, "ref.rewarded"), ":")
	head = strings.TrimPrefix(head, "🤝 ")
	var out []string
	for _, m := range s.BotMessages(user) {
		if strings.Contains(m.Text, head) {
			out = append(out, m.Text)
		}
	}
	return out
}

// expectedReward is percent of o's margin rounded down to the cent.
func expectedReward(o *state.Order, percent string) decimal.Decimal {
	margin, _ := o.Margin(decimal.RequireFromString("0.013"))
	return margin.Mul(decimal.RequireFromString(percent)).Div(decimal.NewFromInt(100)).RoundDown(2)
}

// rewarded waits until user's wallet holds want.
func (s *shop) rewarded(user int64, want decimal.Decimal) {
	s.T.Helper()
	if !s.Until(func() bool { return s.balance(user).Equal(want) }) {
		s.T.Fatalf("wallet of %d holds %s, want %s", user, s.balance(user), want)
	}
}

// rerun puts the finished order's job back (as an admin's "run now" or a
// lost schedule put back does) and waits until it ran and was dropped.
func (s *shop) rerun(id int64) {
	s.T.Helper()
	ctx := context.Background()
	sched := s.b.Checkout.Schedule
	if err := sched.Put(ctx, fulfil.OrderJob(id), time.Now()); err != nil {
		s.T.Fatal(err)
	}
	if !s.Until(func() bool { _, ok, err := sched.Due(ctx, fulfil.OrderJob(id)); return err == nil && !ok }) {
		s.T.Fatalf("the job of order %d never ran again", id)
	}
}

func TestReferralLinkAttributesANewBuyerOnce(t *testing.T) {
	s := newShop(t, "10")
	s.startWith(owner, "")
	code, m := s.link(owner)
	if strings.Contains(m.Text, "7001") || len(code) != 8 {
		t.Fatalf("the link shows the user id or a long code: %q", m.Text)
	}
	if again, _ := s.link(owner); again != code {
		t.Fatalf("the code changed: %q, then %q", code, again)
	}
	if !bottest.HasButton(m, locales.T(locales.En, "btn.ref_share")) {
		t.Fatalf("no share button: %s", bottest.Render(m))
	}
	s.startWith(friend, "r"+code)
	if got := s.referrer(friend); got != owner {
		t.Fatalf("friend's referrer %d, want %d", got, owner)
	}
	// The link opens the shop's main menu like a plain /start.
	if last, _ := s.Fake.LastMessage(friend); !strings.Contains(last.RawText, locales.T(locales.En, "menu.title")) {
		t.Fatalf("the friend saw %q", last.RawText)
	}
	// Another /start through the same link changes nothing.
	s.startWith(friend, "r"+code)
	if sum, _ := s.refs.SummaryOf(context.Background(), owner); sum.Buyers != 1 {
		t.Fatalf("owner brought %d buyers after a second /start, want 1", sum.Buyers)
	}
	s.NoViolations()
}

func TestReferralOwnLinkIsRefused(t *testing.T) {
	s := newShop(t, "10")
	s.startWith(owner, "")
	code, _ := s.link(owner)
	s.startWith(owner, "r"+code)
	if got := s.referrer(owner); got != 0 {
		t.Fatalf("the owner was attributed to %d", got)
	}
	// Even as the very first /start: a code never refers its own owner.
	if _, _, err := s.refs.Attribute(context.Background(), owner, code, time.Now()); err != nil {
		t.Fatal(err)
	}
	if got := s.referrer(owner); got != 0 {
		t.Fatalf("the owner was attributed to %d", got)
	}
	if sum, _ := s.refs.SummaryOf(context.Background(), owner); sum.Buyers != 0 {
		t.Fatalf("owner brought %d buyers, want 0", sum.Buyers)
	}
}

func TestReferralAnotherLinkDoesNotReattribute(t *testing.T) {
	s := newShop(t, "10")
	s.startWith(owner, "")
	s.startWith(third, "")
	code, _ := s.link(owner)
	other, _ := s.link(third)
	s.startWith(friend, "r"+code)
	s.startWith(friend, "r"+other)
	if got := s.referrer(friend); got != owner {
		t.Fatalf("friend's referrer %d after another link, want %d", got, owner)
	}
	// A buyer who started the bot before is not new: no link attributes them.
	s.startWith(fourth, "")
	s.startWith(fourth, "r"+code)
	if got := s.referrer(fourth); got != 0 {
		t.Fatalf("a known buyer was attributed to %d", got)
	}
	// A link with a code nobody has, or of another kind, is a plain /start.
	s.startWith(int64(7005), "rzzzzzzzz")
	if got := s.referrer(7005); got != 0 {
		t.Fatalf("an unknown code attributed to %d", got)
	}
	if sum, _ := s.refs.SummaryOf(context.Background(), third); sum.Buyers != 0 {
		t.Fatalf("the second link's owner brought %d buyers", sum.Buyers)
	}
}

func TestReferralDeliveredOrderCreditsTheReferrerOnce(t *testing.T) {
	s := newShop(t, "10")
	s.Fake.SetUser(owner, types.User{FirstName: "Owner", LanguageCode: "ru"})
	s.startWith(owner, "")
	code, _ := s.link(owner) // asked in Russian: told in Russian
	s.startWith(friend, "r"+code)
	o := s.finished(s.buy(friend, "").ID, state.OrderDelivered)
	want := expectedReward(o, "10")
	if !want.IsPositive() {
		t.Fatalf("the test order has no reward: %+v", o)
	}
	s.rewarded(owner, want)
	if !s.Until(func() bool { return len(s.rewardNotices(owner, locales.Ru)) == 1 }) {
		t.Fatalf("owner's messages: %v", s.BotMessages(owner))
	}
	if got := s.rewardNotices(owner, locales.Ru)[0]; !strings.Contains(got, locales.Money(locales.Ru, want)) {
		t.Fatalf("notice %q does not name %s", got, locales.Money(locales.Ru, want))
	}
	moved, ok, err := s.b.Checkout.Wallets.Moved(context.Background(), owner, referral.RewardRef(o.ID))
	if err != nil || !ok || !moved.Equal(want) || referral.RewardRef(o.ID) != "ref:order:"+itoa(o.ID) {
		t.Fatalf("ledger ref %s: %s %v %v", referral.RewardRef(o.ID), moved, ok, err)
	}
	// The finished job runs again: nothing more is paid or said.
	s.rerun(o.ID)
	s.rerun(o.ID)
	s.Idle(s.b)
	if bal := s.balance(owner); !bal.Equal(want) {
		t.Fatalf("wallet %s after the job ran again, want %s", bal, want)
	}
	if n := len(s.rewardNotices(owner, locales.Ru)); n != 1 {
		t.Fatalf("owner told %d times", n)
	}
	// The buyer's own wallet paid the order and got nothing back.
	if bal := s.balance(friend); !bal.IsZero() {
		t.Fatalf("friend's wallet %s", bal)
	}
	// /wallet names the movement as a referral reward.
	w := s.Command(s.b, owner, "wallet", "")
	if !strings.Contains(w.Text, locales.T(locales.Ru, "wallet.kind_referral")) {
		t.Fatalf("/wallet = %q", w.Text)
	}
	// A delivered order is final: no refund path leads out of delivered, so
	// the reward is never taken back.
	_, err = s.b.Checkout.Orders.Transition(context.Background(), o.ID, []string{state.OrderDelivered}, state.OrderRefunding, nil, "test")
	if !errors.Is(err, state.ErrIllegalTransition) {
		t.Fatalf("delivered -> refunding: %v", err)
	}
	s.NoViolations()
}

func TestReferralRewardPaidOnceWhenTheProcessDiesBetweenDeliveryAndReward(t *testing.T) {
	s := newShop(t, "10")
	s.startWith(owner, "")
	code, _ := s.link(owner)
	s.startWith(friend, "r"+code)
	var hits atomic.Int64
	s.restart("10", func(step string, id int64) error {
		if step == fulfil.FailpointDelivered {
			hits.Add(1)
			return errors.New("crash")
		}
		return nil
	})
	o := s.finished(s.buy(friend, "").ID, state.OrderDelivered)
	if !s.Until(func() bool { return hits.Load() >= 2 }) { // abandoned, taken up again, abandoned
		t.Fatal("the worker never reached the reward")
	}
	if bal := s.balance(owner); !bal.IsZero() {
		t.Fatalf("rewarded %s before the reward step", bal)
	}
	// A new process takes the job up when the dead one's lease runs out.
	s.restart("10", nil)
	want := expectedReward(o, "10")
	s.rewarded(owner, want)
	s.rerun(o.ID)
	s.Idle(s.b)
	if bal := s.balance(owner); !bal.Equal(want) {
		t.Fatalf("wallet %s, want %s", bal, want)
	}
	if n := len(s.rewardNotices(owner, locales.En)); n != 1 {
		t.Fatalf("owner told %d times", n)
	}
	// The buyer got the order once.
	if len(o.Codes) == 0 {
		t.Fatal("the order has no codes")
	}
	n := 0
	for _, m := range s.BotMessages(friend) {
		if strings.Contains(m.Text, o.Codes[0]) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the buyer got the codes %d times", n)
	}
}

func TestReferralNoRewardWithoutMarginOrPercent(t *testing.T) {
	s := newShop(t, "10")
	s.startWith(owner, "")
	code, _ := s.link(owner)
	s.startWith(friend, "r"+code)

	// Sold at the upstream price: the margin is 0, so is the reward.
	o := s.finished(s.buy(friend, "").ID, state.OrderDelivered)
	atCost := s.finished(s.buy(friend, o.ChargedUSD.String()).ID, state.OrderDelivered)
	if m, _ := atCost.Margin(decimal.RequireFromString("0.013")); !m.IsZero() {
		t.Fatalf("margin %s, want 0", m)
	}
	want := expectedReward(o, "10")
	s.rewarded(owner, want)
	s.rerun(atCost.ID)
	if rw, ok, _ := s.refs.RewardOf(context.Background(), atCost.ID); !ok || !rw.USD.IsZero() {
		t.Fatalf("reward of the order at cost: %+v %v", rw, ok)
	}
	if _, ok, _ := s.b.Checkout.Wallets.Moved(context.Background(), owner, referral.RewardRef(atCost.ID)); ok {
		t.Fatal("the order at cost moved money")
	}

	// Referrals turned off (REFERRAL_PERCENT=0): a delivered order of a
	// referred buyer earns nothing, and /referrals is unknown.
	s.restart("0", nil)
	off := s.finished(s.buy(friend, "").ID, state.OrderDelivered)
	s.rerun(off.ID)
	if bal := s.balance(owner); !bal.Equal(want) {
		t.Fatalf("wallet %s with referrals off, want %s", bal, want)
	}
	if _, ok, _ := s.refs.RewardOf(context.Background(), off.ID); ok {
		t.Fatal("a reward was decided with referrals off")
	}
	if m := s.Command(s.b, owner, "referrals", ""); m.Text != locales.T(locales.En, "err.unknown_command") {
		t.Fatalf("/referrals with referrals off: %q", m.Text)
	}
	if n := len(s.rewardNotices(owner, locales.En)); n != 1 {
		t.Fatalf("owner told %d times", n)
	}
}

// A referred buyer's order that fails upstream is refunded, never
// delivered: it earns no reward.
func TestReferralRefundedOrderEarnsNothing(t *testing.T) {
	s := newShop(t, "10")
	s.startWith(owner, "")
	code, _ := s.link(owner)
	s.startWith(friend, "r"+code)
	s.sim.SetBehavior(simcatalog.DemoGiftCard, resellersim.Behavior{Mode: resellersim.Fail})
	o := s.finished(s.buy(friend, "").ID, state.OrderRefunded)
	s.rerun(o.ID)
	if bal := s.balance(owner); !bal.IsZero() {
		t.Fatalf("owner got %s for a refunded order", bal)
	}
	if _, ok, _ := s.refs.RewardOf(context.Background(), o.ID); ok {
		t.Fatal("a refunded order has a reward")
	}
}

func TestReferralFiguresInReferralsAndStats(t *testing.T) {
	s := newShop(t, "2.5")
	s.startWith(owner, "")
	code, _ := s.link(owner)
	s.startWith(friend, "r"+code)
	s.startWith(third, "r"+code)
	o1 := s.finished(s.buy(friend, "").ID, state.OrderDelivered)
	o2 := s.finished(s.buy(third, "").ID, state.OrderDelivered)
	want := expectedReward(o1, "2.5").Add(expectedReward(o2, "2.5"))
	if !want.IsPositive() {
		t.Fatal("no reward to count")
	}
	s.rewarded(owner, want)
	// Each reward's notice follows its credit: both are in the chat before
	// /referrals, whose answer must be the chat's last message.
	if !s.Until(func() bool { return len(s.rewardNotices(owner, locales.En)) == 2 }) {
		t.Fatalf("owner told %d times of 2 rewards", len(s.rewardNotices(owner, locales.En)))
	}

	_, m := s.link(owner)
	for _, part := range []string{
		locales.N(locales.En, "ref.buyers", 2),
		locales.T(locales.En, "ref.earned", "earned", locales.Money(locales.En, want)),
		"2.5%",
	} {
		if !strings.Contains(m.RawText, part) {
			t.Fatalf("/referrals = %q, want %q in it", m.RawText, part)
		}
	}
	// Another buyer sees their own, empty figures.
	_, other := s.link(fourth)
	if !strings.Contains(other.RawText, locales.N(locales.En, "ref.buyers", 0)) {
		t.Fatalf("/referrals of a new buyer = %q", other.RawText)
	}

	stats := s.Command(s.b, admin, "stats", "")
	line := locales.N(locales.En, "rep.stats.referrals", 2, "usd", locales.Money(locales.En, want), "orders", 2)
	if n := strings.Count(stats.RawText, line); n != 3 { // today, 7 and 30 days
		t.Fatalf("/stats shows %q %d times:\n%s", line, n, stats.RawText)
	}
}

func TestReferralsNeedTheWallet(t *testing.T) {
	h := bottest.New(t)
	var logs syncBuffer
	b := h.NewBot(func(o *storefront.Options) {
		o.Checkout = &checkout.Options{Stars: true}
		o.Referral = referral.Options{Percent: decimal.NewFromInt(10)}
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	h.Run(b)
	h.Listening()
	if !strings.Contains(logs.String(), "referrals are off") {
		t.Fatalf("no word at start that referrals are off:\n%s", logs.String())
	}
	if m := h.Command(b, owner, "referrals", ""); m.Text != locales.T(locales.En, "err.unknown_command") {
		t.Fatalf("/referrals without the wallet: %q", m.Text)
	}
	for _, c := range h.Fake.CallsFor("setMyCommands") {
		if strings.Contains(c.String("commands"), `"referrals"`) {
			t.Fatalf("the command menu lists /referrals without the wallet: %s", c.String("commands"))
		}
	}
}

func TestReferralsInTheCommandMenu(t *testing.T) {
	s := newShop(t, "5")
	calls := s.Fake.CallsFor("setMyCommands")
	if len(calls) == 0 {
		t.Fatal("no command menu")
	}
	for _, c := range calls {
		lang := locales.Lang(c.String("language_code"))
		if lang == "" {
			lang = locales.En
		}
		if !strings.Contains(c.String("commands"), locales.T(lang, "cmd.referrals")) {
			t.Fatalf("menu %q has no /referrals: %s", lang, c.String("commands"))
		}
	}
}

func TestRewardIsPercentOfMarginRoundedDown(t *testing.T) {
	d := decimal.RequireFromString
	for _, tc := range []struct{ margin, percent, want string }{
		{"1.00", "10", "0.1"},
		{"1.99", "10", "0.19"},
		{"0.09", "10", "0"},
		{"3.33", "2.5", "0.08"},
		{"0", "10", "0"},
		{"-1", "10", "0"},
		{"5", "100", "5"},
	} {
		if got := referral.RewardOf(d(tc.margin), d(tc.percent)); !got.Equal(d(tc.want)) {
			t.Errorf("RewardOf(%s, %s%%) = %s, want %s", tc.margin, tc.percent, got, tc.want)
		}
	}
}

// syncBuffer is a log destination safe for the bot's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) String() string { w.mu.Lock(); defer w.mu.Unlock(); return w.b.String() }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestReferralNoRewardFromAnImpossibleUpstreamCost: the upstream reports
// charged_usd -1000.0000 for a referred buyer's order: the order goes to
// review and no reward is decided or paid (before, the referrer got $51.30
// for a $26.18 order).
func TestReferralNoRewardFromAnImpossibleUpstreamCost(t *testing.T) {
	s := newShopVia(t, "10", func(h http.Handler) http.Handler { return resellersim.ReportCharged(h, "-1000.0000") })
	s.startWith(owner, "")
	code, _ := s.link(owner)
	s.startWith(friend, "r"+code)
	o := s.buy(friend, "26.18")
	var got *state.Order
	if !s.Until(func() bool {
		got, _ = s.b.Checkout.Orders.Get(context.Background(), o.ID)
		return got != nil && got.Status == state.OrderNeedsReview
	}) {
		t.Fatalf("order %d is %+v, want needs_review", o.ID, got)
	}
	if !strings.Contains(got.Reason, "charged_usd -1000.0000 is negative") {
		t.Fatalf("reason %q", got.Reason)
	}
	s.rerun(o.ID)
	if bal := s.balance(owner); !bal.IsZero() {
		t.Fatalf("the referrer got %s", bal)
	}
	if rw, ok, _ := s.refs.RewardOf(context.Background(), o.ID); ok {
		t.Fatalf("a reward was decided: %+v", rw)
	}
}

// TestReferralExistingCustomerWithoutStartIsNotAttributed: "new" is what
// the shop knows of the buyer, not whether they sent /start: a buyer who
// bought without /start, one with only a wallet movement, and one who
// only wrote to the bot, then opening an invite link, are not attributed;
// a buyer the shop has never seen is.
func TestReferralExistingCustomerWithoutStartIsNotAttributed(t *testing.T) {
	s := newShop(t, "10")
	s.startWith(owner, "")
	code, _ := s.link(owner)
	ctx := context.Background()

	s.finished(s.buy(friend, "").ID, state.OrderDelivered) // bought, never sent /start
	if _, _, err := s.b.Checkout.Wallets.Credit(ctx, third, decimal.RequireFromString("5"), "topup:x", "wallet top-up", "topup"); err != nil {
		t.Fatal(err)
	}
	s.Fake.SendText(fourth, "hello?")
	s.WaitText(fourth, "")
	s.Idle(s.b)
	for _, u := range []int64{friend, third, fourth} {
		s.startWith(u, "r"+code)
		if got := s.referrer(u); got != 0 {
			t.Errorf("existing customer %d was attributed to %d", u, got)
		}
	}
	s.startWith(int64(7005), "r"+code)
	if got := s.referrer(7005); got != owner {
		t.Fatalf("a new buyer's referrer %d, want %d", got, owner)
	}
	if sum, _ := s.refs.SummaryOf(ctx, owner); sum.Buyers != 1 {
		t.Fatalf("owner brought %d buyers, want 1", sum.Buyers)
	}
}
