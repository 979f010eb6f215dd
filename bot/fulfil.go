package bot

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/shopspring/decimal"

	"shopbot/flows"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/state"
)

// FulfilConfig tunes the fulfilment worker. Zero fields take the defaults.
type FulfilConfig struct {
	Tick       time.Duration // how often due jobs are claimed; default 500ms
	Lease      time.Duration // how long a claimed job is ours; default 2m
	PollMin    time.Duration // first tracking poll; default 2s
	PollMax    time.Duration // slowest tracking poll; default 60s
	Grace      time.Duration // how long an ambiguous create may take to show up upstream; default 30s
	Skew       time.Duration // clock difference tolerated when matching upstream orders; default 2m
	StuckAfter time.Duration // admins are alerted once when an order is not done after this; default 30m
	RetryMin   time.Duration // first retry of a failed refund or an unsent create; default 5s
	RetryMax   time.Duration // slowest such retry; default 10m
	Parallel   int           // jobs handled at once; default 8
	// Failpoint, when set, is called between lifecycle steps (see the
	// Failpoint* constants); a non-nil error abandons the job right there,
	// as a crash would: its lease runs out and a worker takes it again.
	Failpoint func(step string, orderID int64) error
}

// Lifecycle steps passed to FulfilConfig.Failpoint.
const (
	FailpointIntent    = "intent"    // placing written, before the POST
	FailpointCreated   = "created"   // the upstream order exists, not yet stored
	FailpointPlaced    = "placed"    // the upstream number is stored
	FailpointCompleted = "completed" // delivered stored, before the buyer gets it
	FailpointRefunding = "refunding" // refunding stored, before the refund
	FailpointRefunded  = "refunded"  // the money went back, refunded not yet stored
)

func (c *FulfilConfig) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.Tick, 500*time.Millisecond)
	def(&c.Lease, 2*time.Minute)
	def(&c.PollMin, 2*time.Second)
	def(&c.PollMax, time.Minute)
	def(&c.Grace, 30*time.Second)
	def(&c.Skew, 2*time.Minute)
	def(&c.StuckAfter, 30*time.Minute)
	def(&c.RetryMin, 5*time.Second)
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
type fulfiller struct {
	b       *Bot
	up      *reseller.Client
	orders  *state.Orders
	sched   *state.Schedule
	wallets *state.Wallets
	cfg     FulfilConfig
}

func newFulfiller(b *Bot) *fulfiller {
	cfg := b.opts.Fulfil
	cfg.defaults()
	orders := state.NewOrders(b.rdb, b.opts.Prefix)
	orders.Now = b.opts.Now
	return &fulfiller{
		b: b, up: b.opts.Reseller, orders: orders, sched: state.NewSchedule(b.rdb, b.opts.Prefix),
		wallets: state.NewWallets(b.rdb, b.opts.Prefix), cfg: cfg,
	}
}

func (f *fulfiller) now() time.Time { return f.b.opts.Now() }

func (f *fulfiller) fail(step string, id int64) error {
	if f.cfg.Failpoint == nil {
		return nil
	}
	if err := f.cfg.Failpoint(step, id); err != nil {
		return fmt.Errorf("order %d at %s: %w: %v", id, step, errCrash, err)
	}
	return nil
}

