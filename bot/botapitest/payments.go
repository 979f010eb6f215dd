package botapitest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// DefaultPreCheckoutTimeout is how long Telegram waits for
// answerPreCheckoutQuery.
const DefaultPreCheckoutTimeout = 10 * time.Second

// ErrPreCheckoutTimeout means the bot did not answer a pre_checkout_query in time.
var ErrPreCheckoutTimeout = errors.New("bot did not answer pre_checkout_query in time")

// charge is one Star payment the bot received.
type charge struct {
	id       string
	user     User
	chatID   int64
	amount   int64
	currency string
	payload  string
	refunded bool
}

// preCheckoutState tracks one pre_checkout_query.
type preCheckoutState struct {
	at       time.Time
	done     chan struct{}
	answered bool
	expired  bool
	ok       bool
	errMsg   string
}

// PayOptions tunes Pay.
type PayOptions struct {
	// Timeout bounds the wait for answerPreCheckoutQuery (default
	// DefaultPreCheckoutTimeout; ctx bounds it too).
	Timeout time.Duration
	// Duplicate pushes the successful_payment message twice, in two updates
	// with different update ids.
	Duplicate bool
	// LoseUpdate records the payment (Star transaction and balance) but
	// pushes no successful_payment update, as if the update were lost.
	LoseUpdate bool
	// ChargeID sets telegram_payment_charge_id (default "stxTEST<n>").
	ChargeID string
}

// PayResult is the outcome of Pay.
type PayResult struct {
	// PreCheckoutQueryID is the id of the pre_checkout_query sent to the bot.
	PreCheckoutQueryID string
	// Declined is true when the bot answered ok=false; ErrorMessage is its reason.
	Declined     bool
	ErrorMessage string
	// ChargeID is telegram_payment_charge_id of the payment.
	ChargeID string
	// Currency, TotalAmount and Payload repeat the invoice.
	Currency    string
	TotalAmount int64
	Payload     string
	// MessageID is the id of the successful_payment message in the chat.
	MessageID int
	// UpdateIDs are the ids of the successful_payment updates pushed.
	UpdateIDs []int64
}

// Pay makes the chat's buyer pay the invoice the bot sent as message
// invoiceMessageID: it pushes a pre_checkout_query, waits for the bot's
// answerPreCheckoutQuery and, when the bot says ok, records the charge (a
// Star transaction from the buyer, added to the bot's balance for XTR) and
// pushes the successful_payment message. A decline is a result, not an
// error; errors are for a missing invoice, a closed server and no answer in
// time (ErrPreCheckoutTimeout).
func (s *Server) Pay(ctx context.Context, chatID int64, invoiceMessageID int, opts PayOptions) (PayResult, error) {
	s.mu.Lock()
	var inv *Message
	if cs := s.chats[chatID]; cs != nil && cs.byBot[invoiceMessageID] {
		inv = cs.msgs[invoiceMessageID]
	}
	if inv == nil || inv.Invoice == nil {
		s.mu.Unlock()
		return PayResult{}, fmt.Errorf("botapitest: pay: chat %d has no invoice message %d", chatID, invoiceMessageID)
	}
	res := PayResult{
		PreCheckoutQueryID: fmt.Sprintf("pcq%d", s.nextSeqLocked()),
		Currency:           inv.Invoice.Currency,
		TotalAmount:        inv.Invoice.TotalAmount,
		Payload:            inv.InvoicePayload,
	}
	q := &preCheckoutState{at: s.now(), done: make(chan struct{})}
	s.preCheckouts[res.PreCheckoutQueryID] = q
	_, vs := s.pushLocked(Update{PreCheckoutQuery: &PreCheckoutQuery{
		ID:             res.PreCheckoutQueryID,
		From:           s.userLocked(chatID),
		Currency:       res.Currency,
		TotalAmount:    res.TotalAmount,
		InvoicePayload: res.Payload,
	}})
	s.mu.Unlock()
	s.report(vs)

	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultPreCheckoutTimeout
	}
	wait, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	select {
	case <-q.done:
	case <-s.done:
		return res, fmt.Errorf("botapitest: pay: server closed")
	case <-wait.Done():
		s.mu.Lock()
		answered := q.answered
		if !answered {
			q.expired = true
		}
		s.mu.Unlock()
		if !answered {
			if ctx.Err() != nil {
				return res, fmt.Errorf("botapitest: pay: %w", ctx.Err())
			}
			return res, fmt.Errorf("botapitest: pay: query %s: %w (%s)", res.PreCheckoutQueryID, ErrPreCheckoutTimeout, timeout)
		}
	}
	s.mu.Lock()
	ok, errMsg := q.ok, q.errMsg
	s.mu.Unlock()
	if !ok {
		res.Declined, res.ErrorMessage = true, errMsg
		return res, nil
	}

	copies := 1
	if opts.Duplicate {
		copies = 2
	}
	if opts.LoseUpdate {
		copies = 0
	}
	res.ChargeID, res.MessageID, res.UpdateIDs = s.completePayment(chatID, res.Currency, res.TotalAmount, res.Payload, opts.ChargeID, copies)
	return res, nil
}

