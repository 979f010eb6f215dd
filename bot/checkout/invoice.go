package checkout

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state"
)

// quoteKey holds a quote's payment bookkeeping (a HASH): the buyer's
// language ("lang") and the invoice state: "inv" is "sending" from the
// moment a Pay claims the right to send until sendInvoice returns, then the
// invoice's message id; "inv_at" is when the claim was made (ms, bot clock).
func (p *Checkout) quoteKey(id string) string { return p.p + "q:" + id }

// invoiceClaimScript: KEYS[1] the quote key. ARGV: now ms, the sending
// bound ms, lang, key TTL ms. Returns {1, message id} when the invoice was
// sent, {2, ""} while another Pay is sending it (within the bound), and
// {0, ""} when the caller now holds the right to send: no invoice, or a
// "sending" mark older than the bound (its sender died or gave up).
var invoiceClaimScript = redis.NewScript(`
local inv = redis.call('HGET', KEYS[1], 'inv')
if inv and inv ~= 'sending' then return {1, inv} end
if inv == 'sending' then
  local at = tonumber(redis.call('HGET', KEYS[1], 'inv_at') or '0') or 0
  if tonumber(ARGV[1]) - at < tonumber(ARGV[2]) then return {2, ''} end
end
redis.call('HSET', KEYS[1], 'inv', 'sending', 'inv_at', ARGV[1], 'lang', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {0, ''}`)

// invoiceSentScript records the message id of a sent invoice over a
// "sending" mark (ours, or one that took ours over). KEYS[1] the quote
// key, ARGV[1] the message id.
var invoiceSentScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'inv') == 'sending' then
  redis.call('HSET', KEYS[1], 'inv', ARGV[1])
  return 1
end
return 0`)

// invoiceReleaseScript drops our own "sending" mark when nothing was sent.
// KEYS[1] the quote key, ARGV[1] the mark's inv_at.
var invoiceReleaseScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'inv') == 'sending' and redis.call('HGET', KEYS[1], 'inv_at') == ARGV[1] then
  return redis.call('HDEL', KEYS[1], 'inv', 'inv_at')
end
return 0`)

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
	key := p.quoteKey(q.ID)
	// Every invoice is recorded after the store's epoch, so the sweep can
	// tell a charge for it from one older than the store.
	if _, err := p.storeEpoch(ctx); err != nil {
		return nil, err
	}
	at := p.now().UnixMilli()
	ttl := time.Until(q.Expires) + state.QuoteKeep
	res, err := invoiceClaimScript.Run(ctx, p.rdb, []string{key}, at, p.opts.InvoiceSending.Milliseconds(), string(env.Lang), ttl.Milliseconds()).Slice()
	if err != nil {
		return nil, fmt.Errorf("mark invoice of quote %s: %w", q.ID, err)
	}
	switch code, _ := res[0].(int64); code {
	case 1:
		return &flows.Reply{Answer: env.T("pay.invoice_again"), Alert: true, NoScreen: true}, nil
	case 2:
		return &flows.Reply{Answer: env.T("pay.invoice_sending"), Alert: true, NoScreen: true}, nil
	}
	release := func() {
		if err := invoiceReleaseScript.Run(context.WithoutCancel(ctx), p.rdb, []string{key}, at).Err(); err != nil {
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
	title := locales.Clip(q.ItemName, 32)
	if title == "" {
		title = locales.Clip(env.T("line."+q.Line), 32)
	}
	desc := env.T("pay.invoice_description", "item", q.ItemName, "n", q.Quantity)
	if who := recipient(q); who != "" {
		// Two invoices of one item for two players (or accounts) must not
		// look alike: a buyer pays the one they mean.
		desc = env.T("pay.invoice_description_for", "item", q.ItemName, "n", q.Quantity, "who", who)
	}
	desc = locales.Clip(desc, 255)
	msgID, err := p.tg.SendInvoice(ctx, Invoice{
		ChatID: q.ChatID, Title: title, Description: desc, Payload: payloadPrefix + q.ID,
		Label: env.T("pay.invoice_label"), Stars: q.Stars,
	})
	if err != nil {
		release() // nothing was sent: a new tap may try again
		return nil, fmt.Errorf("send invoice for quote %s: %w", q.ID, err)
	}
	if err := invoiceSentScript.Run(context.WithoutCancel(ctx), p.rdb, []string{key}, msgID).Err(); err != nil {
		// The mark goes stale and the next Pay sends a fresh invoice; both pay.
		p.log.Warn("record invoice message", "quote", q.ID, "err", err)
	}
	p.log.Info("invoice sent", "chat", q.ChatID, "quote", q.ID, "stars", q.Stars)
	return &flows.Reply{Answer: env.T("pay.invoice_sent"), NoScreen: true}, nil
}

// invoiceRecorded reports whether this store recorded an invoice for the
// quote (sent, or being sent when its sender died).
func (p *Checkout) invoiceRecorded(ctx context.Context, quoteID string) (bool, error) {
	if quoteID == "" {
		return false, nil
	}
	ok, err := p.rdb.HExists(ctx, p.quoteKey(quoteID), "inv").Result()
	if err != nil {
		return false, fmt.Errorf("read invoice of quote %s: %w", quoteID, err)
	}
	return ok, nil
}

// langOf returns the language the buyer used for quote id, or the one
// their Telegram client suggests.
func (p *Checkout) langOf(ctx context.Context, quoteID string, code string) locales.Lang {
	if quoteID != "" {
		if v, err := p.rdb.HGet(ctx, p.quoteKey(quoteID), "lang").Result(); err == nil {
			if l, ok := locales.Parse(v); ok {
				return l
			}
		}
	}
	return p.engine.LangFor(&flows.Session{}, flows.User{LanguageCode: code})
}

// recipient is who or what an order is for, as the buyer entered it (a
// player id, a username, a store login: the values of the quote's fields,
// in the order of their names; links left out), for the invoice text.
func recipient(q *state.Quote) string {
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
