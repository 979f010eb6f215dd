package fulfil

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"shopbot/state/redisstore"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/sched"

	"shopbot/bot/fulfil/orphans"
	"shopbot/bot/jobs"
	"shopbot/bot/notify"
	"shopbot/bot/upstreamorder"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/state"
)

// Config tunes the fulfilment worker. Zero fields take the defaults.
type Config struct {
	Tick  time.Duration // how often due jobs are claimed; default 500ms
	Lease time.Duration // how long a claimed job is ours (renewed while it runs, so a dead worker's job comes back after it); default 6s
	// An upstream order is read right after its create, then every
	// PollFirst until it is PollMin old (most orders finish within a
	// second or two, and the buyer waits for each read), then every third
	// of its age, from PollMin up to PollMax. Defaults: PollMin 2s,
	// PollFirst a quarter of PollMin, PollMax 60s. An order read to its
	// end in its first minute costs at most PollMin/PollFirst reads more
	// than polling from PollMin would (3 with the defaults).
	PollMin   time.Duration
	PollFirst time.Duration
	PollMax   time.Duration
	Grace     time.Duration // how long after an uncertain answer a create may still show up upstream before placing again; default 10s
	// AnsweredGrace replaces Grace after a create the server answered with
	// a 5xx (it had finished with the request); default 2s.
	AnsweredGrace time.Duration
	// CreateTimeout bounds an order's create: the POST is cut this long
	// after the latest moment it may leave (a Lease after its intent), so
	// a worker that takes the order over knows from the order alone when
	// the create is over (state.Order.AttemptDeadline). Default
	// reseller.DefaultTimeout, the client's own bound on one request.
	CreateTimeout time.Duration
	// Settle is how long a freshly unclaimed upstream order is left for
	// the replica that created it to put it back (after Redis lost its
	// record) before an order that may own it goes to review; default 30s.
	Settle time.Duration
	// CodeSettle is how old an order's claim on its upstream order must be
	// before its codes are handed over, when Redis may lose the last
	// writes in a crash (AOF everysec or off, a failover to a replica
	// that was behind). A claim younger than that may vanish, and the
	// upstream order with it would look unclaimed, its codes already in a
	// buyer's hands. Not applied when every synced write survives a crash
	// (redisstore.Durability.Exact). Default 3s: above the second AOF everysec
	// may lose, with room for the fsync itself running late.
	CodeSettle time.Duration
	// OrphanEvery is how often the upstream's order list is matched
	// against ours; default 1m. OrphanAfter is how long an upstream order
	// may stay unclaimed before admins hear of it; default 10m.
	OrphanEvery time.Duration
	OrphanAfter time.Duration
	// CanaryEvery is how often the canary is checked for a loss of writes
	// besides the checks the placements make themselves (recover.go);
	// default 1s.
	CanaryEvery time.Duration
	StuckAfter  time.Duration // admins are alerted once when an order is not done after this; default 30m
	// SlotRetryWait is the longest upstream Retry-After a placement waits
	// out inside a call (reseller.LimitRetryWait): a longer one ends the
	// call, so the kind's slot goes to the next order instead of being
	// held through the wait; default 2s.
	SlotRetryWait time.Duration
	// SlotWait is the backstop of an order waiting in line for its kind's
	// placement slot: the holder wakes it when it hands the slot over, so
	// this only bounds a wake lost to a crash; default 10s. Waiters do not
	// poll more often: hundreds of them polling every PollMin kept the
	// workers too busy to run the slot's holder.
	SlotWait time.Duration
	RetryMin time.Duration // first retry of a failed refund or an unsent create; default 5s
	RetryMax time.Duration // slowest such retry; default 10m
	Parallel int           // jobs handled at once; default 8
	// Failpoint, when set, is called between lifecycle steps (see the
	// Failpoint* constants); a non-nil error abandons the job right there,
	// as a crash would: its lease runs out and a worker takes it again.
	Failpoint func(step string, orderID int64) error
}

