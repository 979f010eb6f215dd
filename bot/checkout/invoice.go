package checkout

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state"
	"shopbot/state/redisstore/work"
)

// invoice sends one Stars invoice per quote. A second Pay while it is
// being sent is told so; once it was sent, a second Pay is pointed to the
// invoice in the chat (it still pays). A "sending" mark with no message id
// after InvoiceSending (a replica killed around sendInvoice) is taken for
// lost: the next Pay sends a fresh invoice. Should both arrive, paying the
// second makes no second order (its charge is refunded, see settle).
func (p *Checkout) invoice(ctx context.Context, env *flows.Env, q *state.Quote) (*flows.Reply, error) {
	if q.Stars <= 0 {
		return nil, fmt.Errorf("quote %s has no price in Stars", q.ID)
	}
	// Every invoice is recorded after the store's epoch, so the sweep can
	// tell a charge for it from one older than the store.
	if _, err := p.storeEpoch(ctx); err != nil {
		return nil, err
	}
	at := p.now()
	ttl := time.Until(q.Expires) + state.QuoteKeep
	claim, _, err := p.pay.ClaimInvoice(ctx, q.ID, at, p.opts.InvoiceSending, string(env.Lang), ttl)
	if err != nil {
		return nil, err
	}
	switch claim {
	case work.InvoiceSent:
		return &flows.Reply{Answer: env.T("pay.invoice_again"), Alert: true, NoScreen: true}, nil
	case work.InvoiceSending:
		return &flows.Reply{Answer: env.T("pay.invoice_sending"), Alert: true, NoScreen: true}, nil
	}
	release := func() {
		if _, err := p.pay.ReleaseInvoice(context.WithoutCancel(ctx), q.ID, at); err != nil {
			p.log.Warn("release invoice mark", "quote", q.ID, "err", err)
		}
	}
	ok, wait, err := p.limiter.Allow(ctx, "inv:u:"+strconv.FormatInt(env.User.ID, 10))
	if err != nil || !ok {
		release()
	}
	if err != nil {
		return nil, err
	}
	if !ok {
		n := max(int64((wait+time.Second-1)/time.Second), 1)
		return &flows.Reply{Answer: env.N("err.rate_limited", n), Alert: true, NoScreen: true}, nil
	}
	msgID, err := p.tg.SendInvoice(ctx, invoiceOf(env, q))
	if err != nil {
		release() // nothing was sent: a new tap may try again
		return nil, fmt.Errorf("send invoice for quote %s: %w", q.ID, err)
	}
	if _, err := p.pay.InvoiceSentAs(context.WithoutCancel(ctx), q.ID, msgID); err != nil {
		// The mark goes stale and the next Pay sends a fresh invoice; both pay.
		p.log.Warn("record invoice message", "quote", q.ID, "err", err)
	}
	p.log.Info("invoice sent", "chat", q.ChatID, "quote", q.ID, "stars", q.Stars)
	return &flows.Reply{Answer: env.T("pay.invoice_sent"), NoScreen: true}, nil
}

// invoiceOf is the Stars invoice of quote q, in the chat or as a link:
// its title, description, price and payload ("q:<quote id>").
func invoiceOf(env *flows.Env, q *state.Quote) Invoice {
	title := locales.Clip(q.ItemName, 32)
	if title == "" {
		title = locales.Clip(env.T("line."+q.Line), 32)
	}
	item := q.ItemName
	if q.Quantity > 1 && (q.Line == "giftcards" || q.Line == "keys") {
		// Cards and keys are sold by the unit; elsewhere the quantity is
		// already in the item's name (500 Stars, 60 UC).
		item = env.T("pay.invoice_units", "item", q.ItemName, "n", q.Quantity)
	}
	desc := env.T("pay.invoice_description", "item", item)
	if who := recipient(q); who != "" {
		// Two invoices of one item for two players (or accounts) must not
		// look alike: a buyer pays the one they mean.
		desc = env.T("pay.invoice_description_for", "item", item, "who", who)
	}
	return Invoice{
		ChatID: q.ChatID, Title: title, Description: locales.Clip(desc, 255), Payload: payloadPrefix + q.ID,
		Label: env.T("pay.invoice_label"), Stars: q.Stars,
	}
}

