package work

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"shopbot/state/redisstore"
)

// Payments keeps the payment bookkeeping of the checkout under
// "<prefix>pay:": per quote, the buyer's language and the invoice's state
// (invoice marks, "q:<quote>"); the marks that a charge was refunded
// ("refunded:<charge>"), that a top-up's buyer heard of its credit
// ("topup-told:<charge>") and that a lost wallet payment's buyer was told
// ("wallet-lost:<ref>"); the lock of the payment sweep ("sweep-lock"); and
// the wallet payments between the debit and the order ("wallet-pending").
type Payments struct {
	rdb    redis.UniversalClient
	prefix string // the shop's key prefix
	p      string // prefix + "pay:"
	// Lineage, when set, names the stores a store created by StoreEpoch
	// continues (redisstore.StoreLineage): the one the process served,
	// when Redis came back empty under it.
	Lineage func() []int64
}

// NewPayments returns the payment bookkeeping under prefix.
func NewPayments(rdb redis.UniversalClient, prefix string) *Payments {
	return &Payments{rdb: rdb, prefix: prefix, p: prefix + "pay:"}
}

// StoreEpoch returns when the store was created, recording now when this
// is the first time (see redisstore.StoreEpoch).
func (s *Payments) StoreEpoch(ctx context.Context, now time.Time) (time.Time, error) {
	var prev []int64
	if s.Lineage != nil {
		prev = s.Lineage()
	}
	l, err := redisstore.StoreLineage(ctx, s.rdb, s.prefix, now, prev)
	return l.Epoch, err
}

// InvoiceLimiter returns the limiter of limit invoices per window, under
// the payments' keys.
func (s *Payments) InvoiceLimiter(limit int, window time.Duration) *redisstore.Limiter {
	return redisstore.NewLimiter(s.rdb, s.p, limit, window)
}

// quoteKey holds a quote's payment bookkeeping (a HASH): the buyer's
// language ("lang") and the invoice state: "inv" is "sending" from the
// moment a Pay claims the right to send until sendInvoice returns, then the
// invoice's message id; "inv_at" is when the claim was made (ms, bot clock).
func (s *Payments) quoteKey(id string) string { return s.p + "q:" + id }

// InvoiceClaim is what ClaimInvoice found.
type InvoiceClaim int

// The outcomes of ClaimInvoice.
const (
	// InvoiceClaimed: the caller now holds the right to send the invoice.
	InvoiceClaimed InvoiceClaim = iota
	// InvoiceSent: the invoice was sent (its message id is returned).
	InvoiceSent
	// InvoiceSending: another Pay is sending it, within the bound.
	InvoiceSending
)

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

// ClaimInvoice claims, at at, the right to send quoteID's invoice, and
// records lang as the buyer's language; the quote's bookkeeping is kept
// for keep. A "sending" mark younger than sending (by at) is another
// Pay's, on its way (InvoiceSending); an older one is taken for lost and
// claimed anew. A sent invoice is reported with its message id
// (InvoiceSent). The claim is the mark's time: ReleaseInvoice takes it.
func (s *Payments) ClaimInvoice(ctx context.Context, quoteID string, at time.Time, sending time.Duration, lang string, keep time.Duration) (InvoiceClaim, string, error) {
	res, err := invoiceClaimScript.Run(ctx, s.rdb, []string{s.quoteKey(quoteID)},
		at.UnixMilli(), sending.Milliseconds(), lang, keep.Milliseconds()).Slice()
	if err != nil {
		return 0, "", fmt.Errorf("mark invoice of quote %s: %w", quoteID, err)
	}
	if len(res) != 2 {
		return 0, "", fmt.Errorf("mark invoice of quote %s: unexpected reply %v", quoteID, res)
	}
	code, _ := res[0].(int64)
	msg, _ := res[1].(string)
	switch code {
	case 1:
		return InvoiceSent, msg, nil
	case 2:
		return InvoiceSending, "", nil
	}
	return InvoiceClaimed, "", nil
}