// Lifecycle steps passed to Config.Failpoint.
const (
	FailpointListing   = "listing"   // the loss mark read, before the upstream listing of a placement or reconcile
	FailpointIntent    = "intent"    // placing written, before the POST
	FailpointCreated   = "created"   // the upstream order exists, not yet stored
	FailpointPlaced    = "placed"    // the upstream number is stored
	FailpointCompleted = "completed" // delivered stored, before the buyer gets it
	FailpointRefunding = "refunding" // refunding stored, before the refund
	FailpointRefunded  = "refunded"  // the money went back, refunded not yet stored
	FailpointDelivered = "delivered" // the buyer got a delivered order, before Deps.OnDelivered
)

func (c *Config) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.Tick, 500*time.Millisecond)
	def(&c.Lease, 6*time.Second)
	def(&c.PollMin, 2*time.Second)
	def(&c.PollFirst, c.PollMin/4)
	def(&c.PollMax, time.Minute)
	def(&c.Grace, 10*time.Second)
	def(&c.Settle, 30*time.Second)
	def(&c.CodeSettle, 3*time.Second)
	def(&c.AnsweredGrace, 2*time.Second)
	def(&c.CreateTimeout, reseller.DefaultTimeout)
	def(&c.OrphanEvery, time.Minute)
	def(&c.CanaryEvery, time.Second)
	def(&c.OrphanAfter, 10*time.Minute)
	def(&c.StuckAfter, 30*time.Minute)
	def(&c.RetryMin, 5*time.Second)
	def(&c.SlotRetryWait, 2*time.Second)
	def(&c.SlotWait, 10*time.Second)
	def(&c.RetryMax, 10*time.Minute)
	if c.Parallel <= 0 {
		c.Parallel = 8
	}
}

// OrderJob is the schedule job name of order id ("order:<id>"), the
// contract between payments (which schedule it) and fulfilment.
func OrderJob(id int64) string { return "order:" + strconv.FormatInt(id, 10) }

// errCrash is how a failpoint stops a job.
var errCrash = errors.New("stopped at a failpoint")

// errAttemptMoved means another worker started a new attempt meanwhile.
var errAttemptMoved = errors.New("order attempt moved on")

// fulfiller drives paid orders to delivered or refunded.
type Fulfiller struct {
	up      *reseller.Client
	orders  *records.Orders
	sched   *sched.Schedule
	wallets *records.Wallets
	msg     Messenger
	alerts  notify.Alerter
	orphans *orphans.Scan
	chats   Chats
	durable Durable
	journal *state.Journal
	jc      struct {
		sync.Mutex
		at time.Time
		ok bool
	}
	done struct {
		sync.Mutex
		m map[string]int64 // charge -> journaled upstream number known back in the store
	}
	loss      lossMark // the last loss of writes on record (loss.go)
	noneNoted noted    // attempt ids whose "nothing created" is journaled
	// kick makes this process's worker claim due jobs now (set by Run).
	kick atomic.Pointer[func()]

	canary     *redisstore.Canary
	onLoss     func()
	onRefunded func(ctx context.Context, o *state.Order) error
	auditLog   *records.AuditLog
	log        *slog.Logger
	lang0      locales.Lang
	clock      func() time.Time
	cfg        Config

	onDelivered func(ctx context.Context, o *state.Order) error
}

// New returns the fulfilment worker over d's stores and services.
func New(d Deps, cfg Config) *Fulfiller {
	cfg.defaults()
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Journal == nil {
		d.Journal, _ = state.OpenJournal("", JournalKeep, d.Now) // in memory: cannot fail
	}
	return &Fulfiller{
		orphans: &orphans.Scan{Orders: d.Orders, Up: d.Upstream, Alerts: d.Alerts, Lang: d.Lang, Log: d.Log, Now: d.Now, After: cfg.OrphanAfter},
		up:      d.Upstream, orders: d.Orders, sched: d.Schedule, wallets: d.Wallets,
		msg: d.Messenger, alerts: d.Alerts, chats: d.Chats, durable: d.Durable,
		onLoss: d.OnLoss, onRefunded: d.OnRefunded, onDelivered: d.OnDelivered, journal: d.Journal, auditLog: d.Audit,
		canary: redisstore.NewCanary(d.Orders.Client(), d.Orders.Prefix()+"fulfil:"), log: d.Log, lang0: d.Lang, clock: d.Now, cfg: cfg,
	}
}