// PushPreCheckout pushes a pre_checkout_query from the buyer of chatID for
// an invoice of amount in currency with payload, as Telegram does when the
// buyer taps Pay, and returns its id. The bot may answer it within
// DefaultPreCheckoutTimeout of the server's clock; PreCheckoutAnswer tells
// what it answered. (Pay is the whole payment, from an invoice the bot sent.)
func (s *Server) PushPreCheckout(chatID int64, currency string, amount int64, payload string) string {
	s.mu.Lock()
	id := fmt.Sprintf("pcq%d", s.nextSeqLocked())
	s.preCheckouts[id] = &preCheckoutState{at: s.now(), done: make(chan struct{})}
	_, vs := s.pushLocked(Update{PreCheckoutQuery: &PreCheckoutQuery{
		ID: id, From: s.userLocked(chatID), Currency: currency, TotalAmount: amount, InvoicePayload: payload,
	}})
	s.mu.Unlock()
	s.report(vs)
	return id
}

// PreCheckoutAnswer reports whether the bot answered pre-checkout query id
// in time, and whether it said ok.
func (s *Server) PreCheckoutAnswer(id string) (answered, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.preCheckouts[id]
	if q == nil {
		return false, false
	}
	return q.answered, q.ok
}

// PushSuccessfulPayment pushes a successful_payment message in Telegram
// Stars as if the buyer of chatID paid amount for payload, without an
// invoice or a pre-checkout. A new charge (empty chargeID gets one
// generated) is recorded like Pay does; a known chargeID only pushes the
// message again. It returns the charge id.
func (s *Server) PushSuccessfulPayment(chatID int64, payload string, amount int64, chargeID string) string {
	id, _, _ := s.completePayment(chatID, "XTR", amount, payload, chargeID, 1)
	return id
}

// AddStarPayment records a Star charge by the buyer of chatID for payload,
// dated at, as if it had been paid then and its successful_payment update
// were long gone: it joins getStarTransactions (in date order) and the
// bot's balance, and may be refunded, but no update is pushed. An empty
// chargeID gets one generated. It returns the charge id.
func (s *Server) AddStarPayment(chatID int64, payload string, amount int64, at time.Time, chargeID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if chargeID == "" {
		chargeID = fmt.Sprintf("stxTEST%012d", s.nextSeqLocked())
	}
	if _, known := s.charges[chargeID]; known {
		return chargeID
	}
	user := s.userLocked(chatID)
	s.charges[chargeID] = &charge{id: chargeID, user: user, chatID: chatID, amount: amount, currency: "XTR", payload: payload}
	s.starBalance += amount
	tx := StarTransaction{
		ID:     chargeID,
		Amount: amount,
		Date:   at.Unix(),
		Source: &TransactionPartner{Type: "user", TransactionType: "invoice_payment", User: &user, InvoicePayload: payload},
	}
	i := len(s.transactions)
	for i > 0 && s.transactions[i-1].Date > tx.Date {
		i--
	}
	s.transactions = slices.Insert(s.transactions, i, tx)
	return chargeID
}