// InvoiceSentAs records the message id of quoteID's sent invoice over a
// "sending" mark (the caller's, or one that took it over), and reports
// whether there was one.
func (s *Payments) InvoiceSentAs(ctx context.Context, quoteID string, msgID int) (bool, error) {
	n, err := invoiceSentScript.Run(ctx, s.rdb, []string{s.quoteKey(quoteID)}, msgID).Int()
	if err != nil {
		return false, fmt.Errorf("record invoice message of quote %s: %w", quoteID, err)
	}
	return n == 1, nil
}

// InvoiceLinked records a Mini App's invoice link as quoteID's invoice
// (stored as "link:<link>" where a chat's invoice has its message id) over
// a "sending" mark, and reports whether there was one. ClaimInvoice then
// reports the invoice sent, with that value.
func (s *Payments) InvoiceLinked(ctx context.Context, quoteID, link string) (bool, error) {
	n, err := invoiceSentScript.Run(ctx, s.rdb, []string{s.quoteKey(quoteID)}, InvoiceLinkMark+link).Int()
	if err != nil {
		return false, fmt.Errorf("record invoice link of quote %s: %w", quoteID, err)
	}
	return n == 1, nil
}

// InvoiceLinkMark starts the invoice value of a quote paid through an
// invoice link (InvoiceLinked) rather than an invoice in the chat.
const InvoiceLinkMark = "link:"

// ReleaseInvoice drops the "sending" mark of quoteID claimed at at, when
// nothing was sent; a mark claimed since by another Pay, or an invoice
// sent, stays. It reports whether it dropped one.
func (s *Payments) ReleaseInvoice(ctx context.Context, quoteID string, at time.Time) (bool, error) {
	n, err := invoiceReleaseScript.Run(ctx, s.rdb, []string{s.quoteKey(quoteID)}, at.UnixMilli()).Int()
	if err != nil {
		return false, fmt.Errorf("release invoice mark of quote %s: %w", quoteID, err)
	}
	return n > 0, nil
}

// InvoiceRecorded reports whether this store recorded an invoice for
// quoteID (sent, or being sent when its sender died).
func (s *Payments) InvoiceRecorded(ctx context.Context, quoteID string) (bool, error) {
	ok, err := s.rdb.HExists(ctx, s.quoteKey(quoteID), "inv").Result()
	if err != nil {
		return false, fmt.Errorf("read invoice of quote %s: %w", quoteID, err)
	}
	return ok, nil
}

// QuoteLang returns the language the buyer used for quoteID ("" when none
// was recorded).
func (s *Payments) QuoteLang(ctx context.Context, quoteID string) (string, error) {
	v, err := s.rdb.HGet(ctx, s.quoteKey(quoteID), "lang").Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read language of quote %s: %w", quoteID, err)
	}
	return v, nil
}

// SetQuoteLang records lang as the language the buyer used for quoteID,
// whose bookkeeping is then kept for keep.
func (s *Payments) SetQuoteLang(ctx context.Context, quoteID, lang string, keep time.Duration) error {
	key := s.quoteKey(quoteID)
	if err := s.rdb.HSet(ctx, key, "lang", lang).Err(); err != nil {
		return fmt.Errorf("record language of quote %s: %w", quoteID, err)
	}
	if err := s.rdb.PExpire(ctx, key, keep).Err(); err != nil {
		return fmt.Errorf("record language of quote %s: %w", quoteID, err)
	}
	return nil
}

// once sets key to at (Unix s) for keep unless it is set, and reports
// whether it set it.
func (s *Payments) once(ctx context.Context, key string, at time.Time, keep time.Duration) (bool, error) {
	return s.rdb.SetNX(ctx, key, at.Unix(), keep).Result()
}

func (s *Payments) exists(ctx context.Context, key string) (bool, error) {
	n, err := s.rdb.Exists(ctx, key).Result()
	return n > 0, err
}

// MarkRefunded records that chargeID was refunded at at, for keep, and
// reports whether it is the first to (the buyer is told once).
func (s *Payments) MarkRefunded(ctx context.Context, chargeID string, at time.Time, keep time.Duration) (bool, error) {
	first, err := s.once(ctx, s.p+"refunded:"+chargeID, at, keep)
	if err != nil {
		return false, fmt.Errorf("mark charge %s refunded: %w", chargeID, err)
	}
	return first, nil
}