func (f *Fulfiller) now() time.Time { return f.clock() }

func (f *Fulfiller) fail(step string, id int64) error {
	if f.cfg.Failpoint == nil {
		return nil
	}
	if err := f.cfg.Failpoint(step, id); err != nil {
		return fmt.Errorf("order %d at %s: %w: %v", id, step, errCrash, err)
	}
	return nil
}

// Run claims due order jobs until ctx ends. It first makes sure every
// unfinished order has a job, so nothing paid waits for a lost schedule.
func (f *Fulfiller) Run(ctx context.Context) {
	f.noteJournal(ctx) // before any placement reads whether the journal is complete
	if err := f.resume(ctx); err != nil && ctx.Err() == nil {
		f.log.Error("resume unfinished orders", "err", err)
	}
	if err := f.learnWatermark(ctx); err != nil && ctx.Err() == nil {
		f.log.Warn("read the newest upstream order", "err", err)
	}
	if err := f.startOrphanScan(ctx); err != nil && ctx.Err() == nil {
		f.log.Error("start the orphan scan", "err", err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(1)
	go func() { defer wg.Done(); f.retention(ctx) }()
	wg.Add(1)
	go func() { defer wg.Done(); f.watchRollback(ctx) }()
	w := &jobs.Worker{
		What: "order", Sched: f.sched, Now: f.now, Log: f.log,
		Tick: f.cfg.Tick, Lease: f.cfg.Lease, Timeout: max(f.cfg.Lease, jobTimeout), Parallel: f.cfg.Parallel,
		Kinds: jobKinds, Step: f.runJob,
	}
	kick := w.Kick
	f.kick.Store(&kick)
	defer f.kick.Store(nil)
	w.Run(ctx)
}

// retentionEvery is how often finished orders past the retention period
// are shrunk to their summary (codes and requests dropped).
const retentionEvery = 6 * time.Hour

func (f *Fulfiller) retention(ctx context.Context) {
	t := time.NewTicker(retentionEvery)
	defer t.Stop()
	for {
		n, err := f.orders.ExpireDelivered(ctx, f.orders.Retention)
		switch {
		case err != nil && ctx.Err() == nil:
			f.log.Warn("shrink finished orders", "err", err)
		case n > 0:
			f.log.Info("shrank finished orders past retention", "orders", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// jobTimeout bounds one pass over an order (a POST, polls, messages).
const jobTimeout = 2 * time.Minute

// resume gives every unfinished order without a job one, due now.
func (f *Fulfiller) resume(ctx context.Context) error {
	ids, err := f.orders.Unfinished(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		_, ok, err := f.sched.Due(ctx, OrderJob(id))
		if err != nil {
			return err
		}
		if !ok {
			if err := f.sched.Put(ctx, OrderJob(id), f.now()); err != nil {
				return err
			}
			f.log.Info("resumed unfinished order", "order", id)
		}
	}
	return nil
}

// jobKinds are the kinds of the jobs the fulfilment worker runs: orders
// ("order:<id>") and the orphan scan (orphanJob).
var jobKinds = []string{sched.Kind(OrderJob(0)), sched.Kind(orphanJob)}

// runJob advances the order of an "order:<id>" job and says when to look
// at it again; a job stopped at a failpoint is left to its lease, and one
// this build does not understand (a name of another format, an order a
// newer build wrote) to a replica of a newer build.
func (f *Fulfiller) runJob(ctx context.Context, j sched.Job) (time.Time, bool) {
	if j.Name == orphanJob {
		return f.scanOrphans(ctx), false
	}
	idText, ok := strings.CutPrefix(j.Name, "order:")
	id, err := strconv.ParseInt(idText, 10, 64)
	if !ok || err != nil {
		f.log.Warn("job of a format this version does not know; left for a newer version", "job", j.Name)
		return jobs.LeaveForNewer(ctx)
	}
	next, err := f.advance(ctx, id)
	switch {
	case errors.Is(err, state.ErrRecordTooNew):
		f.log.Info("order written by a newer version; left for a replica of it", "order", id, "err", err)
		return jobs.LeaveForNewer(ctx)
	case errors.Is(err, errCrash):
		f.log.Warn("order job abandoned", "order", id, "err", err)
		return time.Time{}, true
	case errors.Is(err, state.ErrOrderNotFound):
		f.log.Error("order job without an order", "order", id)
		return time.Time{}, false
	case err != nil:
		f.log.Warn("order step failed; will retry", "order", id, "err", err)
		return f.now().Add(f.cfg.RetryMin), false
	}
	return next, false
}

// advance moves the order as far as it can go now and returns when to look
// at it again (zero: never, the order is finished or waits for an admin).
func (f *Fulfiller) advance(ctx context.Context, id int64) (time.Time, error) {
	for range 8 {
		o, err := f.orders.Get(ctx, id)
		if err != nil {
			return time.Time{}, err
		}
		if err := o.Readable(); err != nil {
			return time.Time{}, err
		}
		if !state.Terminal(o.Status) && o.Status != state.OrderNeedsReview {
			f.checkStuck(ctx, o)
		}
		var next time.Time
		var again bool
		switch o.Status {
		case state.OrderPaid:
			again, next, err = f.place(reseller.LimitRetryWait(ctx, f.cfg.SlotRetryWait), o)
		case state.OrderPlacing:
			again, next, err = f.placing(reseller.LimitRetryWait(ctx, f.cfg.SlotRetryWait), o)
		case state.OrderPlaced:
			again, next, err = f.track(ctx, o)
		case state.OrderRefunding:
			again, next, err = f.refund(ctx, o)
		case state.OrderDelivered, state.OrderRefunded, state.OrderNeedsReview:
			if at := f.settledAt(ctx, o); !at.IsZero() {
				return at, nil
			}
			return time.Time{}, f.finishNotices(ctx, o)
		default: // Readable checked the status
			return time.Time{}, fmt.Errorf("order %d: status %q not handled", id, o.Status)
		}
		if errors.Is(err, state.ErrBadTransition) || errors.Is(err, errAttemptMoved) {
			continue // someone else moved it: look again
		}
		if err != nil || !again {
			return next, err
		}
	}
	return f.now().Add(f.cfg.PollMin), nil
}

// ReviewAlert is the alert key raised when order id goes to needs_review;
// an admin's resolution clears it.
func ReviewAlert(id int64) string { return "order:" + strconv.FormatInt(id, 10) + ":review" }

// Buyer-facing reasons of a failed order.
const (
	reasonInvalid     = "order.reason_invalid"
	reasonUnavailable = "order.reason_unavailable"
	reasonFailed      = "order.reason_failed"
)

// track polls the upstream order and acts on its status.
func (f *Fulfiller) track(ctx context.Context, o *state.Order) (bool, time.Time, error) {
	up, err := f.up.Order(ctx, o.UpstreamNumber)
	if err != nil {
		f.log.Warn("poll upstream order", "order", o.ID, "upstream", o.UpstreamNumber, "err", err)
		return false, f.now().Add(f.pollDelay(o)), nil
	}
	switch {
	case up.Status.Is(reseller.OrderCompleted):
		return f.complete(ctx, o, up)
	case up.Status.Is(reseller.OrderFailed), up.Status.Is(reseller.OrderRefund):
		n, err := f.move(ctx, o, []string{state.OrderPlaced}, state.OrderPlaced, func(n *state.Order) error {
			n.UpstreamStatus = string(up.Status)
			return nil
		}, "upstream "+string(up.Status))
		if err != nil {
			return false, time.Time{}, err
		}
		return f.toRefunding(ctx, n, "upstream "+string(up.Status), reasonFailed)
	}
	if string(up.Status) != o.UpstreamStatus {
		n, err := f.move(ctx, o, []string{state.OrderPlaced}, state.OrderPlaced, func(n *state.Order) error {
			n.UpstreamStatus = string(up.Status)
			return nil
		}, "")
		if err != nil {
			return false, time.Time{}, err
		}
		o = n
	}
	if f.processingLate(o) {
		_ = f.notifyStatus(ctx, o, state.OrderPlaced, f.processingText(o, up))
	}
	return false, f.now().Add(f.pollDelay(o)), nil
}

// processingLate reports whether the buyer is told now that an order is
// being processed: when it is not done PollMin after its claim. The
// payment's own message says the order is being prepared, and most orders
// are done within a second or two; a notice before would only hold their
// codes behind it (Telegram takes about one message a second in a chat).
func (f *Fulfiller) processingLate(o *state.Order) bool {
	return o.NotifiedStatus != state.OrderPlaced && !o.ClaimedAt.IsZero() && f.now().Sub(o.ClaimedAt) >= f.cfg.PollMin
}

// pollDelay grows with the time since the order reached the upstream:
// PollFirst while that is under PollMin, then a third of it, from PollMin
// up to PollMax. The time counts from the later of the attempt's start and
// the claim (an order put back or adopted after a Redis loss may have no
// attempt start on record).
func (f *Fulfiller) pollDelay(o *state.Order) time.Duration {
	since := o.PlacingAt
	if o.ClaimedAt.After(since) {
		since = o.ClaimedAt
	}
	age := f.now().Sub(since)
	if age < f.cfg.PollMin {
		return min(f.cfg.PollFirst, f.cfg.PollMin)
	}
	return min(max(age/3, f.cfg.PollMin), f.cfg.PollMax)
}

// checkStuck alerts admins once when the order has been unfinished too
// long, whatever its state.
func (f *Fulfiller) checkStuck(ctx context.Context, o *state.Order) {
	age := f.now().Sub(o.CreatedAt)
	if age < f.cfg.StuckAfter || f.alerts == nil {
		return
	}
	text := locales.T(f.lang0, "alert.order_stuck", "id", o.ID, "number", o.UpstreamNumber,
		"status", o.UpstreamStatus, "minutes", int64(age/time.Minute))
	if o.UpstreamNumber == 0 {
		text = locales.T(f.lang0, "alert.order_stuck_state", "id", o.ID,
			"status", o.Status, "minutes", int64(age/time.Minute))
	}
	_, _ = f.alerts.Raise(ctx, stuckAlert(o.ID), text)
}

func stuckAlert(id int64) string { return "order:" + strconv.FormatInt(id, 10) + ":stuck" }

// complete stores the codes (placed -> delivered) and hands them over.
func (f *Fulfiller) complete(ctx context.Context, o *state.Order, up *reseller.Order) (bool, time.Time, error) {
	codes := up.DeliverableCodes()
	if len(codes) == 0 && (o.Line == "giftcards" || o.Line == "keys") {
		return f.review(ctx, o, fmt.Sprintf("upstream %d completed without codes", up.Number))
	}
	if !o.RefundSeen.IsZero() {
		// The buyer has the Stars back (a restore took the refund) and the
		// create went through: an admin decides what becomes of the goods.
		return f.review(ctx, o, fmt.Sprintf("upstream %d completed, but the charge is refunded at Telegram", up.Number))
	}
	if why := o.ChargeFault(up.ChargedUSD.Decimal); why != "" {
		// An impossible cost would feed /stats, the exports and a referral
		// reward: an admin looks first (state.Order.ChargeFault).
		return f.review(ctx, o, fmt.Sprintf("upstream %d completed, but its %s", up.Number, why))
	}
	n, err := f.move(ctx, o, []string{state.OrderPlaced}, state.OrderDelivered, func(n *state.Order) error {
		n.Codes, n.UpstreamStatus = codes, string(up.Status)
		if !up.ChargedUSD.IsZero() {
			n.ChargedUSD = up.ChargedUSD.Decimal
		}
		return nil
	}, fmt.Sprintf("upstream completed, %d codes", len(codes)))
	if err != nil {
		return false, time.Time{}, err
	}
	f.clearAlert(ctx, stuckAlert(o.ID))
	if err := f.fail(FailpointCompleted, o.ID); err != nil {
		return false, time.Time{}, err
	}
	if at := f.settledAt(ctx, n); !at.IsZero() {
		return false, at, nil
	}
	return false, time.Time{}, f.finishNotices(ctx, n)
}

// settledAt returns when a delivered order's codes may be handed over, or
// zero when they may go now: at once when the order has none or Redis
// keeps every synced write through a crash, else once its claim on the
// upstream order is CodeSettle old. The job comes back then and reads the
// order again: if a crash took the claim, the order is no longer
// delivered and its codes never left.
func (f *Fulfiller) settledAt(ctx context.Context, o *state.Order) time.Time {
	if o.Status != state.OrderDelivered || !o.DeliveredAt.IsZero() || len(o.Codes) == 0 || o.ClaimedAt.IsZero() {
		return time.Time{}
	}
	at := o.ClaimedAt.Add(f.cfg.CodeSettle)
	if !f.now().Before(at) || f.durable != nil && f.durable.Exact(ctx, f.orders.KeyOf(o.ID)) {
		return time.Time{}
	}
	return at
}

// finishNotices hands a finished order's result to the buyer when that has
// not happened yet; an error makes the job try again later. A buyer who
// blocked the bot gets a delivery after /start and sees a refund in /orders.
func (f *Fulfiller) finishNotices(ctx context.Context, o *state.Order) error {
	var err error
	switch {
	case o.Status == state.OrderDelivered:
		handed := o // as the hooks see it: DeliveredAt says whether the buyer got it
		if o.DeliveredAt.IsZero() {
			err = f.deliver(ctx, o)
			if errors.Is(err, flows.ErrBlocked) {
				f.log.Info("buyer blocked the bot; delivery waits for /start", "order", o.ID)
			}
			if err == nil {
				c := *o
				c.DeliveredAt, c.NotifiedStatus = f.now().UTC(), state.OrderDelivered
				handed = &c
			}
		}
		if f.onDelivered != nil && (err == nil || errors.Is(err, flows.ErrBlocked)) {
			if err := f.fail(FailpointDelivered, o.ID); err != nil {
				return err
			}
			if err := f.onDelivered(ctx, handed); err != nil {
				return err
			}
		}
	case o.Status == state.OrderRefunded:
		if f.onRefunded != nil {
			if err := f.onRefunded(ctx, o); err != nil {
				return err
			}
		}
		err = f.notifyStatus(ctx, o, state.OrderRefunded, f.refundedText(o))
	}
	if errors.Is(err, flows.ErrBlocked) {
		return nil
	}
	return err
}

// deliver sends the codes or the delivered notice and records it.
func (f *Fulfiller) deliver(ctx context.Context, o *state.Order) error {
	if err := f.sendResult(ctx, o); err != nil {
		return err
	}
	_, err := f.move(ctx, o, []string{state.OrderDelivered}, state.OrderDelivered, func(n *state.Order) error {
		n.DeliveredAt, n.NotifiedStatus = f.now().UTC(), state.OrderDelivered
		return nil
	}, "delivered to the buyer")
	if err == nil {
		f.log.Info("order delivered", "order", o.ID, "codes", len(o.Codes))
	}
	return err
}

// refund returns the money the way the buyer paid, idempotently, then
// marks the order refunded and tells the buyer.
func (f *Fulfiller) refund(ctx context.Context, o *state.Order) (bool, time.Time, error) {
	if err := f.fail(FailpointRefunding, o.ID); err != nil {
		return false, time.Time{}, err
	}
	var ref string
	switch o.PayMethod {
	case state.PayStars:
		ref = o.ChargeID
		if err := f.msg.RefundStars(ctx, o.UserID, o.ChargeID); err != nil {
			f.log.Warn("refund Stars", "order", o.ID, "err", err)
			_, _ = f.alerts.Raise(ctx, "order:"+strconv.FormatInt(o.ID, 10)+":refund",
				locales.T(f.lang0, "alert.order_refund", "id", o.ID, "err", locales.Escape(err.Error())))
			return false, f.now().Add(f.refundDelay(o)), nil
		}
	case state.PayWallet:
		ref = "refund:order:" + strconv.FormatInt(o.ID, 10)
		if _, _, err := f.wallets.Credit(ctx, o.UserID, o.ShopUSD, ref, "refund of order "+strconv.FormatInt(o.ID, 10), "refund"); err != nil {
			f.log.Warn("refund to wallet", "order", o.ID, "err", err)
			return false, f.now().Add(f.refundDelay(o)), nil
		}
	default:
		return f.review(ctx, o, "unknown pay method "+o.PayMethod)
	}
	if err := f.fail(FailpointRefunded, o.ID); err != nil {
		return false, time.Time{}, err
	}
	n, err := f.move(ctx, o, []string{state.OrderRefunding}, state.OrderRefunded, func(n *state.Order) error {
		n.RefundRef = ref
		return nil
	}, "refunded "+o.PayMethod)
	if err != nil {
		return false, time.Time{}, err
	}
	f.clearAlert(ctx, "order:"+strconv.FormatInt(o.ID, 10)+":refund")
	f.clearAlert(ctx, stuckAlert(o.ID))
	f.log.Info("order refunded", "order", n.ID, "method", n.PayMethod)
	f.alertRefunded(ctx, n)
	return true, time.Time{}, nil
}

// alertRefunded tells admins, once per order, that an order failed and its
// money went back to the buyer, and why.
func (f *Fulfiller) alertRefunded(ctx context.Context, o *state.Order) {
	lang := f.lang0
	paid := locales.Money(lang, o.ShopUSD)
	if o.PayMethod == state.PayStars {
		paid = locales.Stars(lang, o.Stars)
	}
	why := o.Reason
	if why != "" {
		why = locales.T(lang, why)
	}
	if why == "" || why == o.Reason {
		why = "—"
	}
	_, _ = f.alerts.Raise(ctx, "order:"+strconv.FormatInt(o.ID, 10)+":refunded",
		locales.T(lang, "alert.order_refunded", "id", o.ID, "item", locales.Escape(upstreamorder.ItemName(lang, o)), "paid", paid,
			"upstream", upstreamRef(lang, o), "why", why))
}

// upstreamRef names an order's upstream order for admins, or says it was
// never placed (no "Upstream #0").
func upstreamRef(lang locales.Lang, o *state.Order) string {
	if o.UpstreamNumber <= 0 {
		return locales.T(lang, "alert.never_placed")
	}
	return locales.T(lang, "alert.upstream_number", "number", o.UpstreamNumber)
}

// refundedText tells the buyer where the money went.
func (f *Fulfiller) refundedText(o *state.Order) string {
	lang := f.Lang(o)
	text := locales.T(lang, "order.refunded_wallet", "id", o.ID, "amount", locales.Money(lang, o.ShopUSD))
	if o.PayMethod == state.PayStars {
		text = locales.T(lang, "order.refunded_stars", "id", o.ID, "stars", locales.Stars(lang, o.Stars))
	}
	if why := RefundReason(lang, o); why != "" {
		text += "\n" + locales.T(lang, "order.refund_reason", "reason", why)
	}
	return text
}

// RefundReason is why a refunding or refunded order failed, for the buyer,
// or "" when the order records no reason a buyer can read.
func RefundReason(lang locales.Lang, o *state.Order) string {
	if (o.Status != state.OrderRefunding && o.Status != state.OrderRefunded) || !strings.HasPrefix(o.Reason, "order.reason_") {
		return ""
	}
	return locales.T(lang, o.Reason)
}

// refundDelay backs off with the time spent refunding.
func (f *Fulfiller) refundDelay(o *state.Order) time.Duration {
	since := o.UpdatedAt
	for _, h := range slices.Backward(o.History) {
		if h.To == state.OrderRefunding && h.From != state.OrderRefunding {
			since = h.At
			break
		}
	}
	return min(max(f.now().Sub(since)/2, f.cfg.RetryMin), f.cfg.RetryMax)
}

// notifyStatus tells the buyer about a status change once and records it.
func (f *Fulfiller) notifyStatus(ctx context.Context, o *state.Order, status, text string) error {
	return f.notifyStatusRows(ctx, o, status, text, nil)
}

// notifyStatusRows is notifyStatus with buttons (global ones) on the message.
func (f *Fulfiller) notifyStatusRows(ctx context.Context, o *state.Order, status, text string, rows [][]flows.Button) error {
	if o.NotifiedStatus == status || text == "" {
		return nil
	}
	if _, err := f.msg.Send(ctx, o.ChatID, text, rows); err != nil {
		if !errors.Is(err, flows.ErrBlocked) {
			f.log.Warn("tell buyer about order", "order", o.ID, "status", status, "err", err)
		}
		return err
	}
	_, err := f.move(ctx, o, []string{o.Status}, o.Status, func(n *state.Order) error {
		n.NotifiedStatus = status
		return nil
	}, "")
	if err != nil && !errors.Is(err, state.ErrBadTransition) {
		return err
	}
	return nil
}

func (f *Fulfiller) Lang(o *state.Order) locales.Lang {
	if l, ok := locales.Parse(o.Lang); ok {
		return l
	}
	return f.lang0
}

// processingText is the "being processed" notice; manual services show
// their deadline.
func (f *Fulfiller) processingText(o *state.Order, up *reseller.Order) string {
	lang := f.Lang(o)
	text := locales.T(lang, "order.processing", "id", o.ID, "item", locales.Escape(upstreamorder.ItemName(lang, o)))
	if up != nil && up.DeadlineAt != nil {
		text += "\n" + locales.T(lang, "order.deadline", "deadline", locales.DateTime(lang, *up.DeadlineAt))
	}
	return text
}

// sync makes the order's last write durable when the Redis allows it.
func (f *Fulfiller) sync(ctx context.Context, id int64) error {
	if f.durable == nil {
		return nil
	}
	return f.durable.SyncWritten(ctx, f.orders.KeyOf(id))
}

// move is Orders.Transition of the order the worker read, o: it is refused
// as a bad transition (someone else moved it: look again) when the order
// stored under o.ID is no longer o. A Redis that lost o (a rollback, a
// failover to a replica that was behind) gives its number to the next
// payment, and a worker still holding o must not write o's request, attempt
// or upstream order into that other buyer's order (that buyer would get
// the codes of a purchase lost in the rollback).
func (f *Fulfiller) move(ctx context.Context, o *state.Order, from []string, to string, mutate func(*state.Order) error, note string) (*state.Order, error) {
	return f.orders.Transition(ctx, o.ID, from, to, func(n *state.Order) error {
		if n.ChargeID != o.ChargeID {
			return &state.TransitionError{ID: o.ID, Status: n.Status, To: to, Err: state.ErrBadTransition}
		}
		if mutate != nil {
			return mutate(n)
		}
		return nil
	}, note)
}

// noted is a set of ids an action was taken for once in this process. It
// is cleared when it grows past notedMax, so a long-running replica's set
// stays bounded; an action taken again after that is harmless (a repeated
// log line or journal record).
type noted struct {
	mu sync.Mutex
	m  map[string]struct{}
}

const notedMax = 100_000

// first records id and reports whether it is new.
func (n *noted) first(id string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.m[id]; ok {
		return false
	}
	if n.m == nil || len(n.m) >= notedMax {
		n.m = map[string]struct{}{}
	}
	n.m[id] = struct{}{}
	return true
}
