package records

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"shopbot/state"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/shopspring/decimal"
)

// topupDecisionKeep is how long a charge's decision (credited or refunded)
// is kept: as long as the refund marks of checkout.
const topupDecisionKeep = 400 * 24 * time.Hour

// The records of a buyer's top-ups and the decisions about their charges
// live in the buyer's wallet slot ("{wallet:<user>}"), so that one script
// checks a charge against its record, decides, credits and marks the
// record paid at once:
//
//	topup:<id>          HASH v, chat, cents, stars, lang, created, expires (ms), paid
//	topup-charge:<id>   STRING "refund:<reason>": the charge is to be refunded
//
// A top-up id is "<user>-<random>", so its record is found from the id.

func (w *Wallets) topupKey(userID int64, id string) string {
	return w.p + "{wallet:" + itoa(userID) + "}:topup:" + id
}

func (w *Wallets) decisionKey(userID int64, chargeID string) string {
	return w.p + "{wallet:" + itoa(userID) + "}:topup-charge:" + chargeID
}

// topupIndex lists credited top-ups shop-wide for the admin reports (a
// ZSET scored by the credit's time in ms, member
// "<charge>|<user>|<cents>|<stars>").
func (w *Wallets) topupIndex() string { return w.p + "wallet-topups" }

// CreateTopup stores a new top-up for t.UserID (t.ID is set): usd must be
// a wallet amount (positive, cents) and stars positive.
func (w *Wallets) CreateTopup(ctx context.Context, t *state.WalletTopup) error {
	c, err := cents(t.USD)
	if err != nil {
		return fmt.Errorf("create wallet top-up: %w", err)
	}
	if t.Stars <= 0 || t.UserID <= 0 {
		return fmt.Errorf("create wallet top-up: bad stars %d or user %d", t.Stars, t.UserID)
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	t.ID = itoa(t.UserID) + "-" + hex.EncodeToString(b[:])
	key := w.topupKey(t.UserID, t.ID)
	// Unpaid, the record lives as long as its invoice plus
	// state.TopupUnpaidKeep; the credit keeps it state.TopupKeep.
	ttl := t.Expires.Sub(t.Created) + state.TopupUnpaidKeep
	_, err = w.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, key, "v", state.TopupVersion, "chat", t.ChatID, "cents", c, "stars", t.Stars, "lang", t.Lang,
			"created", t.Created.UnixMilli(), "expires", t.Expires.UnixMilli())
		p.PExpire(ctx, key, max(ttl, state.TopupUnpaidKeep))
		return nil
	})
	if err != nil {
		return fmt.Errorf("save wallet top-up: %w", err)
	}
	return nil
}

// Topup loads top-up id (ErrNoTopup when there is none).
func (w *Wallets) Topup(ctx context.Context, id string) (*state.WalletTopup, error) {
	user, ok := state.TopupUser(id)
	if !ok {
		return nil, state.ErrNoTopup
	}
	m, err := w.rdb.HGetAll(ctx, w.topupKey(user, id)).Result()
	if err != nil {
		return nil, fmt.Errorf("load wallet top-up %s: %w", id, err)
	}
	if len(m) == 0 || m["cents"] == "" {
		return nil, state.ErrNoTopup
	}
	ms := func(k string) time.Time { n, _ := strconv.ParseInt(m[k], 10, 64); return time.UnixMilli(n) }
	chat, _ := strconv.ParseInt(m["chat"], 10, 64)
	stars, _ := strconv.ParseInt(m["stars"], 10, 64)
	v, _ := strconv.Atoi(m["v"])
	return &state.WalletTopup{
		V: v, ID: id, UserID: user, ChatID: chat, USD: fromCents(m["cents"]), Stars: stars, Lang: m["lang"],
		Created: ms("created"), Expires: ms("expires"), PaidBy: m["paid"],
	}, nil
}