// Refunded reports whether chargeID is marked refunded.
func (s *Payments) Refunded(ctx context.Context, chargeID string) (bool, error) {
	done, err := s.exists(ctx, s.p+"refunded:"+chargeID)
	if err != nil {
		return false, fmt.Errorf("read refund mark of charge %s: %w", chargeID, err)
	}
	return done, nil
}

// MarkTopupTold records, for keep, that the buyer of top-up charge
// chargeID heard of its credit, and reports whether it is the first to.
func (s *Payments) MarkTopupTold(ctx context.Context, chargeID string, at time.Time, keep time.Duration) (bool, error) {
	first, err := s.once(ctx, s.p+"topup-told:"+chargeID, at, keep)
	if err != nil {
		return false, fmt.Errorf("mark top-up charge %s told: %w", chargeID, err)
	}
	return first, nil
}

// TopupTold reports whether the buyer of top-up charge chargeID heard of
// its credit.
func (s *Payments) TopupTold(ctx context.Context, chargeID string) (bool, error) {
	told, err := s.exists(ctx, s.p+"topup-told:"+chargeID)
	if err != nil {
		return false, fmt.Errorf("read top-up mark of charge %s: %w", chargeID, err)
	}
	return told, nil
}

// MarkWalletLost records, for keep, that the buyer of the lost wallet
// payment ref was told it cannot be made again, and reports whether it is
// the first to.
func (s *Payments) MarkWalletLost(ctx context.Context, ref string, at time.Time, keep time.Duration) (bool, error) {
	first, err := s.once(ctx, s.p+"wallet-lost:"+ref, at, keep)
	if err != nil {
		return false, fmt.Errorf("mark lost wallet payment %s told: %w", ref, err)
	}
	return first, nil
}

// SweepLock is the held lock of the payment sweep: only its holder renews
// or releases it.
type SweepLock struct {
	s     *Payments
	token string
}

// sweepUnlockScript deletes the lock only for its holder: KEYS[1] the lock,
// ARGV[1] the holder's token.
var sweepUnlockScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)