// InvoiceLink answers a Mini App's Pay in Stars for quote quoteID of
// env's buyer with the invoice link the page opens
// (Telegram.WebApp.openInvoice). The link's invoice is the chat's (invoiceOf:
// the same payload "q:<quote id>"), so its payment settles exactly as one
// from the chat, from the successful_payment update or the sweep, never
// from what the page says. The quote keeps one link: asked again, the same
// link comes back. refusal (plain text in env's language) says why there
// is no link: Stars are off, the quote is unknown, another buyer's,
// expired, cancelled or paid, its invoice was sent in the chat or is being
// made, or the buyer asked for too many invoices.
func (p *Checkout) InvoiceLink(ctx context.Context, env *flows.Env, quoteID string) (link, refusal string, err error) {
	if !p.opts.Stars {
		return "", env.T("pay.link_stars_off"), nil
	}
	q, err := p.Quotes.Load(ctx, quoteID)
	if err != nil && !errors.Is(err, state.ErrNoQuote) {
		return "", "", err
	}
	if err != nil || q.UserID != env.User.ID || q.Expired(env.Now) || q.Cancelled {
		return "", env.T("pay.expired"), nil
	}
	if q.Stars <= 0 {
		return "", "", fmt.Errorf("quote %s has no price in Stars", q.ID)
	}
	if r, err := p.alreadyPaid(ctx, env, q); r != nil || err != nil {
		if err != nil {
			return "", "", err
		}
		return "", r.Answer, nil
	}
	if _, err := p.storeEpoch(ctx); err != nil {
		return "", "", err
	}
	at := p.now()
	ttl := time.Until(q.Expires) + state.QuoteKeep
	claim, sent, err := p.pay.ClaimInvoice(ctx, q.ID, at, p.opts.InvoiceSending, string(env.Lang), ttl)
	if err != nil {
		return "", "", err
	}
	switch claim {
	case work.InvoiceSent:
		if l, ok := strings.CutPrefix(sent, work.InvoiceLinkMark); ok {
			return l, "", nil
		}
		return "", env.T("pay.link_in_chat"), nil
	case work.InvoiceSending:
		return "", env.T("pay.link_sending"), nil
	}
	release := func() {
		if _, err := p.pay.ReleaseInvoice(context.WithoutCancel(ctx), q.ID, at); err != nil {
			p.log.Warn("release invoice mark", "quote", q.ID, "err", err)
		}
	}
	ok, wait, err := p.limiter.Allow(ctx, "inv:u:"+strconv.FormatInt(env.User.ID, 10))
	if err != nil || !ok {
		release()
	}
	if err != nil {
		return "", "", err
	}
	if !ok {
		return "", env.N("err.rate_limited", max(int64((wait+time.Second-1)/time.Second), 1)), nil
	}
	link, err = p.tg.CreateInvoiceLink(ctx, invoiceOf(env, q))
	if err != nil {
		release() // nothing was made: a new tap may try again
		return "", "", fmt.Errorf("create invoice link for quote %s: %w", q.ID, err)
	}
	if _, err := p.pay.InvoiceLinked(context.WithoutCancel(ctx), q.ID, link); err != nil {
		// The mark goes stale and the next Pay makes a fresh link; both pay.
		p.log.Warn("record invoice link", "quote", q.ID, "err", err)
	}
	p.log.Info("invoice link made", "user", q.UserID, "quote", q.ID, "stars", q.Stars)
	return link, "", nil
}

// invoiceRecorded reports whether this store recorded an invoice for the
// quote (sent, or being sent when its sender died).
func (p *Checkout) invoiceRecorded(ctx context.Context, quoteID string) (bool, error) {
	if quoteID == "" {
		return false, nil
	}
	return p.pay.InvoiceRecorded(ctx, quoteID)
}

// langOf returns the language the buyer used for quote id, or the one
// their Telegram client suggests.
func (p *Checkout) langOf(ctx context.Context, quoteID string, code string) locales.Lang {
	if quoteID != "" {
		if v, err := p.pay.QuoteLang(ctx, quoteID); err == nil {
			if l, ok := locales.Parse(v); ok {
				return l
			}
		}
	}
	return p.engine.LangFor(&flows.Session{}, flows.User{LanguageCode: code})
}

// recipient is who or what an order is for, as the buyer's summary showed
// it (a @username, a store login, "Player ID: 5123"), or else the values of
// the quote's fields in the order of their names; links left out.
func recipient(q *state.Quote) string {
	if who := strings.TrimSpace(q.For); who != "" && !strings.Contains(who, "://") {
		return locales.Clip(who, 120)
	}
	keys := slices.Sorted(maps.Keys(q.Fields))
	var vals []string
	for _, k := range keys {
		v := strings.TrimSpace(q.Fields[k])
		if v == "" || strings.Contains(v, "://") {
			continue
		}
		vals = append(vals, v)
	}
	return locales.Clip(strings.Join(vals, ", "), 120)
}