// topupSettleScript credits a top-up charge or decides its refund, once.
// KEYS: bal, led, refs, the top-up record, the charge's decision, seq. ARGV:
// ref, cents (as read from the record, "0" when none), entry JSON, charge
// id, stars paid, paid at ms, grace ms, max balance cents (0: none),
// wallet on ("1"/"0"), decision TTL ms, paid record TTL ms, the newest
// record version this build reads. Returns {code, balance, decision}:
// 0 credited now, 1 credited before, 2 to be refunded (decision
// "refund:<reason>", made now or before), 3 nothing decided: the record is
// of a newer version (a newer build's, which settles it). A charge
// credited is never decided for a refund and a charge decided for a refund
// is never credited, however often and in whatever order this runs.
var topupSettleScript = redis.NewScript(`
local prev = redis.call('HGET', KEYS[3], ARGV[1])
if prev then return {1, redis.call('GET', KEYS[1]) or '0', ''} end
local d = redis.call('GET', KEYS[5])
if d then return {2, redis.call('GET', KEYS[1]) or '0', d} end
if tonumber(redis.call('HGET', KEYS[4], 'v') or '0') > tonumber(ARGV[12]) then return {3, '0', ''} end
local cur = redis.call('GET', KEYS[1]) or '0'
local why = ''
if ARGV[9] ~= '1' then
  why = 'wallet_off'
elseif redis.call('EXISTS', KEYS[4]) == 0 then
  why = 'gone'
else
  local r = redis.call('HMGET', KEYS[4], 'cents', 'stars', 'expires', 'paid')
  if r[1] ~= ARGV[2] or r[2] ~= ARGV[5] then
    why = 'amount'
  elseif tonumber(ARGV[6]) > tonumber(r[3]) + tonumber(ARGV[7]) then
    why = 'expired'
  elseif r[4] and r[4] ~= ARGV[4] then
    why = 'twice'
  elseif tonumber(ARGV[8]) > 0 and tonumber(cur) + tonumber(ARGV[2]) > tonumber(ARGV[8]) then
    why = 'limit'
  end
end
if why ~= '' then
  redis.call('SET', KEYS[5], 'refund:' .. why, 'PX', ARGV[10])
  return {2, cur, 'refund:' .. why}
end
redis.call('INCRBY', KEYS[1], ARGV[2])
local bal = redis.call('GET', KEYS[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
redis.call('LPUSH', KEYS[2], bal .. '\n' .. ARGV[3])
redis.call('HSET', KEYS[4], 'paid', ARGV[4])
redis.call('PEXPIRE', KEYS[4], ARGV[11])
return {0, bal, '', redis.call('INCR', KEYS[6])}`)

