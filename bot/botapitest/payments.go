package botapitest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"shopbot/bot/botapitest/calls"
	"shopbot/bot/botapitest/schema"
	"shopbot/bot/botapitest/types"
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
	user     types.User
	chatID   int64
	amount   int64
	currency string
	payload  string
	refunded bool
	// affiliate is the commission an affiliate took from the payment
	// (nil: none).
	affiliate *types.AffiliateInfo
}

// affiliateOf is the affiliate who brought a buyer, and its rate.
type affiliateOf struct {
	user     types.User
	perMille int
}

// SetAffiliate makes buyer chatID one that affiliate brought through the
// bot's affiliate program, at perMille Stars of every 1000 the bot
// receives: the buyer's Star payments from now on carry the commission
// (AffiliateInfo) and the bot keeps the rest; a refund gives the whole
// payment back to the buyer and takes the commission back from the
// affiliate. perMille 0 ends it.
func (s *Server) SetAffiliate(buyer int64, affiliate types.User, perMille int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.affiliates == nil {
		s.affiliates = map[int64]affiliateOf{}
	}
	if perMille <= 0 {
		delete(s.affiliates, buyer)
		return
	}
	s.affiliates[buyer] = affiliateOf{user: affiliate, perMille: perMille}
}

// AddAffiliateCommission records a commission the bot earned as an
// affiliate of sponsor's program: an incoming Star transaction from the
// program (TransactionPartnerAffiliateProgram), added to the balance. It
// returns the transaction's id.
func (s *Server) AddAffiliateCommission(sponsor types.User, perMille int, stars int64, at time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := fmt.Sprintf("affTEST%012d", s.nextSeqLocked())
	s.starBalance += stars
	s.insertTxLocked(types.StarTransaction{ID: id, Amount: stars, Date: at.Unix(),
		Source: &types.TransactionPartner{Type: "affiliate_program", SponsorUser: &sponsor, CommissionPerMille: perMille}})
	return id
}

// insertTxLocked adds a transaction in date order.
func (s *Server) insertTxLocked(tx types.StarTransaction) {
	i := len(s.transactions)
	for i > 0 && s.transactions[i-1].Date > tx.Date {
		i--
	}
	s.transactions = slices.Insert(s.transactions, i, tx)
}

// paymentTxLocked is the incoming transaction of a Star payment of amount
// by user (of chat chatID) for payload, with the commission of the
// affiliate who brought the buyer, if any; it credits what the bot keeps
// and records the commission on ch.
func (s *Server) paymentTxLocked(ch *charge, at time.Time) types.StarTransaction {
	user := ch.user
	tx := types.StarTransaction{ID: ch.id, Amount: ch.amount, Date: at.Unix(),
		Source: &types.TransactionPartner{Type: "user", TransactionType: "invoice_payment", User: &user, InvoicePayload: ch.payload}}
	a, ok := s.affiliates[ch.chatID]
	if !ok {
		s.starBalance += ch.amount
		return tx
	}
	// The commission in nanostars: perMille/1000 of the amount.
	nanos := ch.amount * int64(a.perMille) * 1_000_000
	whole, frac := nanos/1_000_000_000, nanos%1_000_000_000
	aff := a.user
	ch.affiliate = &types.AffiliateInfo{AffiliateUser: &aff, CommissionPerMille: a.perMille, Amount: whole, NanostarAmount: frac}
	tx.Source.Affiliate = ch.affiliate
	tx.Amount = ch.amount - whole
	if frac > 0 {
		tx.Amount, tx.NanostarAmount = tx.Amount-1, 1_000_000_000-frac
	}
	s.starBalance += tx.Amount // the fraction stays with Telegram in this fake
	return tx
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
	// ChargeID sets telegram_payment_charge_id (default "stxTEST<server><n>":
	// unique across fake servers, as Telegram's ids are).
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
	var inv *types.Message
	if cs := s.chats[chatID]; cs != nil && cs.byBot[invoiceMessageID] {
		inv = cs.msgs[invoiceMessageID]
	}
	if inv == nil || inv.Invoice == nil {
		s.mu.Unlock()
		return PayResult{}, fmt.Errorf("botapitest: pay: chat %d has no invoice message %d", chatID, invoiceMessageID)
	}
	return s.payLocked(ctx, chatID, inv.Invoice.Currency, inv.Invoice.TotalAmount, inv.InvoicePayload, opts)
}