// run claims due order jobs until ctx ends. It first makes sure every
// unfinished order has a job, so nothing paid waits for a lost schedule.
func (f *fulfiller) run(ctx context.Context) {
	if err := f.resume(ctx); err != nil && ctx.Err() == nil {
		f.b.log.Error("resume unfinished orders", "err", err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(1)
	go func() { defer wg.Done(); f.retention(ctx) }()
	w := &jobWorker{
		what: "order", sched: f.sched, now: f.now, log: f.b.log,
		tick: f.cfg.Tick, lease: f.cfg.Lease, timeout: max(f.cfg.Lease, jobTimeout), parallel: f.cfg.Parallel,
		step: f.runJob,
	}
	w.run(ctx)
}

// retentionEvery is how often finished orders past the retention period
// are shrunk to their summary (codes and requests dropped).
const retentionEvery = 6 * time.Hour

func (f *fulfiller) retention(ctx context.Context) {
	t := time.NewTicker(retentionEvery)
	defer t.Stop()
	for {
		n, err := f.orders.ExpireDelivered(ctx, f.orders.Retention)
		switch {
		case err != nil && ctx.Err() == nil:
			f.b.log.Warn("shrink finished orders", "err", err)
		case n > 0:
			f.b.log.Info("shrank finished orders past retention", "orders", n)
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
func (f *fulfiller) resume(ctx context.Context) error {
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
			f.b.log.Info("resumed unfinished order", "order", id)
		}
	}
	return nil
}

// runJob advances the order of an "order:<id>" job and says when to look
// at it again; other jobs, and a job stopped at a failpoint, are left to
// their lease.
func (f *fulfiller) runJob(ctx context.Context, j state.Job) (time.Time, bool) {
	idText, ok := strings.CutPrefix(j.Name, "order:")
	id, err := strconv.ParseInt(idText, 10, 64)
	if !ok || err != nil {
		return time.Time{}, true // another part's job; its lease runs out for it
	}
	next, err := f.advance(ctx, id)
	switch {
	case errors.Is(err, errCrash):
		f.b.log.Warn("order job abandoned", "order", id, "err", err)
		return time.Time{}, true
	case errors.Is(err, state.ErrOrderNotFound):
		f.b.log.Error("order job without an order", "order", id)
		return time.Time{}, false
	case err != nil:
		f.b.log.Warn("order step failed; will retry", "order", id, "err", err)
		return f.now().Add(f.cfg.RetryMin), false
	}
	return next, false
}

// advance moves the order as far as it can go now and returns when to look
// at it again (zero: never, the order is finished or waits for an admin).
func (f *fulfiller) advance(ctx context.Context, id int64) (time.Time, error) {
	for range 8 {
		o, err := f.orders.Get(ctx, id)
		if err != nil {
			return time.Time{}, err
		}
		var next time.Time
		var again bool
		switch o.Status {
		case state.OrderPaid:
			again, next, err = f.place(ctx, o)
		case state.OrderPlacing:
			again, next, err = f.placing(ctx, o)
		case state.OrderPlaced:
			again, next, err = f.track(ctx, o)
		case state.OrderRefunding:
			again, next, err = f.refund(ctx, o)
		case state.OrderDelivered, state.OrderRefunded, state.OrderNeedsReview:
			return time.Time{}, f.finishNotices(ctx, o)
		default:
			return time.Time{}, fmt.Errorf("order %d: unknown status %q", id, o.Status)
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

// upstreamRequest is the exact create request, stored on the order before
// the POST: its type, its wire parameters and the buyer fields.
type upstreamRequest struct {
	Type   reseller.OrderType `json:"type"`
	Params map[string]string  `json:"params"`
	Fields map[string]string  `json:"fields,omitempty"`
}

// lineTypes maps the shop's product lines to upstream order types.
var lineTypes = map[string]reseller.OrderType{
	"topup": reseller.OrderTypeStoreTopup, "stars": reseller.OrderTypeMessengerStars,
	"premium": reseller.OrderTypeMessengerPremium, "services": reseller.OrderTypeManualService,
	"gifts": reseller.OrderTypeStoreGift, "giftcards": reseller.OrderTypeGiftCard,
	"keys": reseller.OrderTypeGameKey, "games": reseller.OrderTypeGameTopup,
}

// quoteOf decodes the quote an order was bought from.
func quoteOf(o *state.Order) (*state.Quote, error) {
	var q state.Quote
	if err := json.Unmarshal(o.Item, &q); err != nil {
		return nil, fmt.Errorf("order %d: decode quote: %w", o.ID, err)
	}
	if q.Line == "" {
		q.Line = o.Line
	}
	return &q, nil
}

// buildRequest turns a quote into the upstream request. The quote's fields
// per line: topup Fields store_login (or login), currency, amount; stars
// Fields username and Quantity; premium Fields username and Item (months);
// services Category (service) and Item (offer) with Fields; gifts Category
// (app id), Item (sub id), Fields region and invite_url; giftcards and keys
// Category and Item with Quantity; games Category and Item (offer) with
// Fields.
func buildRequest(q *state.Quote) (*upstreamRequest, error) {
	t, ok := lineTypes[q.Line]
	if !ok {
		return nil, fmt.Errorf("unknown product line %q", q.Line)
	}
	r := &upstreamRequest{Type: t, Params: map[string]string{}}
	qty := strconv.Itoa(q.Quantity)
	field := func(names ...string) string {
		for _, n := range names {
			if v := q.Fields[n]; v != "" {
				return v
			}
		}
		return ""
	}
	switch t {
	case reseller.OrderTypeStoreTopup:
		cur := field("currency")
		if cur == "" {
			cur = "USD"
		}
		r.Params["store_login"], r.Params["currency"], r.Params["amount"] = field("store_login", "login"), cur, field("amount")
	case reseller.OrderTypeMessengerStars:
		r.Params["messenger_username"], r.Params["quantity"] = field("username", "messenger_username"), qty
	case reseller.OrderTypeMessengerPremium:
		months := q.Item
		if _, err := strconv.Atoi(months); err != nil {
			months = field("months")
		}
		r.Params["messenger_username"], r.Params["months"] = field("username", "messenger_username"), months
	case reseller.OrderTypeManualService:
		r.Params["service_id"], r.Params["product_id"] = q.Category, q.Item
		r.Fields = maps.Clone(q.Fields)
	case reseller.OrderTypeStoreGift:
		r.Params["app_id"], r.Params["sub_id"] = q.Category, q.Item
		r.Params["region"], r.Params["invite_url"] = field("region"), field("invite_url")
	case reseller.OrderTypeGiftCard:
		r.Params["category_id"], r.Params["card_id"], r.Params["quantity"] = q.Category, q.Item, qty
	case reseller.OrderTypeGameKey:
		r.Params["game_id"], r.Params["key_id"], r.Params["quantity"] = q.Category, q.Item, qty
	case reseller.OrderTypeGameTopup:
		r.Params["category_id"], r.Params["offer_id"] = q.Category, q.Item
		r.Fields = maps.Clone(q.Fields)
	}
	return r, nil
}

// norm makes a request or response value comparable.
func norm(key, v string) string {
	v = strings.TrimSpace(v)
	switch key {
	case "messenger_username":
		return strings.ToLower(strings.TrimPrefix(v, "@"))
	case "amount":
		if d, err := decimal.NewFromString(v); err == nil {
			return d.String()
		}
	case "currency", "region":
		return strings.ToUpper(v)
	}
	return v
}

// signature is the request's identity for reconciliation: a hash of the
// type, the buyer fields, the item and the quantity (no buyer value is
// readable from it).
func (r *upstreamRequest) signature() string {
	var b strings.Builder
	b.WriteString(string(r.Type))
	for _, k := range slices.Sorted(maps.Keys(r.Params)) {
		fmt.Fprintf(&b, "\x00%s=%s", k, norm(k, r.Params[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(r.Fields)) {
		fmt.Fprintf(&b, "\x00f.%s=%s", k, strings.TrimSpace(r.Fields[k]))
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:16])
}

// responseKey names a request parameter in the upstream order object.
func responseKey(t reseller.OrderType, k string) string {
	if t == reseller.OrderTypeMessengerStars && k == "quantity" {
		return "stars"
	}
	return k
}

// matches reports whether an upstream order is what r would have created:
// same type and every parameter the order object shows equal (objects that
// leave a parameter out are compared on the rest).
func (r *upstreamRequest) matches(u *reseller.Order) bool {
	if !u.Type.Is(r.Type) {
		return false
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(u.Raw, &m); err != nil {
		return false
	}
	for k, want := range r.Params {
		raw, ok := m[responseKey(r.Type, k)]
		if !ok || string(raw) == "null" {
			continue
		}
		if norm(k, scalar(raw)) != norm(k, want) {
			return false
		}
	}
	if raw, ok := m["fields"]; ok && len(r.Fields) > 0 && string(raw) != "null" {
		var got map[string]string
		if json.Unmarshal(raw, &got) == nil {
			for k, v := range r.Fields {
				if strings.TrimSpace(got[k]) != strings.TrimSpace(v) {
					return false
				}
			}
		}
	}
	return true
}

func scalar(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(raw))
}

// create POSTs the request to its endpoint.
func (f *fulfiller) create(ctx context.Context, r *upstreamRequest) (*reseller.Order, error) {
	p, c := r.Params, f.up
	num := func(k string) int { n, _ := strconv.Atoi(p[k]); return n }
	num64 := func(k string) int64 { n, _ := strconv.ParseInt(p[k], 10, 64); return n }
	switch r.Type {
	case reseller.OrderTypeStoreTopup:
		amount, err := decimal.NewFromString(p["amount"])
		if err != nil {
			return nil, &reseller.ValidationError{Field: "amount", Reason: "not a decimal"}
		}
		return c.CreateStoreTopupOrder(ctx, &reseller.StoreTopupOrderRequest{
			StoreLogin: p["store_login"], Currency: reseller.Currency(p["currency"]), Amount: amount})
	case reseller.OrderTypeMessengerStars:
		return c.BuyStars(ctx, &reseller.StarsOrderRequest{MessengerUsername: p["messenger_username"], Quantity: num("quantity")})
	case reseller.OrderTypeMessengerPremium:
		return c.BuyPremium(ctx, &reseller.PremiumOrderRequest{MessengerUsername: p["messenger_username"], Months: num("months")})
	case reseller.OrderTypeManualService:
		return c.CreateManualServiceOrder(ctx, &reseller.ManualServiceOrderRequest{ServiceID: p["service_id"], ProductID: p["product_id"], Fields: r.Fields})
	case reseller.OrderTypeStoreGift:
		return c.CreateStoreGiftOrder(ctx, &reseller.StoreGiftOrderRequest{AppID: num64("app_id"), SubID: num64("sub_id"), Region: p["region"], InviteURL: p["invite_url"]})
	case reseller.OrderTypeGiftCard:
		return c.CreateGiftCardOrder(ctx, &reseller.GiftCardOrderRequest{CategoryID: p["category_id"], CardID: p["card_id"], Quantity: num("quantity")})
	case reseller.OrderTypeGameKey:
		return c.CreateGameKeyOrder(ctx, &reseller.GameKeyOrderRequest{GameID: p["game_id"], KeyID: p["key_id"], Quantity: num("quantity")})
	case reseller.OrderTypeGameTopup:
		return c.CreateTopUpOrder(ctx, &reseller.TopUpOrderRequest{CategoryID: p["category_id"], OfferID: p["offer_id"], Fields: r.Fields})
	}
	return nil, fmt.Errorf("unknown order type %q", r.Type)
}

func newAttemptID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// place writes the intent (placing, a new attempt, the request and its
// signature, the time) and then POSTs. from is the status the order is in.
func (f *fulfiller) place(ctx context.Context, o *state.Order) (bool, time.Time, error) {
	q, err := quoteOf(o)
	if err != nil {
		return f.toRefunding(ctx, o, "bad quote: "+err.Error(), reasonInvalid)
	}
	req, err := buildRequest(q)
	if err != nil {
		return f.toRefunding(ctx, o, err.Error(), reasonInvalid)
	}
	raw, err := json.Marshal(req)
	if err != nil {
		return false, time.Time{}, err
	}
	attempt, prev := newAttemptID(), o.AttemptID
	o, err = f.orders.Transition(ctx, o.ID, []string{o.Status}, state.OrderPlacing, func(n *state.Order) error {
		if n.AttemptID != prev {
			return errAttemptMoved // another worker started an attempt meanwhile
		}
		n.AttemptID, n.Request, n.Signature, n.PlacingAt = attempt, raw, req.signature(), f.now().UTC()
		n.Attempts++
		return nil
	}, "attempt "+attempt)
	if err != nil {
		return false, time.Time{}, err
	}
	if err := f.fail(FailpointIntent, o.ID); err != nil {
		return false, time.Time{}, err
	}
	up, err := f.create(ctx, req)
	var rl *reseller.RateLimitError
	var ve *reseller.ValidationError
	var apiErr *reseller.Error
	switch {
	case err == nil:
		if err := f.fail(FailpointCreated, o.ID); err != nil {
			return false, time.Time{}, err
		}
		_, _ = f.b.Alerts().Clear(ctx, alertUpstreamBalance)
		return f.adopt(ctx, o, up, "created")
	case reseller.IsOutcomeUnknown(err):
		f.b.log.Warn("order create outcome unknown; reconciling", "order", o.ID, "attempt", attempt, "err", err)
		return false, f.now().Add(f.cfg.PollMin), nil
	case errors.As(err, &rl), reseller.IsUnauthorized(err), reseller.IsForbidden(err):
		// Provably not executed: the next try is a plain new attempt.
		wait := f.cfg.RetryMin
		if rl != nil && rl.RetryAfter > wait {
			wait = rl.RetryAfter
		}
		f.b.log.Warn("order create refused; retrying later", "order", o.ID, "err", err)
		return false, f.now().Add(wait), f.unsent(ctx, o, attempt)
	case errors.As(err, &ve):
		return f.toRefunding(ctx, o, "invalid request: "+ve.Field, reasonInvalid)
	case errors.As(err, &apiErr) && apiErr.Status >= 400 && apiErr.Status < 500:
		if strings.Contains(strings.ToLower(apiErr.Message), "balance") {
			_, _ = f.b.Alerts().Raise(ctx, alertUpstreamBalance, locales.T(f.b.Engine.DefaultLang, "alert.order_balance", "id", o.ID))
			return f.toRefunding(ctx, o, "upstream balance too low", reasonUnavailable)
		}
		return f.toRefunding(ctx, o, fmt.Sprintf("upstream %d %s", apiErr.Status, apiErr.Type), reasonInvalid)
	default:
		// Not an order-creating outcome (the request never left): try again.
		f.b.log.Warn("order create failed before sending; retrying later", "order", o.ID, "err", err)
		return false, f.now().Add(f.cfg.RetryMin), f.unsent(ctx, o, attempt)
	}
}

// alertUpstreamBalance is raised when a create fails for the balance.
const alertUpstreamBalance = "upstream:order-balance"

// unsent records that the attempt provably created nothing, so the next
// pass places again at once instead of reconciling.
func (f *fulfiller) unsent(ctx context.Context, o *state.Order, attempt string) error {
	_, err := f.orders.Transition(ctx, o.ID, []string{state.OrderPlacing}, state.OrderPlacing, func(n *state.Order) error {
		if n.AttemptID != attempt {
			return errAttemptMoved
		}
		n.AttemptID = ""
		return nil
	}, "attempt "+attempt+" not sent")
	return err
}

// adopt stores the upstream order as ours: placing -> placed, claiming its
// number. A number another order already claimed sends this one to review.
func (f *fulfiller) adopt(ctx context.Context, o *state.Order, up *reseller.Order, how string) (bool, time.Time, error) {
	attempt := o.AttemptID
	n, err := f.orders.Transition(ctx, o.ID, []string{state.OrderPlacing, state.OrderNeedsReview}, state.OrderPlaced, func(n *state.Order) error {
		if n.AttemptID != attempt {
			return errAttemptMoved
		}
		n.UpstreamNumber, n.UpstreamStatus, n.ChargedUSD = up.Number, string(up.Status), up.ChargedUSD.Decimal
		return nil
	}, fmt.Sprintf("upstream %d %s", up.Number, how))
	if errors.Is(err, state.ErrUpstreamClaimed) {
		return f.review(ctx, o, fmt.Sprintf("upstream order %d is claimed by another order", up.Number))
	}
	if err != nil {
		return false, time.Time{}, err
	}
	f.b.log.Info("order placed", "order", o.ID, "upstream", up.Number, "how", how)
	if err := f.fail(FailpointPlaced, o.ID); err != nil {
		return false, time.Time{}, err
	}
	var rows [][]flows.Button
	if f.b.chat.placed(ctx, n, up) {
		rows = openButton(f.lang(n), n.ID, "oc.btn_open")
	}
	_ = f.notifyStatusRows(ctx, n, state.OrderPlaced, f.processingText(n, up), rows)
	return true, time.Time{}, nil
}

// placing handles an attempt whose outcome we do not know (an ambiguous
// create, or a crash after the intent): reconcile, wait, or try again.
func (f *fulfiller) placing(ctx context.Context, o *state.Order) (bool, time.Time, error) {
	if o.AttemptID == "" {
		return f.place(ctx, o) // the last attempt provably created nothing
	}
	var req upstreamRequest
	if err := json.Unmarshal(o.Request, &req); err != nil {
		return f.review(ctx, o, "stored request unreadable")
	}
	matches, err := f.reconcile(ctx, o, &req)
	if err != nil {
		f.b.log.Warn("reconcile order", "order", o.ID, "err", err)
		return false, f.now().Add(f.cfg.PollMin), nil
	}
	switch {
	case len(matches) == 1:
		return f.adopt(ctx, o, &matches[0], "reconciled")
	case len(matches) > 1:
		nums := make([]string, len(matches))
		for i, m := range matches {
			nums[i] = strconv.FormatInt(m.Number, 10)
		}
		return f.review(ctx, o, "several upstream orders match: "+strings.Join(nums, ", "))
	}
	if wait := o.PlacingAt.Add(f.cfg.Grace).Sub(f.now()); wait > 0 {
		return false, f.now().Add(min(wait, f.cfg.PollMin)), nil
	}
	f.b.log.Info("no upstream order after the grace period; placing again", "order", o.ID, "attempt", o.AttemptID)
	return f.place(ctx, o)
}

// reconcile lists upstream orders of the request's type newest first, back
// to the attempt's time (less the clock skew), and returns the unclaimed
// ones matching the request.
func (f *fulfiller) reconcile(ctx context.Context, o *state.Order, req *upstreamRequest) ([]reseller.Order, error) {
	since := o.PlacingAt.Add(-f.cfg.Skew)
	var out []reseller.Order
	for u, err := range f.up.AllOrders(ctx, &reseller.OrdersOptions{Limit: 100, Type: req.Type}) {
		if err != nil {
			return nil, err
		}
		if u.CreatedAt.Before(since) {
			break
		}
		if !req.matches(&u) {
			continue
		}
		owner, err := f.orders.ByUpstream(ctx, u.Number)
		switch {
		case err == nil && owner.ID != o.ID:
			continue // another order's
		case err != nil && !errors.Is(err, state.ErrOrderNotFound):
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

// review parks the order for an admin.
func (f *fulfiller) review(ctx context.Context, o *state.Order, why string) (bool, time.Time, error) {
	n, err := f.orders.Transition(ctx, o.ID, []string{o.Status}, state.OrderNeedsReview, func(n *state.Order) error {
		n.Reason = why
		return nil
	}, why)
	if err != nil {
		return false, time.Time{}, err
	}
	f.b.log.Error("order needs review", "order", o.ID, "why", why)
	lang := f.lang(o)
	_ = f.notifyStatus(ctx, n, state.OrderNeedsReview, locales.T(lang, "order.review", "id", o.ID, "item", locales.Escape(itemName(o))))
	_, _ = f.b.Alerts().Raise(ctx, reviewAlert(o.ID),
		locales.T(f.b.Engine.DefaultLang, "alert.order_review", "id", o.ID, "why", locales.Escape(why)))
	return false, time.Time{}, nil
}

// reviewAlert is the alert key raised when order id goes to needs_review;
// an admin's resolution clears it.
func reviewAlert(id int64) string { return "order:" + strconv.FormatInt(id, 10) + ":review" }

// Buyer-facing reasons of a failed order.
const (
	reasonInvalid     = "order.reason_invalid"
	reasonUnavailable = "order.reason_unavailable"
	reasonFailed      = "order.reason_failed"
)

// toRefunding moves the order to refunding and tells the buyer.
func (f *fulfiller) toRefunding(ctx context.Context, o *state.Order, why, buyerReason string) (bool, time.Time, error) {
	n, err := f.orders.Transition(ctx, o.ID, []string{o.Status}, state.OrderRefunding, func(n *state.Order) error {
		n.Reason = buyerReason
		return nil
	}, why)
	if err != nil {
		return false, time.Time{}, err
	}
	f.b.log.Info("order failed; refunding", "order", o.ID, "why", why)
	lang := f.lang(n)
	_ = f.notifyStatus(ctx, n, state.OrderRefunding, locales.T(lang, "order.failed", "id", n.ID,
		"item", locales.Escape(itemName(n)), "reason", locales.T(lang, buyerReason)))
	return true, time.Time{}, nil
}

// track polls the upstream order and acts on its status.
func (f *fulfiller) track(ctx context.Context, o *state.Order) (bool, time.Time, error) {
	up, err := f.up.Order(ctx, o.UpstreamNumber)
	if err != nil {
		f.b.log.Warn("poll upstream order", "order", o.ID, "upstream", o.UpstreamNumber, "err", err)
		f.checkStuck(ctx, o)
		return false, f.now().Add(f.pollDelay(o)), nil
	}
	switch {
	case up.Status.Is(reseller.OrderCompleted):
		return f.complete(ctx, o, up)
	case up.Status.Is(reseller.OrderFailed), up.Status.Is(reseller.OrderRefund):
		n, err := f.orders.Transition(ctx, o.ID, []string{state.OrderPlaced}, state.OrderPlaced, func(n *state.Order) error {
			n.UpstreamStatus = string(up.Status)
			return nil
		}, "upstream "+string(up.Status))
		if err != nil {
			return false, time.Time{}, err
		}
		return f.toRefunding(ctx, n, "upstream "+string(up.Status), reasonFailed)
	}
	if string(up.Status) != o.UpstreamStatus {
		if _, err := f.orders.Transition(ctx, o.ID, []string{state.OrderPlaced}, state.OrderPlaced, func(n *state.Order) error {
			n.UpstreamStatus = string(up.Status)
			return nil
		}, ""); err != nil {
			return false, time.Time{}, err
		}
	}
	f.checkStuck(ctx, o)
	return false, f.now().Add(f.pollDelay(o)), nil
}

// pollDelay grows with the order's age: PollMin at first, a third of the
// age later, at most PollMax.
func (f *fulfiller) pollDelay(o *state.Order) time.Duration {
	return min(max(f.now().Sub(o.PlacingAt)/3, f.cfg.PollMin), f.cfg.PollMax)
}

// checkStuck alerts admins once when the order has been in flight too long.
func (f *fulfiller) checkStuck(ctx context.Context, o *state.Order) {
	age := f.now().Sub(o.CreatedAt)
	if age < f.cfg.StuckAfter {
		return
	}
	_, _ = f.b.Alerts().Raise(ctx, "order:"+strconv.FormatInt(o.ID, 10)+":stuck",
		locales.T(f.b.Engine.DefaultLang, "alert.order_stuck", "id", o.ID, "number", o.UpstreamNumber,
			"status", o.UpstreamStatus, "minutes", int64(age/time.Minute)))
}

// complete stores the codes (placed -> delivered) and hands them over.
func (f *fulfiller) complete(ctx context.Context, o *state.Order, up *reseller.Order) (bool, time.Time, error) {
	codes := up.DeliverableCodes()
	if len(codes) == 0 && (o.Line == "giftcards" || o.Line == "keys") {
		return f.review(ctx, o, fmt.Sprintf("upstream %d completed without codes", up.Number))
	}
	n, err := f.orders.Transition(ctx, o.ID, []string{state.OrderPlaced}, state.OrderDelivered, func(n *state.Order) error {
		n.Codes, n.UpstreamStatus = codes, string(up.Status)
		if !up.ChargedUSD.IsZero() {
			n.ChargedUSD = up.ChargedUSD.Decimal
		}
		return nil
	}, fmt.Sprintf("upstream completed, %d codes", len(codes)))
	if err != nil {
		return false, time.Time{}, err
	}
	_, _ = f.b.Alerts().Clear(ctx, "order:"+strconv.FormatInt(o.ID, 10)+":stuck")
	if err := f.fail(FailpointCompleted, o.ID); err != nil {
		return false, time.Time{}, err
	}
	return false, time.Time{}, f.finishNotices(ctx, n)
}

// finishNotices hands a finished order's result to the buyer when that has
// not happened yet; an error makes the job try again later. A buyer who
// blocked the bot gets a delivery after /start and sees a refund in /orders.
func (f *fulfiller) finishNotices(ctx context.Context, o *state.Order) error {
	var err error
	switch {
	case o.Status == state.OrderDelivered && o.DeliveredAt.IsZero():
		err = f.deliver(ctx, o)
		if errors.Is(err, ErrBlocked) {
			f.b.log.Info("buyer blocked the bot; delivery waits for /start", "order", o.ID)
		}
	case o.Status == state.OrderRefunded:
		err = f.notifyStatus(ctx, o, state.OrderRefunded, f.refundedText(o))
	}
	if errors.Is(err, ErrBlocked) {
		return nil
	}
	return err
}

// deliver sends the codes or the delivered notice and records it.
func (f *fulfiller) deliver(ctx context.Context, o *state.Order) error {
	if err := f.sendResult(ctx, o); err != nil {
		return err
	}
	_, err := f.orders.Transition(ctx, o.ID, []string{state.OrderDelivered}, state.OrderDelivered, func(n *state.Order) error {
		n.DeliveredAt, n.NotifiedStatus = f.now().UTC(), state.OrderDelivered
		return nil
	}, "delivered to the buyer")
	if err == nil {
		f.b.log.Info("order delivered", "order", o.ID, "codes", len(o.Codes))
	}
	return err
}

// refund returns the money the way the buyer paid, idempotently, then
// marks the order refunded and tells the buyer.
func (f *fulfiller) refund(ctx context.Context, o *state.Order) (bool, time.Time, error) {
	if err := f.fail(FailpointRefunding, o.ID); err != nil {
		return false, time.Time{}, err
	}
	var ref string
	switch o.PayMethod {
	case state.PayStars:
		ref = o.ChargeID
		err := f.b.API.Do(ctx, "refundStarPayment", 0, func(ctx context.Context) error {
			_, err := f.b.API.TG.RefundStarPayment(ctx, &tgbot.RefundStarPaymentParams{UserID: o.UserID, TelegramPaymentChargeID: o.ChargeID})
			return err
		})
		if err != nil && !strings.Contains(err.Error(), "CHARGE_ALREADY_REFUNDED") {
			f.b.log.Warn("refund Stars", "order", o.ID, "err", err)
			_, _ = f.b.Alerts().Raise(ctx, "order:"+strconv.FormatInt(o.ID, 10)+":refund",
				locales.T(f.b.Engine.DefaultLang, "alert.order_refund", "id", o.ID, "err", locales.Escape(err.Error())))
			return false, f.now().Add(f.refundDelay(o)), nil
		}
	case state.PayWallet:
		ref = "refund:order:" + strconv.FormatInt(o.ID, 10)
		if _, _, err := f.wallets.Credit(ctx, o.UserID, o.ShopUSD, ref, "refund of order "+strconv.FormatInt(o.ID, 10), "refund"); err != nil {
			f.b.log.Warn("refund to wallet", "order", o.ID, "err", err)
			return false, f.now().Add(f.refundDelay(o)), nil
		}
	default:
		return f.review(ctx, o, "unknown pay method "+o.PayMethod)
	}
	if err := f.fail(FailpointRefunded, o.ID); err != nil {
		return false, time.Time{}, err
	}
	n, err := f.orders.Transition(ctx, o.ID, []string{state.OrderRefunding}, state.OrderRefunded, func(n *state.Order) error {
		n.RefundRef = ref
		return nil
	}, "refunded "+o.PayMethod)
	if err != nil {
		return false, time.Time{}, err
	}
	_, _ = f.b.Alerts().Clear(ctx, "order:"+strconv.FormatInt(o.ID, 10)+":refund")
	f.b.log.Info("order refunded", "order", n.ID, "method", n.PayMethod)
	f.alertRefunded(ctx, n)
	return true, time.Time{}, nil
}

// alertRefunded tells admins, once per order, that an order failed and its
// money went back to the buyer, and why.
func (f *fulfiller) alertRefunded(ctx context.Context, o *state.Order) {
	lang := f.b.Engine.DefaultLang
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
	_, _ = f.b.Alerts().Raise(ctx, "order:"+strconv.FormatInt(o.ID, 10)+":refunded",
		locales.T(lang, "alert.order_refunded", "id", o.ID, "item", locales.Escape(itemName(o)), "paid", paid,
			"number", o.UpstreamNumber, "why", why))
}

// refundedText tells the buyer where the money went.
func (f *fulfiller) refundedText(o *state.Order) string {
	lang := f.lang(o)
	if o.PayMethod == state.PayStars {
		return locales.T(lang, "order.refunded_stars", "id", o.ID, "stars", locales.Stars(lang, o.Stars))
	}
	return locales.T(lang, "order.refunded_wallet", "id", o.ID, "amount", locales.Money(lang, o.ShopUSD))
}

// refundDelay backs off with the time spent refunding.
func (f *fulfiller) refundDelay(o *state.Order) time.Duration {
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
func (f *fulfiller) notifyStatus(ctx context.Context, o *state.Order, status, text string) error {
	return f.notifyStatusRows(ctx, o, status, text, nil)
}

// notifyStatusRows is notifyStatus with buttons (global ones) on the message.
func (f *fulfiller) notifyStatusRows(ctx context.Context, o *state.Order, status, text string, rows [][]flows.Button) error {
	if o.NotifiedStatus == status || text == "" {
		return nil
	}
	if _, err := f.b.Send(ctx, o.ChatID, text, rows); err != nil {
		if !errors.Is(err, ErrBlocked) {
			f.b.log.Warn("tell buyer about order", "order", o.ID, "status", status, "err", err)
		}
		return err
	}
	_, err := f.orders.Transition(ctx, o.ID, []string{o.Status}, o.Status, func(n *state.Order) error {
		n.NotifiedStatus = status
		return nil
	}, "")
	if err != nil && !errors.Is(err, state.ErrBadTransition) {
		return err
	}
	return nil
}

func (f *fulfiller) lang(o *state.Order) locales.Lang {
	if l, ok := locales.Parse(o.Lang); ok {
		return l
	}
	return f.b.Engine.DefaultLang
}

// itemName is what the buyer bought, as they saw it.
func itemName(o *state.Order) string {
	if q, err := quoteOf(o); err == nil && q.ItemName != "" {
		return q.ItemName
	}
	return o.Line
}

// processingText is the "being processed" notice; manual services show
// their deadline.
func (f *fulfiller) processingText(o *state.Order, up *reseller.Order) string {
	lang := f.lang(o)
	text := locales.T(lang, "order.processing", "id", o.ID, "item", locales.Escape(itemName(o)))
	if up != nil && up.DeadlineAt != nil {
		text += "\n" + locales.T(lang, "order.deadline", "deadline", locales.DateTime(lang, *up.DeadlineAt))
	}
	return text
}