// topupDecideScript decides the refund of a charge that names no top-up
// of its payer, unless it was credited. KEYS: refs, the decision. ARGV:
// ref, reason, decision TTL ms. Returns {code, decision} as above (1: it
// was credited).
var topupDecideScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) then return {1, ''} end
local d = redis.call('GET', KEYS[2])
if d then return {2, d} end
redis.call('SET', KEYS[2], 'refund:' .. ARGV[2], 'PX', ARGV[3])
return {2, 'refund:' .. ARGV[2]}`)

// SettleTopup credits the payer's wallet for a top-up charge, exactly
// once (ledger ref TopupRef), or decides that it is to be refunded:
// when the wallet is off, the top-up is unknown or another buyer's, the
// amount is not its price, it was paid after it expired (plus the grace),
// another charge credited it, or the balance would pass the maximum. The
// first decision about a charge is final: a credited charge is never
// decided for a refund, a charge decided for a refund is never credited.
// Both the credit and the refund decision are made durable (Durable)
// before SettleTopup returns them, so a caller refunds only a decision a
// crash cannot take back. A top-up a newer build recorded, in a version
// this one does not read, is neither credited nor decided:
// state.ErrRecordTooNew, and its charge waits for a replica of that build.
func (w *Wallets) SettleTopup(ctx context.Context, c state.TopupCharge, rules state.TopupRules) (state.TopupOutcome, error) {
	var out state.TopupOutcome
	if c.ChargeID == "" || c.Payer <= 0 {
		return out, errors.New("settle wallet top-up: no charge or payer")
	}
	ref := state.TopupRef(c.ChargeID)
	keys := w.keys(c.Payer)
	dec := w.decisionKey(c.Payer, c.ChargeID)
	user, ok := state.TopupUser(c.TopupID)
	if !ok || user != c.Payer {
		// Not a top-up of the payer's: nothing of it lives in their slot.
		res, err := topupDecideScript.Run(ctx, w.rdb, []string{keys[2], dec}, ref, state.TopupRefundGone, topupDecisionKeep.Milliseconds()).Slice()
		if err != nil {
			return out, fmt.Errorf("settle wallet top-up charge %s: %w", c.ChargeID, err)
		}
		if code, _ := res[0].(int64); code == 1 {
			out.Credited = true
			out.Balance, err = w.Balance(ctx, c.Payer)
			return out, err
		}
		out.Refund = strings.TrimPrefix(str(res[1]), "refund:")
		return out, w.sync(ctx, dec, c.ChargeID)
	}
	t, err := w.Topup(ctx, c.TopupID)
	switch {
	case errors.Is(err, state.ErrNoTopup):
		t = nil
	case err != nil:
		return out, err
	}
	out.Topup = t
	if t != nil {
		if err := state.TooNew("wallet top-up "+t.ID, t.V, state.TopupVersion); err != nil {
			return out, err
		}
	}
	cents := int64(0)
	if t != nil {
		cents = t.USD.Shift(2).IntPart()
	}
	doc, err := json.Marshal(&state.Entry{
		Ref: ref, Amount: decimal.New(cents, -2), At: w.Now().UTC(),
		Note: "wallet top-up: " + strconv.FormatInt(c.Stars, 10) + " Telegram Stars",
	})
	if err != nil {
		return out, err
	}
	maxCents := int64(0)
	if rules.MaxBalance.IsPositive() {
		maxCents = rules.MaxBalance.Shift(2).IntPart()
	}
	on := "0"
	if rules.WalletOn {
		on = "1"
	}
	rec := w.topupKey(c.Payer, c.TopupID)
	res, err := topupSettleScript.Run(ctx, w.rdb, []string{keys[0], keys[1], keys[2], rec, dec, w.seqKey(c.Payer)},
		ref, cents, doc, c.ChargeID, c.Stars, c.PaidAt.UnixMilli(), rules.Grace.Milliseconds(), maxCents, on,
		topupDecisionKeep.Milliseconds(), state.TopupKeep.Milliseconds(), state.TopupVersion).Slice()
	if err != nil {
		return out, fmt.Errorf("settle wallet top-up charge %s: %w", c.ChargeID, err)
	}
	out.Balance = fromCents(res[1])
	switch code, _ := res[0].(int64); code {
	case 3:
		return state.TopupOutcome{Topup: t}, fmt.Errorf("wallet top-up %s: %w", c.TopupID, state.ErrRecordTooNew)
	case 0, 1:
		out.Credited, out.Fresh = true, code == 0
		if code == 0 {
			var e state.Entry
			_ = json.Unmarshal(doc, &e)
			seq, _ := res[3].(int64)
			w.archive(c.Payer, e, out.Balance, seq)
		}
		// Also for a credit made before: its own wait may have failed.
		if err := w.sync(ctx, keys[1], c.ChargeID); err != nil {
			return out, err
		}
		return out, w.indexTopup(ctx, c, cents)
	}
	out.Refund = strings.TrimPrefix(str(res[2]), "refund:")
	return out, w.sync(ctx, dec, c.ChargeID)
}

// sync makes a top-up write durable when the store has a Durability.
func (w *Wallets) sync(ctx context.Context, key, charge string) error {
	if w.Durable == nil {
		return nil
	}
	if err := w.Durable.SyncWritten(ctx, key); err != nil {
		return fmt.Errorf("wallet top-up charge %s: %w", charge, err)
	}
	return nil
}

// indexTopup lists a credited top-up for the reports (idempotent: the
// same member again changes nothing but its time) and drops entries older
// than the decisions are kept.
func (w *Wallets) indexTopup(ctx context.Context, c state.TopupCharge, cents int64) error {
	member := c.ChargeID + "|" + itoa(c.Payer) + "|" + itoa(cents) + "|" + itoa(c.Stars)
	_, err := w.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZAddNX(ctx, w.topupIndex(), redis.Z{Score: float64(c.PaidAt.UnixMilli()), Member: member})
		p.ZRemRangeByScore(ctx, w.topupIndex(), "-inf", strconv.FormatInt(w.Now().Add(-topupDecisionKeep).UnixMilli(), 10))
		return nil
	})
	if err != nil {
		return fmt.Errorf("index wallet top-up charge %s: %w", c.ChargeID, err)
	}
	return nil
}

// TopupRefundDecided returns the refund reason decided for a charge of
// payer, or "" when none was.
func (w *Wallets) TopupRefundDecided(ctx context.Context, payer int64, chargeID string) (string, error) {
	v, err := w.rdb.Get(ctx, w.decisionKey(payer, chargeID)).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the decision of charge %s: %w", chargeID, err)
	}
	return strings.TrimPrefix(v, "refund:"), nil
}

// PaidTopups returns the credited top-ups paid at from or later, oldest
// first.
func (w *Wallets) PaidTopups(ctx context.Context, from time.Time) ([]state.PaidTopup, error) {
	zs, err := w.rdb.ZRangeByScoreWithScores(ctx, w.topupIndex(), &redis.ZRangeBy{
		Min: strconv.FormatInt(from.UnixMilli(), 10), Max: "+inf",
	}).Result()
	if err != nil {
		return nil, fmt.Errorf("read wallet top-ups: %w", err)
	}
	out := make([]state.PaidTopup, 0, len(zs))
	for _, z := range zs {
		f := strings.Split(str(z.Member), "|")
		if len(f) != 4 {
			continue
		}
		user, _ := strconv.ParseInt(f[1], 10, 64)
		stars, _ := strconv.ParseInt(f[3], 10, 64)
		out = append(out, state.PaidTopup{ChargeID: f[0], UserID: user, USD: fromCents(f[2]), Stars: stars, PaidAt: time.UnixMilli(int64(z.Score))})
	}
	return out, nil
}
