//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"shopbot/bot/botapitest"
	"shopbot/bot/botapitest/types"
	"shopbot/bot/reviews"
)

// Simulated buyers: each is a goroutine with its own private chat that
// buys through the fake Bot API exactly as a person does: a command, button
// presses on the menu the bot edits in place, a typed player id, Pay, and
// the Stars invoice paid through Telegram's pre-checkout.

// purchase is one paid charge as the buyer made it.
type purchase struct {
	buyer    int64
	line     string // "giftcards" or "games"
	item     string // the item's button label prefix
	qty      int    // gift cards
	playerID string // in-game top-ups: unique per purchase
	fails    bool   // the item fails upstream (the buyer is refunded)
	chargeID string
	payload  string
	stars    int64
	paidAt   time.Time
	dupPay   bool // successful_payment pushed twice
}

// item is what a buyer may buy.
type item struct {
	line  string
	steps []string // button label prefixes from the line's first menu to the item
	label string
	fails bool
}

// The simulator's items the buyers choose from: gift cards (codes) and
// PUBG Mobile UC top-ups (no codes; the same offer for everyone, told apart
// only by the player id). "300 + 25 UC" is set to fail upstream.
var (
	chaosCards = []item{
		{line: "giftcards", steps: []string{"Apple", "US"}, label: "Apple Gift Card 10 USD"},
		{line: "giftcards", steps: []string{"Apple", "US"}, label: "Apple Gift Card 2 USD"},
	}
	chaosTopUps = []item{
		{line: "games", steps: []string{"PUBG Mobile", "PUBG Mobile UC (Global) "}, label: "60 UC"},
		{line: "games", steps: []string{"PUBG Mobile", "PUBG Mobile UC (Global) "}, label: "300 + 25 UC", fails: true},
	}
)

// shoppers runs the buyers and keeps what they did.
type shoppers struct {
	fake   *botapitest.Server
	target int64
	logf   func(format string, args ...any)
	debug  bool

	paid      atomic.Int64 // charges made
	nextID    atomic.Int64 // player id sequence
	attempts  atomic.Int64 // purchases started
	abandoned atomic.Int64 // purchases given up before paying (no screen in time)
	declined  atomic.Int64 // pre-checkout declined
	noInvoice atomic.Int64 // Pay answered "the invoice is already in the chat" with none to pay
	payErrors atomic.Int64 // pre-checkout not answered in time

	mu        sync.Mutex
	purchases []*purchase
	declines  map[string]int
	stuckAt   map[string]int // step where purchases were abandoned
}

func newShoppers(fake *botapitest.Server, target int, logf func(string, ...any), debug bool) *shoppers {
	return &shoppers{fake: fake, target: int64(target), logf: logf, debug: debug,
		declines: map[string]int{}, stuckAt: map[string]int{}}
}

// run starts n buyers with chat ids from firstID and waits until together
// they have paid target times (or ctx ends).
func (sh *shoppers) run(ctx context.Context, n int, firstID int64, seed uint64) {
	var wg sync.WaitGroup
	for i := range n {
		b := &shopper{sh: sh, chat: firstID + int64(i), rng: rand.New(rand.NewPCG(seed, uint64(i)))}
		sh.fake.SetUser(b.chat, types.User{FirstName: fmt.Sprintf("Buyer %d", i), Username: fmt.Sprintf("chaos_buyer_%d", i), LanguageCode: "en"})
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Buyers arrive over the first seconds, not all at once.
			if !sleepCtx(ctx, time.Duration(b.rng.IntN(3000))*time.Millisecond) {
				return
			}
			for ctx.Err() == nil && sh.paid.Load() < sh.target {
				b.buy(ctx)
			}
		}()
	}
	wg.Wait()
}

func (sh *shoppers) record(p *purchase) {
	sh.mu.Lock()
	sh.purchases = append(sh.purchases, p)
	sh.mu.Unlock()
}

func (sh *shoppers) all() []*purchase {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return append([]*purchase(nil), sh.purchases...)
}

// shopper is one buyer.
type shopper struct {
	sh   *shoppers
	chat int64
	rng  *rand.Rand
}

// A buyer does the same action again when the screen has not changed for
// stepWait (a chat whose worker was killed is taken over after the intake
// lease, 30 s), and gives a purchase up after attemptMax.
const (
	stepWait   = 15 * time.Second
	attemptMax = 2 * time.Minute
)