// completePayment records a charge and pushes copies of its
// successful_payment message.
func (s *Server) completePayment(chatID int64, currency string, amount int64, payload, chargeID string, copies int) (string, int, []int64) {
	s.mu.Lock()
	if chargeID == "" {
		chargeID = fmt.Sprintf("stxTEST%012d", s.nextSeqLocked())
	}
	user := s.userLocked(chatID)
	if _, known := s.charges[chargeID]; !known {
		s.charges[chargeID] = &charge{id: chargeID, user: user, chatID: chatID, amount: amount, currency: currency, payload: payload}
		if currency == "XTR" {
			s.starBalance += amount
			s.transactions = append(s.transactions, StarTransaction{
				ID:     chargeID,
				Amount: amount,
				Date:   s.now().Unix(),
				Source: &TransactionPartner{Type: "user", TransactionType: "invoice_payment", User: &user, InvoicePayload: payload},
			})
		}
	}
	m := s.userMessageLocked(chatID)
	m.SuccessfulPayment = &SuccessfulPayment{
		Currency:                currency,
		TotalAmount:             amount,
		InvoicePayload:          payload,
		TelegramPaymentChargeID: chargeID,
	}
	var ids []int64
	var vs []*Violation
	for range copies {
		u, v := s.pushLocked(Update{Message: m})
		ids = append(ids, u.UpdateID)
		vs = append(vs, v...)
	}
	s.mu.Unlock()
	s.report(vs)
	return chargeID, m.MessageID, ids
}

func (s *Server) answerPreCheckoutQuery(c *Call) (any, *APIError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.preCheckouts[c.String("pre_checkout_query_id")]
	if q == nil || q.answered || q.expired || s.now().Sub(q.at) > DefaultPreCheckoutTimeout {
		return nil, badRequest(errQueryTooOld)
	}
	q.answered, q.ok, q.errMsg = true, c.Bool("ok"), c.String("error_message")
	close(q.done)
	return true, nil
}

// StarBalance returns the bot's Telegram Star balance.
func (s *Server) StarBalance() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.starBalance
}

// SetStarBalance sets the bot's Telegram Star balance.
func (s *Server) SetStarBalance(stars int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.starBalance = stars
}

// StarTransactions returns the bot's Star transactions, oldest first.
func (s *Server) StarTransactions() []StarTransaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]StarTransaction(nil), s.transactions...)
}

// Refunded reports whether the charge was refunded.
func (s *Server) Refunded(chargeID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.charges[chargeID]
	return ch != nil && ch.refunded
}

func (s *Server) starsMethod(method string, c *Call) (any, *APIError) {
	s.mu.Lock()
	switch method {
	case "getMyStarBalance":
		defer s.mu.Unlock()
		return StarAmount{Amount: s.starBalance}, nil
	case "getStarTransactions":
		defer s.mu.Unlock()
		// Newest first, like Telegram's transaction history.
		offset, limit := int(c.Int("offset")), 100
		if c.Has("limit") {
			limit = int(c.Int("limit"))
		}
		out := []StarTransaction{}
		for i := len(s.transactions) - 1 - offset; i >= 0 && len(out) < limit; i-- {
			out = append(out, s.transactions[i])
		}
		return map[string]any{"transactions": out}, nil
	}
	// refundStarPayment
	ch := s.charges[c.String("telegram_payment_charge_id")]
	switch {
	case ch == nil || ch.currency != "XTR" || ch.user.ID != c.Int("user_id"):
		s.mu.Unlock()
		return nil, badRequest("CHARGE_NOT_FOUND")
	case ch.refunded:
		s.mu.Unlock()
		return nil, badRequest("CHARGE_ALREADY_REFUNDED")
	case s.starBalance < ch.amount:
		s.mu.Unlock()
		return nil, badRequest("BALANCE_TOO_LOW")
	}
	ch.refunded = true
	s.starBalance -= ch.amount
	user := ch.user
	s.transactions = append(s.transactions, StarTransaction{
		ID:       ch.id,
		Amount:   ch.amount,
		Date:     s.now().Unix(),
		Receiver: &TransactionPartner{Type: "user", TransactionType: "invoice_payment", User: &user, InvoicePayload: ch.payload},
	})
	m := s.userMessageLocked(ch.chatID)
	m.RefundedPayment = &RefundedPayment{Currency: ch.currency, TotalAmount: ch.amount, InvoicePayload: ch.payload, TelegramPaymentChargeID: ch.id}
	_, vs := s.pushLocked(Update{Message: m})
	s.mu.Unlock()
	s.report(vs)
	return true, nil
}
