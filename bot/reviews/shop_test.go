package reviews_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/botapitest/types"
	"shopbot/bot/bottest"
	"shopbot/bot/bottest/shoptest"
	"shopbot/bot/catalog"
	"shopbot/bot/fulfil"
	"shopbot/bot/storefront"
	"shopbot/flows/lines"
	flowshop "shopbot/flows/shop"
	"shopbot/locales"
	"shopbot/reseller/resellersim/simcatalog"
	"shopbot/state"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/work"
)

const (
	chat  = bottest.Chat
	admin = bottest.Admin
	agent = 555 // a support agent
)

// replica is one shop process in webhook mode (its updates are fed with
// AcceptRaw), running the fulfilment worker, with the product lines
// showing the reviews.
func replica(s *shoptest.Shop) *storefront.Shop {
	b := s.NewBot(func(o *storefront.Options) {
		o.Reseller, o.Fulfil, o.Admins, o.SupportAgents = s.Client, s.Cfg, []int64{admin}, []int64{agent}
		o.WebhookURL, o.WebhookSecret = "https://shop.example/hook", "s3cret"
	})
	lines.Register(b.Engine, &flowshop.Shop{
		Catalog: catalog.New(s.Client, work.NewCache(s.Rdb.Client, s.Rdb.Prefix), time.Minute),
		Pricing: flowshop.Pricing{Markup: flowshop.Markup{Percent: decimal.NewFromInt(10)}, StarsUSDRate: decimal.RequireFromString("0.013"), ShowStars: true},
		Reviews: catalog.Reviews{Store: b.Reviews},
	})
	return b
}

// feed hands update u to replica b, as a webhook delivery to it would.
func feed(t *testing.T, b *storefront.Shop, u types.Update) {
	t.Helper()
	raw, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.AcceptRaw(context.Background(), raw); err != nil {
		t.Fatal(err)
	}
}

// starData is the callback data of the rating question's button label.
func starData(t *testing.T, m types.Message, label string) string {
	t.Helper()
	for _, b := range m.ReplyMarkup.Buttons() {
		if b.Text == label {
			return b.CallbackData
		}
	}
	t.Fatalf("no button %q on %q", label, m.RawText)
	return ""
}

// lastWith waits for the bot's newest message in chat containing part.
func lastWith(s *shoptest.Shop, chatID int64, part string) types.Message {
	s.T.Helper()
	var got types.Message
	if !s.Until(func() bool {
		msgs := s.BotMessages(chatID)
		for i := len(msgs) - 1; i >= 0; i-- {
			if strings.Contains(msgs[i].RawText, part) {
				got = msgs[i]
				return true
			}
		}
		return false
	}) {
		s.T.Fatalf("chat %d: no message with %q", chatID, part)
	}
	return got
}