// buy makes one purchase attempt.
func (b *shopper) buy(ctx context.Context) {
	sh := b.sh
	sh.attempts.Add(1)
	var it item
	p := &purchase{buyer: b.chat}
	if b.rng.IntN(2) == 0 {
		it = chaosCards[0]
		if b.rng.IntN(10) < 3 {
			it = chaosCards[1]
		}
		p.qty = 1 + b.rng.IntN(3)
	} else {
		it = chaosTopUps[0]
		if b.rng.IntN(100) < 15 {
			it = chaosTopUps[1]
		}
		p.playerID = fmt.Sprintf("51%08d", sh.nextID.Add(1))
	}
	p.line, p.item, p.fails = it.line, it.label, it.fails
	err := b.order(ctx, it, p)
	if err != nil {
		if ctx.Err() == nil {
			sh.abandoned.Add(1)
			sh.mu.Lock()
			sh.stuckAt[err.Error()]++
			sh.mu.Unlock()
			if sh.debug {
				last, _ := sh.fake.LastMessage(b.chat)
				var labels []string
				for _, btn := range last.ReplyMarkup.Buttons() {
					labels = append(labels, btn.Text)
				}
				sh.logf("buyer %d: purchase abandoned at %s: %v; last message #%d %q %q",
					b.chat, time.Now().Format("15:04:05.000"), err, last.MessageID, body(last), labels)
			}
			// Start over as a person would: /cancel, then a fresh purchase.
			sh.fake.SendCommand(b.chat, "cancel", "")
			sleepCtx(ctx, time.Duration(500+b.rng.IntN(1500))*time.Millisecond)
		}
		return
	}
}

// order walks the menus to the invoice and pays it. The buyer acts like a
// person: on whatever screen the bot shows last (a rollback or a killed
// replica may show an older step, or "this menu is outdated"), it does what
// leads on from there; a screen that does not change for a while gets the
// same action again, and an unknown one starts the line over.
func (b *shopper) order(ctx context.Context, it item, p *purchase) error {
	sh := b.sh
	start := b.lastID() + 1
	deadline := time.Now().Add(attemptMax)
	var (
		lastKey    string    // the screen last acted on
		lastAct    time.Time // when
		invTried   = map[int]int{}
		pressedPay time.Time
		payAnswer  func() string
	)
	sh.fake.SendCommand(b.chat, it.line, "")
	lastAct, lastKey = time.Now(), "command"
	last := "command sent"
	for time.Now().Before(deadline) {
		if !sleepCtx(ctx, 150*time.Millisecond) {
			return ctx.Err()
		}
		m, ok := b.screen(start)
		key := "none"
		if ok {
			key = fmt.Sprintf("%d|%s|%d", m.MessageID, body(m), len(m.ReplyMarkup.Buttons()))
		}
		stale := time.Since(lastAct) > stepWait
		if key == lastKey && !stale {
			continue
		}
		b.think(ctx)
		lastAct, lastKey = time.Now(), key
		switch {
		case !ok:
			last = "no screen"
			sh.fake.SendCommand(b.chat, it.line, "")
		case m.Invoice != nil && !invoiceFor(m.Invoice, p):
			// An invoice of an earlier attempt, for another item, quantity
			// or player (sent again when a Redis rollback took its record
			// and a repeated Pay press came): a buyer who reads it does
			// not pay it.
			last = "another attempt's invoice"
			sh.fake.SendCommand(b.chat, it.line, "")
		case m.Invoice != nil:
			last = "invoice"
			if invTried[m.MessageID] >= 3 {
				sh.fake.SendCommand(b.chat, it.line, "") // a new quote, a new invoice
				continue
			}
			invTried[m.MessageID]++
			if sh.paid.Load() >= sh.target {
				return nil // enough purchases: leave the invoice unpaid
			}
			p.dupPay = b.rng.IntN(100) < 5
			res, err := sh.fake.Pay(ctx, b.chat, m.MessageID, botapitest.PayOptions{Duplicate: p.dupPay})
			switch {
			case err == nil && res.Declined:
				sh.declined.Add(1)
				sh.mu.Lock()
				sh.declines[res.ErrorMessage]++
				sh.mu.Unlock()
				return errors.New("pre-checkout declined")
			case err == nil:
				p.chargeID, p.payload, p.stars, p.paidAt = res.ChargeID, res.Payload, res.TotalAmount, time.Now()
				sh.paid.Add(1)
				sh.record(p)
				if sh.debug {
					sh.logf("buyer %d paid %s (%s x%d %s) charge %s", b.chat, p.line, p.item, p.qty, p.playerID, p.chargeID)
				}
				return nil
			case ctx.Err() != nil:
				return ctx.Err()
			}
			sh.payErrors.Add(1) // not answered in 10 s: tap Pay on the invoice again
			lastKey = ""
		case hasText("Please check your order")(m) && hasButton("💳")(m):
			last = "confirmation"
			if !pressedPay.IsZero() && payAnswer != nil && strings.Contains(payAnswer(), "already in the chat") && time.Since(pressedPay) > stepWait/2 {
				sh.noInvoice.Add(1)
				return errors.New("invoice marked sent but none arrived")
			}
			pressedPay = time.Now()
			payAnswer = b.press(m, "💳")
		case hasText("How many?")(m) && hasButton(fmt.Sprint(p.qty))(m):
			last = "quantity"
			b.press(m, fmt.Sprint(p.qty))
		case hasText("Player ID")(m):
			last = "player id"
			sh.fake.SendText(b.chat, p.playerID)
		case hasButton(it.label)(m):
			last = it.label
			b.press(m, it.label)
		default:
			done := false
			for i := len(it.steps) - 1; i >= 0 && !done; i-- {
				if hasButton(it.steps[i])(m) {
					last = it.steps[i]
					b.press(m, it.steps[i])
					done = true
				}
			}
			if !done {
				// An unknown screen ("outdated", a search result, an
				// error): start the line over.
				last = "unknown screen"
				sh.fake.SendCommand(b.chat, it.line, "")
			}
		}
	}
	return errors.New("not paid within " + attemptMax.String() + ", last at " + last)
}