// InvoiceLink is an invoice the bot made as a link (createInvoiceLink),
// what a Mini App opens with Telegram.WebApp.openInvoice.
type InvoiceLink struct {
	URL         string // https://t.me/$<slug>
	Title       string
	Description string
	Payload     string
	Currency    string
	TotalAmount int64
}

// createInvoiceLink records the invoice and answers a link of its own.
func (s *Server) createInvoiceLink(c *calls.Call) (any, *APIError) {
	var prices []struct {
		Amount int64 `json:"amount"`
	}
	_ = c.JSON("prices", &prices)
	var total int64
	for _, p := range prices {
		total += p.Amount
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l := InvoiceLink{
		URL:   fmt.Sprintf("https://t.me/$TESTinvoice%d", s.nextSeqLocked()),
		Title: c.String("title"), Description: c.String("description"), Payload: c.String("payload"),
		Currency: c.String("currency"), TotalAmount: total,
	}
	s.links = append(s.links, l)
	return l.URL, nil
}

// InvoiceLinks returns the invoice links the bot made, oldest first.
func (s *Server) InvoiceLinks() []InvoiceLink {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]InvoiceLink(nil), s.links...)
}

// PayLink makes the buyer of chatID pay the invoice behind link (one the
// bot made with createInvoiceLink), as Telegram does when a Mini App opens
// it with openInvoice and the buyer confirms: the pre_checkout_query from
// the buyer, and when the bot says ok the charge and the
// successful_payment message in the buyer's chat with the bot. The result
// and errors are Pay's; an unknown link is an error.
func (s *Server) PayLink(ctx context.Context, chatID int64, link string, opts PayOptions) (PayResult, error) {
	s.mu.Lock()
	for _, l := range s.links {
		if l.URL == link {
			return s.payLocked(ctx, chatID, l.Currency, l.TotalAmount, l.Payload, opts)
		}
	}
	s.mu.Unlock()
	return PayResult{}, fmt.Errorf("botapitest: pay: the bot made no invoice link %q", link)
}

