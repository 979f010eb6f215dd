package botapitest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"shopbot/bot/botapitest/types"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
)

// tinyBot is a hand-written bot loop: it polls getUpdates with JSON bodies
// (as our own poller does), answers pre-checkout queries with go-telegram/bot
// (declining payloads that start with "bad") and collects successful payments.
type tinyBot struct {
	mu       sync.Mutex
	payments []types.SuccessfulPayment
	changed  chan struct{}
}

func runTinyBot(t *testing.T, s *Server, answer bool) *tinyBot {
	t.Helper()
	b := newBot(t, s)
	tb := &tinyBot{changed: make(chan struct{}, 100)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() {
		cancel()
		<-done
	})
	go func() {
		defer close(done)
		var offset int64
		for ctx.Err() == nil {
			body, _ := json.Marshal(map[string]any{"offset": offset, "timeout": 30})
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/bot"+s.Token()+"/getUpdates", strings.NewReader(string(body)))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return
			}
			var a struct {
				OK     bool           `json:"ok"`
				Result []types.Update `json:"result"`
			}
			err = json.NewDecoder(resp.Body).Decode(&a)
			resp.Body.Close()
			if err != nil || !a.OK {
				return
			}
			for _, u := range a.Result {
				offset = u.UpdateID + 1
				switch {
				case u.PreCheckoutQuery != nil && answer:
					q := u.PreCheckoutQuery
					p := &bot.AnswerPreCheckoutQueryParams{PreCheckoutQueryID: q.ID, OK: true}
					if strings.HasPrefix(q.InvoicePayload, "bad") {
						p.OK, p.ErrorMessage = false, "This offer has expired"
					}
					if _, err := b.AnswerPreCheckoutQuery(ctx, p); err != nil && ctx.Err() == nil {
						t.Errorf("answerPreCheckoutQuery: %v", err)
					}
				case u.Message != nil && u.Message.SuccessfulPayment != nil:
					tb.mu.Lock()
					tb.payments = append(tb.payments, *u.Message.SuccessfulPayment)
					tb.mu.Unlock()
					tb.changed <- struct{}{}
				}
			}
		}
	}()
	return tb
}

func (tb *tinyBot) waitPayments(t *testing.T, n int) []types.SuccessfulPayment {
	t.Helper()
	ctx := ctxTimeout(t, 10*time.Second)
	for {
		tb.mu.Lock()
		got := append([]types.SuccessfulPayment(nil), tb.payments...)
		tb.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-tb.changed:
		case <-ctx.Done():
			t.Fatalf("got %d payments, want %d", len(got), n)
		}
	}
}