// screen returns the screen the buyer looks at: the bot's newest message
// since the attempt started that has buttons, an invoice, or asks for the
// player id (delivery notices of earlier orders, and the questions to rate
// them, do not count).
func (b *shopper) screen(from int) (types.Message, bool) {
	msgs := b.sh.fake.MessagesIn(b.chat)
	for i := len(msgs) - 1; i >= 0 && msgs[i].MessageID >= from; i-- {
		m := msgs[i]
		if ratingQuestion(m) {
			continue
		}
		if m.Invoice != nil || len(m.ReplyMarkup.Buttons()) > 0 || strings.Contains(body(m), "Player ID") {
			return m, true
		}
	}
	return types.Message{}, false
}

// ratingQuestion reports whether m asks to rate a delivered order (its
// buttons are the reviews' stars).
func ratingQuestion(m types.Message) bool {
	for _, btn := range m.ReplyMarkup.Buttons() {
		if strings.Contains(btn.CallbackData, ":"+reviews.ActRate+":") {
			return true
		}
	}
	return false
}

// press presses m's button starting with label and returns a function
// that reads how the press was answered ("" until it is).
func (b *shopper) press(m types.Message, label string) func() string {
	for _, btn := range m.ReplyMarkup.Buttons() {
		if strings.HasPrefix(btn.Text, label) && btn.CallbackData != "" {
			q := b.sh.fake.Press(b.chat, m.MessageID, btn.CallbackData)
			return func() string {
				a, _ := b.sh.fake.CallbackAnswer(q)
				return a.Text
			}
		}
	}
	return func() string { return "" }
}

// think pauses like a person reading the screen.
func (b *shopper) think(ctx context.Context) {
	sleepCtx(ctx, time.Duration(200+b.rng.IntN(800))*time.Millisecond)
}

// lastID is the id of the bot's latest message in the chat.
func (b *shopper) lastID() int {
	m, ok := b.sh.fake.LastMessage(b.chat)
	if !ok {
		return 0
	}
	return m.MessageID
}

func hasButton(prefix string) func(types.Message) bool {
	return func(m types.Message) bool {
		for _, b := range m.ReplyMarkup.Buttons() {
			if strings.HasPrefix(b.Text, prefix) {
				return true
			}
		}
		return false
	}
}

func hasText(s string) func(types.Message) bool {
	return func(m types.Message) bool { return strings.Contains(body(m), s) }
}

// sleepCtx sleeps d or until ctx ends; it reports whether it slept all of d.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// body is what a buyer reads of a message: its text, or a photo's caption
// (catalog screens with a product image are photos).
func body(m types.Message) string {
	if m.Text != "" {
		return m.Text
	}
	return m.Caption
}

// invoiceFor reports whether an invoice is for the purchase p: its text
// names p's item, quantity and (in-game top-ups) player id.
func invoiceFor(inv *types.Invoice, p *purchase) bool {
	text := inv.Title + " " + inv.Description
	if p.item != "" && !strings.Contains(text, p.item) {
		return false
	}
	switch { // the invoice names a quantity of more than one unit (× n) only
	case p.qty > 1 && !strings.Contains(inv.Description, fmt.Sprintf(" × %d", p.qty)):
		return false
	case p.qty == 1 && strings.Contains(inv.Description, " × "):
		return false
	}
	return p.playerID == "" || strings.Contains(inv.Description, p.playerID)
}