// After a delivery the buyer is asked once, after the codes, to rate the
// order; a double tap whose presses two replicas take rates it once; a
// hostile text is kept as typed and shown escaped on the product's screen;
// the staff hide it and the screen no longer shows it.
func TestRatingOnceAcrossReplicasAndHostileText(t *testing.T) {
	s := shoptest.New(t)
	one, two := replica(s), replica(s)
	s.Run(one)
	s.Run(two)
	ctx := context.Background()
	reviews := records.NewReviews(s.Rdb.Client, s.Rdb.Prefix)

	o := s.Paid(shoptest.GiftCards(1), state.PayWallet)
	o = s.WaitDelivered(o.ID)
	ask := s.WaitMessage(chat, "How was order #")
	msgs := s.BotMessages(chat)
	codesAt, askAt := -1, -1
	for i, m := range msgs {
		if strings.Contains(m.RawText, o.Codes[0]) {
			codesAt = i
		}
		if m.MessageID == ask.MessageID {
			askAt = i
		}
	}
	if codesAt < 0 || askAt < codesAt || len(ask.ReplyMarkup.Buttons()) != 5 {
		t.Fatalf("codes at %d, question at %d (%d buttons)", codesAt, askAt, len(ask.ReplyMarkup.Buttons()))
	}
	// The finished job looks at the order again (each replica's worker):
	// the buyer is not asked again.
	for range 3 {
		if err := s.Sched.Put(ctx, fulfil.OrderJob(o.ID), time.Now()); err != nil {
			t.Fatal(err)
		}
		if !s.Until(func() bool { _, ok, err := s.Sched.Due(ctx, fulfil.OrderJob(o.ID)); return err == nil && !ok }) {
			t.Fatal("the order's job never ran again")
		}
	}
	if n := s.CountMessages(chat, "How was order #"); n != 1 {
		t.Fatalf("asked %d times", n)
	}

	// A double tap (5, then 4): each press taken by another replica.
	tap5 := s.Fake.PressUpdate(chat, ask.MessageID, starData(t, ask, "5⭐"))
	tap4 := s.Fake.PressUpdate(chat, ask.MessageID, starData(t, ask, "4⭐"))
	feed(t, one, tap5)
	feed(t, two, tap4)
	a5, a4 := s.WaitAnswer(tap5.CallbackQuery.ID), s.WaitAnswer(tap4.CallbackQuery.ID)
	thanks, already := locales.T(locales.En, "review.thanks"), locales.T(locales.En, "review.already")
	if !(a5.Text == thanks && a4.Text == already || a5.Text == already && a4.Text == thanks) {
		t.Fatalf("answers %q and %q", a5.Text, a4.Text)
	}
	rv, err := reviews.Get(ctx, o.Ref())
	if err != nil || rv.User != chat || rv.Product != "gc-"+simcatalog.DemoGiftCategory || (rv.Stars != 5 && rv.Stars != 4) {
		t.Fatalf("review = %+v, %v", rv, err)
	}
	s.Idle(one)

	// The text step: a hostile text is kept as typed.
	hostile := "<b>x</b><script>alert(1)</script>"
	feed(t, two, s.Fake.TextUpdate(chat, hostile))
	lastWith(s, chat, locales.T(locales.En, "review.saved"))
	if rv, _ = reviews.Get(ctx, o.Ref()); rv.Text != hostile {
		t.Fatalf("text kept as %q", rv.Text)
	}
	// A tap on a star of the same question later changes nothing.
	again := s.Fake.PressUpdate(chat, ask.MessageID, starData(t, ask, "1⭐"))
	feed(t, one, again)
	if a := s.WaitAnswer(again.CallbackQuery.ID); a.Text != already {
		t.Fatalf("a later tap answered %q", a.Text)
	}

	// The product's screen shows it, escaped.
	feed(t, one, s.Fake.TextUpdate(chat, "/start gc-"+simcatalog.DemoGiftCategory))
	screen := lastWith(s, chat, "1 review")
	if !strings.Contains(screen.RawText, "&lt;b&gt;x&lt;/b&gt;&lt;script&gt;") || strings.Contains(screen.RawText, "<script>") {
		t.Fatalf("product screen = %q", screen.RawText)
	}

	// Someone else's press on the question is refused.
	forged := s.Fake.PressUpdate(chat+1, ask.MessageID, starData(t, ask, "1⭐"))
	feed(t, two, forged)
	if a := s.WaitAnswer(forged.CallbackQuery.ID); a.Text != locales.T(locales.En, "review.gone") {
		t.Fatalf("a stranger's press answered %q", a.Text)
	}

	// A support agent lists the reviews and hides this one.
	feed(t, one, s.Fake.TextUpdate(agent, "/reviews"))
	list := lastWith(s, agent, "Latest reviews")
	if !strings.Contains(list.RawText, "&lt;script&gt;") {
		t.Fatalf("/reviews = %q", list.RawText)
	}
	num, _, _ := strings.Cut(o.Ref(), ".")
	hide := s.Fake.PressUpdate(agent, list.MessageID, starData(t, list, "🙈 Hide #"+num))
	feed(t, two, hide)
	if a := s.WaitAnswer(hide.CallbackQuery.ID); a.Text != locales.T(locales.En, "reviews.hidden_done") {
		t.Fatalf("hide answered %q", a.Text)
	}
	if rv, _ = reviews.Get(ctx, o.Ref()); !rv.Hidden {
		t.Fatal("not hidden")
	}
	n := len(s.BotMessages(chat))
	feed(t, one, s.Fake.TextUpdate(chat, "/start gc-"+simcatalog.DemoGiftCategory))
	s.WaitBotMessages(chat, n+1)
	s.Idle(one)
	msgs = s.BotMessages(chat)
	if last := msgs[len(msgs)-1]; strings.Contains(last.RawText, "review") || strings.Contains(last.RawText, "script") {
		t.Fatalf("a hidden review is shown: %q", last.RawText)
	}
	// A buyer has no /reviews.
	feed(t, two, s.Fake.TextUpdate(chat, "/reviews"))
	lastWith(s, chat, locales.T(locales.En, "err.unknown_command"))
	s.NoViolations()
}