func sendStarsInvoice(t *testing.T, s *Server, chat int64, payload string, stars int) int {
	t.Helper()
	msg, err := newBot(t, s).SendInvoice(t.Context(), &bot.SendInvoiceParams{
		ChatID: chat, Title: "Telegram Stars", Description: "500 Stars for @ann", Payload: payload,
		Currency: "XTR", Prices: []models.LabeledPrice{{Label: "500 Stars", Amount: stars}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return msg.ID
}

func TestPayEndToEnd(t *testing.T) {
	s := NewT(t, WithStarBalance(100))
	tb := runTinyBot(t, s, true)
	const chat = 42
	ctx := ctxTimeout(t, 10*time.Second)

	inv := sendStarsInvoice(t, s, chat, "q:1", 650)
	res, err := s.Pay(ctx, chat, inv, PayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Declined || res.Currency != "XTR" || res.TotalAmount != 650 || res.Payload != "q:1" || !strings.HasPrefix(res.ChargeID, "stxTEST") || len(res.UpdateIDs) != 1 {
		t.Errorf("result = %+v", res)
	}
	got := tb.waitPayments(t, 1)
	if p := got[0]; p.TelegramPaymentChargeID != res.ChargeID || p.TotalAmount != 650 || p.InvoicePayload != "q:1" {
		t.Errorf("payment = %+v", p)
	}
	if s.StarBalance() != 750 {
		t.Errorf("balance = %d, want 750", s.StarBalance())
	}
	txs := s.StarTransactions()
	if len(txs) != 1 || txs[0].ID != res.ChargeID || txs[0].Source.User.ID != chat || txs[0].Source.InvoicePayload != "q:1" {
		t.Errorf("transactions = %+v", txs)
	}
	pcq := s.CallsFor("answerPreCheckoutQuery")
	if len(pcq) != 1 || pcq[0].String("pre_checkout_query_id") != res.PreCheckoutQueryID || !pcq[0].Bool("ok") {
		t.Errorf("answerPreCheckoutQuery calls = %+v", pcq)
	}

	t.Run("duplicate successful_payment", func(t *testing.T) {
		res, err := s.Pay(ctx, chat, sendStarsInvoice(t, s, chat, "q:2", 10), PayOptions{Duplicate: true})
		if err != nil || len(res.UpdateIDs) != 2 {
			t.Fatalf("pay = %+v, %v", res, err)
		}
		got := tb.waitPayments(t, 3)
		if got[1].TelegramPaymentChargeID != got[2].TelegramPaymentChargeID {
			t.Errorf("duplicates differ: %+v", got[1:])
		}
		if s.StarBalance() != 760 {
			t.Errorf("a duplicate update was counted twice: balance %d", s.StarBalance())
		}
	})

	t.Run("lost update", func(t *testing.T) {
		before := len(s.StarTransactions())
		res, err := s.Pay(ctx, chat, sendStarsInvoice(t, s, chat, "q:3", 5), PayOptions{LoseUpdate: true, ChargeID: "stxLOST"})
		if err != nil || res.ChargeID != "stxLOST" || len(res.UpdateIDs) != 0 {
			t.Fatalf("pay = %+v, %v", res, err)
		}
		if txs := s.StarTransactions(); len(txs) != before+1 || txs[len(txs)-1].ID != "stxLOST" {
			t.Errorf("transactions = %+v", txs)
		}
	})

	t.Run("declined", func(t *testing.T) {
		res, err := s.Pay(ctx, chat, sendStarsInvoice(t, s, chat, "bad:4", 5), PayOptions{})
		if err != nil || !res.Declined || res.ErrorMessage != "This offer has expired" || res.ChargeID != "" {
			t.Errorf("pay = %+v, %v", res, err)
		}
	})

	t.Run("refund reduces the balance", func(t *testing.T) {
		b := newBot(t, s)
		if _, err := b.RefundStarPayment(ctx, &bot.RefundStarPaymentParams{UserID: chat, TelegramPaymentChargeID: res.ChargeID}); err != nil {
			t.Fatal(err)
		}
		if s.StarBalance() != 765-650 {
			t.Errorf("balance = %d", s.StarBalance())
		}
		_, err := b.RefundStarPayment(ctx, &bot.RefundStarPaymentParams{UserID: 1, TelegramPaymentChargeID: "stxLOST"})
		if err == nil || !strings.Contains(err.Error(), "CHARGE_NOT_FOUND") {
			t.Errorf("refund to another user: %v", err)
		}
	})

	t.Run("not an invoice", func(t *testing.T) {
		if _, err := s.Pay(ctx, chat, 9999, PayOptions{}); err == nil {
			t.Error("paid a message that does not exist")
		}
	})
}

func TestPayWithoutAnAnswerTimesOut(t *testing.T) {
	s := NewT(t)
	runTinyBot(t, s, false)
	inv := sendStarsInvoice(t, s, 5, "q:1", 1)
	res, err := s.Pay(t.Context(), 5, inv, PayOptions{Timeout: 50 * time.Millisecond})
	if !errors.Is(err, ErrPreCheckoutTimeout) {
		t.Fatalf("err = %v", err)
	}
	// A late answer is too old, as in Telegram.
	_, err = newBot(t, s).AnswerPreCheckoutQuery(t.Context(), &bot.AnswerPreCheckoutQueryParams{PreCheckoutQueryID: res.PreCheckoutQueryID, OK: true})
	if !errors.Is(err, bot.ErrorBadRequest) {
		t.Errorf("late answer: err = %v", err)
	}
	if s.StarBalance() != 0 || len(s.StarTransactions()) != 0 {
		t.Errorf("an unanswered checkout was charged")
	}
}

// A Mini App's invoice link is paid as Telegram pays one opened with
// openInvoice: the pre-checkout query from the payer, then the payment in
// the payer's chat with the bot.
func TestPayInvoiceLink(t *testing.T) {
	s := NewT(t)
	tb := runTinyBot(t, s, true)
	const chat = 43
	ctx := ctxTimeout(t, 10*time.Second)
	b := newBot(t, s)
	link, err := b.CreateInvoiceLink(ctx, &bot.CreateInvoiceLinkParams{Title: "Apple 10 USD", Description: "Apple 10 USD × 2", Payload: "q:7",
		Currency: "XTR", Prices: []models.LabeledPrice{{Label: "Total", Amount: 1754}}})
	if err != nil || !strings.HasPrefix(link, "https://t.me/$") {
		t.Fatalf("createInvoiceLink = %q, %v", link, err)
	}
	links := s.InvoiceLinks()
	if len(links) != 1 || links[0].URL != link || links[0].Payload != "q:7" || links[0].TotalAmount != 1754 || links[0].Currency != "XTR" || links[0].Title != "Apple 10 USD" {
		t.Fatalf("links = %+v", links)
	}
	res, err := s.PayLink(ctx, chat, link, PayOptions{})
	if err != nil || res.Declined || res.TotalAmount != 1754 || res.Payload != "q:7" {
		t.Fatalf("PayLink = %+v, %v", res, err)
	}
	if p := tb.waitPayments(t, 1)[0]; p.TelegramPaymentChargeID != res.ChargeID || p.InvoicePayload != "q:7" {
		t.Fatalf("payment = %+v", p)
	}
	if _, err := s.PayLink(ctx, chat, "https://t.me/$nope", PayOptions{}); err == nil {
		t.Fatal("paid a link the bot never made")
	}
}
