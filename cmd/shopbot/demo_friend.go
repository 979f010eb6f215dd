package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"shopbot/bot/botapitest"
	"shopbot/bot/botapitest/types"
)

// demoFriendID is the simulated friend of /friend: another Telegram user
// who has never opened the shop.
const demoFriendID int64 = 100200301

// demoFriendStep bounds the wait for each screen of the friend's purchase.
const demoFriendStep = 10 * time.Second

// friend plays a friend of the demo user for /friend: they open the shop
// through the demo user's invite link (/start r<code>), buy a 2 USD Apple
// gift card and pay its Stars invoice, all through the real bot. With
// referrals on, the demo user then earns the reward of that order, told
// in their chat, and /referrals counts the friend. The friend's chat is
// not printed; what they did is noted.
func (d *demoSession) friend(ctx context.Context) {
	if d.referrals == nil {
		d.tc.note("Referrals are off in this demo (REFERRAL_PERCENT is 0 or the wallet is off).")
		return
	}
	if d.friendDone {
		d.tc.note("Your friend already came and bought once; a referral counts a buyer once.")
		return
	}
	d.friendDone = true
	d.tc.stopAsking()
	code, err := d.referrals.Code(ctx, demoUserID)
	if err != nil {
		d.tc.note("Could not read your invite code: %v", err)
		return
	}
	d.tc.note("A friend opens the shop through your invite link (start=r%s) and buys a 2 USD Apple gift card with Stars...", code)
	go func() {
		charge, err := friendBuys(ctx, d.fake, code)
		if err != nil {
			d.tc.note("Your friend's purchase stopped: %v", err)
			return
		}
		d.tc.note("Your friend paid (charge %s). When their order is delivered, your reward arrives here; /referrals shows it.", charge)
	}()
}

// friendBuys walks the friend through a purchase and returns the charge.
func friendBuys(ctx context.Context, fake *botapitest.Server, code string) (string, error) {
	fake.SendCommand(demoFriendID, "start", "r"+code)
	if _, err := friendScreen(ctx, fake, "", ""); err != nil { // the welcome menu
		return "", err
	}
	fake.SendCommand(demoFriendID, "giftcards", "")
	for _, step := range []struct{ text, button string }{
		{"Choose a brand", "Apple"},
		{"Choose the card's region", "US"},
		{"Choose a card", "Apple Gift Card 2 USD"},
		{"How many?", "1"},
		{"Please check your order", "💳 Pay"},
	} {
		m, err := friendScreen(ctx, fake, step.text, step.button)
		if err != nil {
			return "", err
		}
		if err := pressStarting(fake, m, step.button); err != nil {
			return "", err
		}
	}
	var inv types.Message
	chose := 0
	err := friendWait(ctx, fake, func(msgs []types.Message) bool {
		if len(msgs) == 0 {
			return false
		}
		m := msgs[len(msgs)-1]
		switch {
		case m.Invoice != nil:
			inv = m
			return true
		case hasButtonStarting(m, "⭐ Pay") && chose != m.MessageID: // both methods: pay in Stars
			chose = m.MessageID
			_ = pressStarting(fake, m, "⭐ Pay")
		}
		return false
	})
	if err != nil {
		return "", fmt.Errorf("no invoice: %w", err)
	}
	res, err := fake.Pay(ctx, demoFriendID, inv.MessageID, botapitest.PayOptions{})
	switch {
	case err != nil:
		return "", err
	case res.Declined:
		return "", errors.New("the shop declined the payment: " + res.ErrorMessage)
	}
	return res.ChargeID, nil
}

// friendScreen waits for the friend's newest message holding text (any
// message when text is "") and, when button is set, a button starting
// with it.
func friendScreen(ctx context.Context, fake *botapitest.Server, text, button string) (types.Message, error) {
	var found types.Message
	err := friendWait(ctx, fake, func(msgs []types.Message) bool {
		for i := len(msgs) - 1; i >= 0; i-- {
			m := msgs[i]
			body := m.Text + m.Caption
			if strings.Contains(body, text) && (button == "" || hasButtonStarting(m, button)) {
				found = m
				return true
			}
		}
		return false
	})
	if err != nil {
		return found, fmt.Errorf("waiting for %q: %w", text, err)
	}
	return found, nil
}

// friendWait polls the friend's chat until ok says so, at most
// demoFriendStep.
func friendWait(ctx context.Context, fake *botapitest.Server, ok func([]types.Message) bool) error {
	ctx, cancel := context.WithTimeout(ctx, demoFriendStep)
	defer cancel()
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		if ok(fake.MessagesIn(demoFriendID)) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

func hasButtonStarting(m types.Message, prefix string) bool {
	for _, b := range m.ReplyMarkup.Buttons() {
		if strings.HasPrefix(b.Text, prefix) && b.CallbackData != "" {
			return true
		}
	}
	return false
}

func pressStarting(fake *botapitest.Server, m types.Message, prefix string) error {
	for _, b := range m.ReplyMarkup.Buttons() {
		if strings.HasPrefix(b.Text, prefix) && b.CallbackData != "" {
			fake.Press(demoFriendID, m.MessageID, b.CallbackData)
			return nil
		}
	}
	return fmt.Errorf("no button %q", prefix)
}