// payLocked pays an invoice (Pay and PayLink); it is called with s.mu
// held and releases it.
func (s *Server) payLocked(ctx context.Context, chatID int64, currency string, total int64, payload string, opts PayOptions) (PayResult, error) {
	res := PayResult{
		PreCheckoutQueryID: fmt.Sprintf("pcq%d", s.nextSeqLocked()),
		Currency:           currency,
		TotalAmount:        total,
		Payload:            payload,
	}
	q := &preCheckoutState{at: s.now(), done: make(chan struct{})}
	s.preCheckouts[res.PreCheckoutQueryID] = q
	_, vs := s.pushLocked(types.Update{PreCheckoutQuery: &types.PreCheckoutQuery{
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
	res.ChargeID, res.MessageID, res.UpdateIDs = s.completePayment(chatID, res.Currency, res.TotalAmount, res.Payload, opts.ChargeID, copies, time.Time{})
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
	_, vs := s.pushLocked(types.Update{PreCheckoutQuery: &types.PreCheckoutQuery{
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
	id, _, _ := s.completePayment(chatID, "XTR", amount, payload, chargeID, 1, time.Time{})
	return id
}

// PushSuccessfulPaymentAt is PushSuccessfulPayment for a charge paid at
// (its Star transaction and its message dated then): the update of an
// old payment, as Telegram delivers again one it could not hand over.
func (s *Server) PushSuccessfulPaymentAt(chatID int64, payload string, amount int64, chargeID string, at time.Time) string {
	id, _, _ := s.completePayment(chatID, "XTR", amount, payload, chargeID, 1, at)
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
		chargeID = s.chargeIDLocked()
	}
	if _, known := s.charges[chargeID]; known {
		return chargeID
	}
	user := s.userLocked(chatID)
	ch := &charge{id: chargeID, user: user, chatID: chatID, amount: amount, currency: "XTR", payload: payload}
	s.charges[chargeID] = ch
	s.insertTxLocked(s.paymentTxLocked(ch, at))
	return chargeID
}

// completePayment records a charge and pushes copies of its
// successful_payment message.
func (s *Server) completePayment(chatID int64, currency string, amount int64, payload, chargeID string, copies int, at time.Time) (string, int, []int64) {
	s.mu.Lock()
	if at.IsZero() {
		at = s.now()
	}
	if chargeID == "" {
		chargeID = s.chargeIDLocked()
	}
	user := s.userLocked(chatID)
	if _, known := s.charges[chargeID]; !known {
		ch := &charge{id: chargeID, user: user, chatID: chatID, amount: amount, currency: currency, payload: payload}
		s.charges[chargeID] = ch
		if currency == "XTR" {
			s.insertTxLocked(s.paymentTxLocked(ch, at))
		}
	}
	m := s.userMessageLocked(chatID)
	m.Date = at.Unix()
	m.SuccessfulPayment = &types.SuccessfulPayment{
		Currency:                currency,
		TotalAmount:             amount,
		InvoicePayload:          payload,
		TelegramPaymentChargeID: chargeID,
	}
	var ids []int64
	var vs []*schema.Violation
	for range copies {
		u, v := s.pushLocked(types.Update{Message: m})
		ids = append(ids, u.UpdateID)
		vs = append(vs, v...)
	}
	s.mu.Unlock()
	s.report(vs)
	return chargeID, m.MessageID, ids
}

func (s *Server) answerPreCheckoutQuery(c *calls.Call) (any, *APIError) {
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
func (s *Server) StarTransactions() []types.StarTransaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]types.StarTransaction(nil), s.transactions...)
}

// Refunded reports whether the charge was refunded.
func (s *Server) Refunded(chargeID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.charges[chargeID]
	return ch != nil && ch.refunded
}

func (s *Server) starsMethod(method string, c *calls.Call) (any, *APIError) {
	s.mu.Lock()
	switch method {
	case "getMyStarBalance":
		defer s.mu.Unlock()
		return types.StarAmount{Amount: s.starBalance}, nil
	case "getStarTransactions":
		defer s.mu.Unlock()
		// Newest first, like Telegram's transaction history.
		offset, limit := int(c.Int("offset")), 100
		if c.Has("limit") {
			limit = int(c.Int("limit"))
		}
		out := []types.StarTransaction{}
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
	refund := types.StarTransaction{
		ID:       ch.id,
		Amount:   ch.amount,
		Date:     s.now().Unix(),
		Receiver: &types.TransactionPartner{Type: "user", TransactionType: "invoice_payment", User: &user, InvoicePayload: ch.payload},
	}
	if a := ch.affiliate; a != nil {
		// The affiliate's commission comes back to the bot.
		back := *a
		back.Amount, back.NanostarAmount = -a.Amount, -a.NanostarAmount
		refund.Receiver.Affiliate = &back
		s.starBalance += a.Amount
	}
	s.transactions = append(s.transactions, refund)
	m := s.userMessageLocked(ch.chatID)
	m.RefundedPayment = &types.RefundedPayment{Currency: ch.currency, TotalAmount: ch.amount, InvoicePayload: ch.payload, TelegramPaymentChargeID: ch.id}
	_, vs := s.pushLocked(types.Update{Message: m})
	s.mu.Unlock()
	s.report(vs)
	return true, nil
}

// chargeIDLocked is a new charge id: "stxTEST", this server's own six
// digits and a counter. Telegram never issues a charge id twice, so two
// fake servers (a test's restarted shop, a benchmark's runs over one
// journal directory) never do either.
func (s *Server) chargeIDLocked() string {
	if s.chargeRun < 0 {
		return fmt.Sprintf("stxTEST%012d", s.nextSeqLocked())
	}
	if s.chargeRun == 0 {
		s.chargeRun = 100000 + rand.Int64N(900000)
	}
	return fmt.Sprintf("stxTEST%06d%012d", s.chargeRun, s.nextSeqLocked())
}

// CountedChargeIDs makes the server's charge ids "stxTEST<n>", by its
// counter alone, for a test whose stored data names a charge (such ids
// meet those of another server: keep such a test to one shop).
func (s *Server) CountedChargeIDs() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chargeRun = -1
}