// sweepExtendScript renews the lock only for its holder: KEYS[1] the lock,
// ARGV[1] the token, ARGV[2] the TTL in ms. Returns 0 when it is not held.
var sweepExtendScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`)

func (s *Payments) sweepLock() string { return s.p + "sweep-lock" }

func (s *Payments) sweepDue() string { return s.p + "sweep-due" }

// SweepDueAt records that a payment sweep must run at or after at: a
// charge that must be looked at again soon is not left to the one process
// that noted it, which may die. Each such time is kept (to the second)
// until a sweep that started at or after it finished (SweepDone).
func (s *Payments) SweepDueAt(ctx context.Context, at time.Time) error {
	sec := (at.UnixMilli() + 999) / 1000 * 1000 // up to the second: requests of one sweep share a member
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZAdd(ctx, s.sweepDue(), redis.Z{Score: float64(sec), Member: strconv.FormatInt(sec, 10)})
		p.Expire(ctx, s.sweepDue(), 24*time.Hour)
		return nil
	})
	if err != nil {
		return fmt.Errorf("note a payment sweep due: %w", err)
	}
	return nil
}

// SweepDue returns the earliest time a sweep is due at (ok false: none is).
func (s *Payments) SweepDue(ctx context.Context) (at time.Time, ok bool, err error) {
	zs, err := s.rdb.ZRangeWithScores(ctx, s.sweepDue(), 0, 0).Result()
	if err != nil {
		return time.Time{}, false, fmt.Errorf("read the payment sweep due: %w", err)
	}
	if len(zs) == 0 {
		return time.Time{}, false, nil
	}
	return time.UnixMilli(int64(zs[0].Score)), true, nil
}

// SweepDone records that a sweep that started at started finished: the
// dues at or before then are met; those asked for later (by this sweep
// too) stay.
func (s *Payments) SweepDone(ctx context.Context, started time.Time) error {
	if err := s.rdb.ZRemRangeByScore(ctx, s.sweepDue(), "-inf", strconv.FormatInt(started.UnixMilli(), 10)).Err(); err != nil {
		return fmt.Errorf("clear the payment sweep due: %w", err)
	}
	return nil
}

// LockSweep takes the lock of the payment sweep for ttl, or returns nil
// when another process holds it.
func (s *Payments) LockSweep(ctx context.Context, ttl time.Duration) (*SweepLock, error) {
	token := newToken() + newToken()
	ok, err := s.rdb.SetNX(ctx, s.sweepLock(), token, ttl).Result()
	if err != nil {
		return nil, fmt.Errorf("take the payment sweep lock: %w", err)
	}
	if !ok {
		return nil, nil
	}
	return &SweepLock{s: s, token: token}, nil
}

// Extend renews the lock for ttl and reports whether it was still held
// (it ran out and another process may have taken it).
func (l *SweepLock) Extend(ctx context.Context, ttl time.Duration) (bool, error) {
	n, err := sweepExtendScript.Run(ctx, l.s.rdb, []string{l.s.sweepLock()}, l.token, ttl.Milliseconds()).Int()
	if err != nil {
		return false, fmt.Errorf("renew the payment sweep lock: %w", err)
	}
	return n == 1, nil
}

// Release lets the lock go, unless it ran out and another process holds
// it now; it reports whether it was still held.
func (l *SweepLock) Release(ctx context.Context) (bool, error) {
	n, err := sweepUnlockScript.Run(ctx, l.s.rdb, []string{l.s.sweepLock()}, l.token).Int()
	if err != nil {
		return false, fmt.Errorf("release the payment sweep lock: %w", err)
	}
	return n == 1, nil
}

// WalletPending is a wallet payment between the debit and the order.
type WalletPending struct {
	UserID  int64
	QuoteID string
	At      time.Time // when the payment began (before the debit)
	member  string    // as listed (DropWalletPending drops exactly it)
}

func (w WalletPending) key() string {
	if w.member != "" {
		return w.member
	}
	return itoa(w.UserID) + ":" + w.QuoteID
}

// walletPending lists wallet payments between the debit and the order
// (member "<user>:<quote>", score ms), so the sweep finishes any that a
// crash interrupted.
func (s *Payments) walletPending() string { return s.p + "wallet-pending" }

// AddWalletPending lists the wallet payment of user for quoteID, begun at
// at.
func (s *Payments) AddWalletPending(ctx context.Context, user int64, quoteID string, at time.Time) error {
	w := WalletPending{UserID: user, QuoteID: quoteID}
	if err := s.rdb.ZAdd(ctx, s.walletPending(), redis.Z{Score: float64(at.UnixMilli()), Member: w.key()}).Err(); err != nil {
		return fmt.Errorf("mark wallet payment: %w", err)
	}
	return nil
}

// DropWalletPending takes w off the list (finished, or given back).
func (s *Payments) DropWalletPending(ctx context.Context, w WalletPending) error {
	return s.rdb.ZRem(ctx, s.walletPending(), w.key()).Err()
}

// WalletPendingUntil returns up to n of the wallet payments begun at or
// before until, oldest first.
func (s *Payments) WalletPendingUntil(ctx context.Context, until time.Time, n int) ([]WalletPending, error) {
	max := strconv.FormatInt(until.UnixMilli(), 10)
	members, err := s.rdb.ZRangeByScoreWithScores(ctx, s.walletPending(), &redis.ZRangeBy{Min: "-inf", Max: max, Count: int64(n)}).Result()
	if err != nil {
		return nil, fmt.Errorf("read pending wallet payments: %w", err)
	}
	out := make([]WalletPending, 0, len(members))
	for _, z := range members {
		m, _ := z.Member.(string)
		us, qid, _ := strings.Cut(m, ":")
		user, _ := strconv.ParseInt(us, 10, 64)
		out = append(out, WalletPending{UserID: user, QuoteID: qid, At: time.UnixMilli(int64(z.Score)), member: m})
	}
	return out, nil
}
