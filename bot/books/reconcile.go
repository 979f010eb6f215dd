package books

import (
	"context"
	"errors"
	"html"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/jobs"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/state"
	"shopbot/state/redisstore/sched"
)

// The reconciliation matches our books with the two outside ones over a
// window: the upstream's orders and balance transactions, and Telegram's
// Star transactions. What it checks:
//   - every upstream order that took money (not failed or refunded) has an
//     order of ours (the upstream index holds one order per number);
//   - every upstream ORDER debit names an upstream order (its note, "Order
//     #N (...)"), and every upstream refund of an order is not one of our
//     delivered orders;
//   - every Star payment for a shop invoice ("q:" payload) has an order
//     (delivered, refunded or in progress) or was refunded; a payment for a
//     wallet top-up ("w:") is credited in the payer's ledger or refunded,
//     never both (reconcile_topup.go); a payment for no invoice of the
//     shop, or one on the review list, is unexplained;
//   - every Star refund is of a charge that bought nothing or of a refunded
//     order, and every refunded Stars order has its refund; every Stars
//     order's charge is in Telegram's list.
//
// Items younger than ReconcileSettle (an order being placed, a payment
// being handled) are in progress and not counted. /reconcile shows the
// report; a durable job runs it every ReconcileEvery over the last
// ReconcileWindow and alerts admins once per unexplained item.

// StarLedger reads the bot's Star transactions, newest first: the same
// getStarTransactions pages the payment sweep reads (the bot's Telegram
// adapter gives both).
type StarLedger interface {
	StarTransactions(ctx context.Context, offset, limit int) ([]StarTx, error)
}

// StarTx is one entry of the bot's Star transactions.
type StarTx struct {
	ID     string
	Date   time.Time
	Amount int64
	// Refund is an outgoing transaction to a user: the refund of charge ID.
	Refund bool
	// Incoming is a payment from a user (User), for invoice Payload.
	Incoming bool
	User     int64
	Payload  string
	// Affiliate is what an affiliate of the shop's affiliate program took
	// from this payment, in Stars (negative: given back on its refund);
	// zero when none did.
	Affiliate decimal.Decimal
	// Program is a commission the bot earned as an affiliate of another
	// bot's program; Amount (whole Stars) is what it got, Sponsor who paid.
	Program bool
	Sponsor string
	Nanos   int64 // billionths of a Star on top of Amount
}

// Stars is the transaction's amount with its fraction.
func (tx StarTx) Stars() decimal.Decimal {
	return decimal.NewFromInt(tx.Amount).Add(decimal.New(tx.Nanos, -9))
}

// Reconciliation defaults and bounds.
const (
	defaultReconcileEvery  = 24 * time.Hour
	defaultReconcileSettle = 10 * time.Minute
	maxReconcileWindow     = 30 * 24 * time.Hour
	// recMargin is how much before the window the outside lists are read,
	// as evidence for the window's items (a charge paid just before its
	// order was made).
	recMargin = time.Hour
	// recLookBack bounds how far back the Star list is read while an order
	// of the window still misses its charge (a payment the sweep turned into
	// an order long after).
	recLookBack = 30 * 24 * time.Hour
	recPage     = 100 // page size of the three lists
	recMaxPages = 1000
	// recAlertItems is how many new items a daily alert lists.
	recAlertItems = 10
	// invoicePayload starts the payload of the shop's purchase invoices
	// (checkout's "q:<quote id>").
	invoicePayload = "q:"
	reconcileJob   = "books:reconcile"
)

// noteOrderRE finds the order number in an upstream transaction's note
// ("Order #123 (gift_card)", "Refund for order #123").
var noteOrderRE = regexp.MustCompile(`#(\d+)`)

// recItem is one unexplained item: its alert key (the same item alerts
// once), and its line (a locale key and its arguments).
type recItem struct {
	key string
	msg string
	kv  []any
}

// recFailure is a part of the books that could not be read.
type recFailure struct {
	part string // locale key of the part
	err  error
}

// recReport is one reconciliation.
type recReport struct {
	from, to                                   time.Time
	items                                      []recItem
	pending                                    int
	failed                                     []recFailure
	orders, upstream, debits, charges, refunds int
	aff                                        affiliateTally
}

func (rep *recReport) add(key, msg string, kv ...any) {
	rep.items = append(rep.items, recItem{key: key, msg: msg, kv: kv})
}

func inWindow(t, from, to time.Time) bool { return !t.Before(from) && !t.After(to) }

// reconcile matches the books over [from, to]. Only our own store's
// errors fail it; an outside list that cannot be read is a failure in the
// report.
func (r *Books) reconcile(ctx context.Context, from, to time.Time) (*recReport, error) {
	rep := &recReport{from: from, to: to}
	now := r.now()
	settled := func(t time.Time) bool { return now.Sub(t) >= r.opts.ReconcileSettle }

	// Our orders of the window (and its margin).
	var ours []*state.Order
	if err := r.scanOrders(ctx, from.Add(-recMargin), state.OrderFilter{}, func(o *state.Order) {
		if !o.CreatedAt.After(to) {
			ours = append(ours, o)
		}
	}); err != nil {
		return nil, err
	}

	upOrders := map[int64]*reseller.Order{}
	if r.up == nil {
		rep.failed = append(rep.failed, recFailure{"rep.rec.part.upstream_orders", errNoUpstream})
	} else if err := r.recUpstreamOrders(ctx, rep, upOrders, settled); err != nil {
		if !isOutside(err) {
			return nil, err
		}
		rep.failed = append(rep.failed, recFailure{"rep.rec.part.upstream_orders", err})
	}
	if r.up != nil {
		if err := r.recUpstreamTx(ctx, rep, upOrders); err != nil {
			if !isOutside(err) {
				return nil, err
			}
			rep.failed = append(rep.failed, recFailure{"rep.rec.part.upstream_tx", err})
		}
	}
	if err := r.recStars(ctx, rep, ours, settled); err != nil {
		if !isOutside(err) {
			return nil, err
		}
		rep.failed = append(rep.failed, recFailure{"rep.rec.part.stars", err})
	}
	for _, o := range ours {
		if inWindow(o.CreatedAt, from, to) {
			rep.orders++
		}
	}
	return rep, nil
}

// errNoUpstream is the failure of the upstream part without an upstream.
var errNoUpstream = errors.New("no upstream configured")

// outsideError marks an error of an outside list (not of our store).
type outsideError struct{ err error }

func (e outsideError) Error() string { return e.err.Error() }
func (e outsideError) Unwrap() error { return e.err }

func isOutside(err error) bool {
	var o outsideError
	return errors.As(err, &o)
}

// recUpstreamOrders reads the upstream's orders of the window, newest
// first, and checks that each one that took money has an order of ours.
func (r *Books) recUpstreamOrders(ctx context.Context, rep *recReport, seen map[int64]*reseller.Order, settled func(time.Time) bool) error {
	opts := &reseller.OrdersOptions{Limit: recPage}
	for range recMaxPages {
		page, err := r.up.Orders(ctx, opts)
		if err != nil {
			return outsideError{err}
		}
		for i := range page.Data {
			u := &page.Data[i]
			if u.CreatedAt.Before(rep.from.Add(-recMargin)) {
				return nil
			}
			seen[u.Number] = u
			if !inWindow(u.CreatedAt, rep.from, rep.to) {
				continue
			}
			rep.upstream++
			if _, err := r.orders.ByUpstream(ctx, u.Number); err == nil {
				continue
			} else if !errors.Is(err, state.ErrOrderNotFound) {
				return err
			}
			switch {
			case u.Status.Is(reseller.OrderFailed) || u.Status.Is(reseller.OrderRefund):
				// It took nothing: the upstream gave the charge back.
			case !settled(u.CreatedAt):
				rep.pending++ // a create whose claim is on its way
			default:
				rep.add("orphan:"+strconv.FormatInt(u.Number, 10), "rep.rec.item.orphan",
					"number", u.Number, "type", string(u.Type), "usd", u.ChargedUSD.Decimal, "status", string(u.Status), "at", u.CreatedAt)
			}
		}
		if !page.HasMore || page.NextCursor == nil {
			return nil
		}
		opts = &reseller.OrdersOptions{Limit: recPage, Cursor: *page.NextCursor}
	}
	return nil
}

// recUpstreamTx reads the upstream's ORDER transactions of the window:
// each debit must name an upstream order, and a refund must not be of one
// of our delivered orders.
func (r *Books) recUpstreamTx(ctx context.Context, rep *recReport, upOrders map[int64]*reseller.Order) error {
	opts := &reseller.TransactionsOptions{Limit: recPage, Type: reseller.TxOrder}
	for range recMaxPages {
		page, err := r.up.Transactions(ctx, opts)
		if err != nil {
			return outsideError{err}
		}
		for _, tx := range page.Data {
			if tx.CreatedAt.Before(rep.from.Add(-recMargin)) {
				return nil
			}
			if !inWindow(tx.CreatedAt, rep.from, rep.to) || tx.Status == reseller.TxCancelled {
				continue
			}
			var number int64
			if m := noteOrderRE.FindStringSubmatch(tx.Note); m != nil {
				number, _ = strconv.ParseInt(m[1], 10, 64)
			}
			if tx.Direction == reseller.TxDebit {
				rep.debits++
				known, err := r.upstreamOrderExists(ctx, number, upOrders)
				if err != nil {
					return err
				}
				if !known {
					rep.add("debit:"+strconv.FormatInt(tx.Number, 10), "rep.rec.item.debit",
						"tx", tx.Number, "usd", tx.AmountUSD.Decimal, "note", locales.Escape(locales.Clip(tx.Note, 60)), "at", tx.CreatedAt)
				}
				continue
			}
			if number == 0 {
				continue
			}
			o, err := r.orders.ByUpstream(ctx, number)
			if errors.Is(err, state.ErrOrderNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if o.Status == state.OrderDelivered && o.UpstreamNumber == number {
				rep.add("uprefund:"+strconv.FormatInt(number, 10), "rep.rec.item.upstream_refunded",
					"number", number, "usd", tx.AmountUSD.Decimal, "order", o.ID)
			}
		}
		if !page.HasMore || page.NextCursor == nil {
			return nil
		}
		opts = &reseller.TransactionsOptions{Limit: recPage, Type: reseller.TxOrder, Cursor: *page.NextCursor}
	}
	return nil
}

// upstreamOrderExists reports whether the upstream has order number: one
// read with the window's orders, else asked for.
func (r *Books) upstreamOrderExists(ctx context.Context, number int64, upOrders map[int64]*reseller.Order) (bool, error) {
	if number <= 0 {
		return false, nil
	}
	if upOrders[number] != nil {
		return true, nil
	}
	u, err := r.up.Order(ctx, number)
	if reseller.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, outsideError{err}
	}
	upOrders[number] = u
	return true, nil
}

// recStars reads Telegram's Star transactions of the window and matches
// payments and refunds with our orders.
func (r *Books) recStars(ctx context.Context, rep *recReport, ours []*state.Order, settled func(time.Time) bool) error {
	if r.stars == nil {
		return nil
	}
	missing := map[string]*state.Order{} // Stars orders of the window whose charge is not read yet
	for _, o := range ours {
		if o.PayMethod == state.PayStars && o.ChargeID != "" && inWindow(o.CreatedAt, rep.from, rep.to) {
			missing[o.ChargeID] = o
		}
	}
	refunds := map[string]StarTx{}
	var charges []StarTx
	margin, floor := rep.from.Add(-recMargin), rep.from.Add(-recLookBack)
read:
	for offset := 0; offset < recMaxPages*recPage; offset += recPage {
		page, err := r.stars.StarTransactions(ctx, offset, recPage)
		if err != nil {
			return outsideError{err}
		}
		for _, tx := range page {
			if tx.Date.Before(floor) || (tx.Date.Before(margin) && len(missing) == 0) {
				break read
			}
			if inWindow(tx.Date, rep.from, rep.to) {
				rep.aff.add(tx)
			}
			switch {
			case tx.Refund:
				refunds[tx.ID] = tx
			case tx.Incoming:
				delete(missing, tx.ID)
				charges = append(charges, tx)
			}
		}
		if len(page) < recPage {
			break
		}
	}
	for _, tx := range charges {
		if !inWindow(tx.Date, rep.from, rep.to) {
			continue
		}
		rep.charges++
		if _, err := r.orders.ByCharge(ctx, tx.ID); err == nil {
			continue // delivered, refunded or in progress: /orders tells which
		} else if !errors.Is(err, state.ErrOrderNotFound) {
			return err
		}
		if _, ok := refunds[tx.ID]; ok {
			continue // it bought nothing and was given back
		}
		if isTopup(tx) {
			if credited, err := r.topupCredited(ctx, tx); err != nil {
				return err
			} else if credited {
				continue // a wallet top-up, in the buyer's ledger
			}
		}
		kv := []any{"charge", locales.Escape(tx.ID), "stars", tx.Amount, "user", tx.User, "at", tx.Date}
		if rv, err := r.reviews.Get(ctx, tx.ID); err == nil {
			if rv.Resolution != nil && rv.Resolution.Status == state.ChargeSettled {
				continue // an admin said it was delivered or handled elsewhere (/charges)
			}
			rep.add("charge:"+tx.ID, "rep.rec.item.charge_review", kv...)
			continue
		} else if !errors.Is(err, state.ErrNoChargeReview) {
			return err
		}
		switch {
		case !strings.HasPrefix(tx.Payload, invoicePayload) && !isTopup(tx):
			rep.add("charge:"+tx.ID, "rep.rec.item.charge_foreign", kv...)
		case !settled(tx.Date):
			rep.pending++ // its update may still be in the queue
		case isTopup(tx):
			rep.add("charge:"+tx.ID, "wtopup.rec_charge", kv...)
		default:
			rep.add("charge:"+tx.ID, "rep.rec.item.charge", kv...)
		}
	}
	paid := map[string]StarTx{} // the payments read, by charge id
	for _, tx := range charges {
		paid[tx.ID] = tx
	}
	for id, tx := range refunds {
		if !inWindow(tx.Date, rep.from, rep.to) {
			continue
		}
		rep.refunds++
		o, err := r.orders.ByCharge(ctx, id)
		if errors.Is(err, state.ErrOrderNotFound) {
			if c, ok := paid[id]; ok && isTopup(c) {
				if err := r.recTopupRefund(ctx, rep, c); err != nil {
					return err
				}
			}
			continue // a charge that bought nothing, given back by checkout
		}
		if err != nil {
			return err
		}
		if o.Status != state.OrderRefunded && o.Status != state.OrderRefunding {
			rep.add("refund:"+id, "rep.rec.item.refund_unknown", "charge", locales.Escape(id), "stars", tx.Amount, "at", tx.Date)
		}
	}
	for _, o := range ours {
		if o.PayMethod != state.PayStars || !inWindow(o.CreatedAt, rep.from, rep.to) {
			continue
		}
		if _, ok := missing[o.ChargeID]; ok {
			rep.add("missing:"+o.ChargeID, "rep.rec.item.charge_missing", "order", o.ID, "charge", locales.Escape(o.ChargeID), "stars", o.Stars)
			continue
		}
		if _, ok := refunds[o.ChargeID]; o.Status == state.OrderRefunded && !ok {
			rep.add("unrefunded:"+o.ChargeID, "rep.rec.item.refund_missing", "order", o.ID, "charge", locales.Escape(o.ChargeID),
				"stars", o.Stars, "user", o.UserID)
		}
	}
	return nil
}

// itemLine is one item's line in lang.
func itemLine(lang locales.Lang, it recItem) string {
	kv := make([]any, 0, len(it.kv))
	for i := 0; i+1 < len(it.kv); i += 2 {
		v := it.kv[i+1]
		switch x := v.(type) {
		case time.Time:
			v = locales.DateTime(lang, x)
		case int64:
			if it.kv[i] == "stars" {
				v = locales.Stars(lang, x)
			} else {
				v = strconv.FormatInt(x, 10)
			}
		case decimal.Decimal:
			v = locales.Money(lang, x)
		}
		kv = append(kv, it.kv[i], v)
	}
	return "• " + locales.T(lang, it.msg, kv...)
}

// header is the report's text before its items.
func (r *Books) recHeader(lang locales.Lang, rep *recReport) string {
	var b strings.Builder
	b.WriteString(locales.T(lang, "rep.rec.title", "from", locales.DateTime(lang, rep.from), "to", locales.DateTime(lang, rep.to)))
	b.WriteString("\n" + locales.T(lang, "rep.rec.checked", "orders", rep.orders, "upstream", rep.upstream,
		"debits", rep.debits, "charges", rep.charges, "refunds", rep.refunds))
	for _, f := range rep.failed {
		b.WriteString("\n" + locales.T(lang, "rep.rec.failed", "part", locales.T(lang, f.part), "reason", r.outsideProblem(lang, f.err)))
	}
	if rep.pending > 0 {
		b.WriteString("\n" + locales.N(lang, "rep.rec.pending", int64(rep.pending)))
	}
	if rep.aff.any() {
		b.WriteString("\n" + rep.aff.recLine(lang))
	}
	b.WriteString("\n\n")
	if len(rep.items) == 0 {
		b.WriteString(locales.T(lang, "rep.rec.clean"))
	} else {
		b.WriteString(locales.N(lang, "rep.rec.count", int64(len(rep.items))))
	}
	return b.String()
}

// outsideProblem says why an outside list could not be read.
func (r *Books) outsideProblem(lang locales.Lang, err error) string {
	if errors.Is(err, errNoUpstream) {
		return locales.T(lang, "rep.up.not_configured")
	}
	var apiErr *reseller.Error
	if errors.As(err, &apiErr) || reseller.IsUnauthorized(err) || reseller.IsForbidden(err) || reseller.IsRateLimited(err) {
		return r.upstreamProblem(&flows.Env{Lang: lang}, "reconcile", err)
	}
	r.log.Warn("reconciliation: read an outside list", "err", err)
	return locales.T(lang, "rep.up.unavailable")
}

// plain is an item line as plain text, for the .txt report.
var tagRE = regexp.MustCompile(`<[^>]*>`)

func plain(s string) string { return html.UnescapeString(tagRE.ReplaceAllString(s, "")) }

// recWindowRE reads /reconcile's window: 90m, 24h, 7d.
var recWindowRE = regexp.MustCompile(`^([0-9]{1,5})([mhd])$`)

func parseWindow(arg string) (time.Duration, bool) {
	arg = strings.ToLower(strings.TrimSpace(arg))
	if arg == "" {
		return 24 * time.Hour, true
	}
	m := recWindowRE.FindStringSubmatch(arg)
	if m == nil {
		return 0, false
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	d := map[string]time.Duration{"m": time.Minute, "h": time.Hour, "d": 24 * time.Hour}[m[2]] * time.Duration(n)
	return d, d > 0 && d <= maxReconcileWindow
}

// reconcileCommand is /reconcile [window].
func (r *Books) reconcileCommand(ctx context.Context, env *flows.Env, _ *flows.Session, ev flows.Event) (*flows.Reply, error) {
	window, ok := parseWindow(ev.Arg)
	if !ok {
		text := env.T("rep.rec.bad_window", "value", locales.Escape(locales.Clip(ev.Arg, 40))) + "\n\n" + env.T("rep.rec.usage")
		return &flows.Reply{Notices: []flows.Notice{{Text: text}}, NoScreen: true}, nil
	}
	now := ev.Now.UTC()
	rep, err := r.reconcile(ctx, now.Add(-window), now)
	if err != nil {
		return nil, err
	}
	head := r.recHeader(env.Lang, rep)
	lines := make([]string, len(rep.items))
	for i, it := range rep.items {
		lines[i] = itemLine(env.Lang, it)
	}
	text := head
	if len(lines) > 0 {
		text += "\n" + strings.Join(lines, "\n")
	}
	if locales.UTF16Len(text) <= flows.MaxTextLen {
		return &flows.Reply{Notices: []flows.Notice{{Text: text}}, NoScreen: true}, nil
	}
	var doc strings.Builder
	doc.WriteString(plain(head) + "\n")
	for _, l := range lines {
		doc.WriteString(plain(l) + "\n")
	}
	name := "reconcile-" + now.Format("20060102-1504") + ".txt"
	if err := r.tg.SendDocument(ctx, env.User.ID, name, []byte(doc.String()), env.T("rep.rec.doc")); err != nil {
		r.log.Warn("reconciliation: send the report", "err", err)
		return &flows.Reply{Notices: []flows.Notice{{Text: head + "\n" + env.T("rep.export.send_failed")}}, NoScreen: true}, nil
	}
	return &flows.Reply{Notices: []flows.Notice{{Text: head + "\n" + env.T("rep.rec.doc")}}, NoScreen: true}, nil
}

// ---- the daily job

// runReconcile runs the daily reconciliation as a durable job: one
// replica at a time, every ReconcileEvery (the first one ReconcileEvery
// after the store first sees the job).
func (r *Books) runReconcile(ctx context.Context) {
	if r.alerts == nil {
		return
	}
	if _, ok, err := r.sched.Due(ctx, reconcileJob); err != nil {
		if ctx.Err() == nil {
			r.log.Warn("reconciliation: read its job", "err", err)
		}
	} else if !ok {
		if err := r.sched.Put(ctx, reconcileJob, r.now().Add(r.opts.ReconcileEvery)); err != nil {
			r.log.Warn("reconciliation: schedule its job", "err", err)
		}
	}
	tick := min(r.opts.ReconcileEvery/4, time.Minute)
	w := &jobs.Worker{
		What: "reconciliation", Sched: r.sched, Now: r.now, Log: r.log,
		Tick: tick, Lease: 5 * time.Minute, Timeout: 10 * time.Minute, Parallel: 1,
		Kinds: []string{sched.Kind(reconcileJob)},
		Step: func(ctx context.Context, j sched.Job) (time.Time, bool) {
			if j.Name != reconcileJob {
				r.log.Warn("reconciliation: job this version does not know; left for a newer version", "job", j.Name)
				return jobs.LeaveForNewer(ctx)
			}
			r.dailyReconcile(ctx)
			return r.now().Add(r.opts.ReconcileEvery), false
		},
	}
	w.Run(ctx)
}

// dailyReconcile runs one reconciliation over the last ReconcileWindow,
// alerts admins about the items not alerted before, and records the run.
func (r *Books) dailyReconcile(ctx context.Context) {
	now := r.now().UTC()
	rep, err := r.reconcile(ctx, now.Add(-r.opts.ReconcileWindow), now)
	if err != nil {
		r.log.Warn("daily reconciliation", "err", err)
		return
	}
	lang := r.engine.DefaultLang
	var shown []string
	fresh := 0
	for _, it := range rep.items {
		isNew, err := r.alerts.Mark(ctx, "books:"+it.key)
		if err != nil {
			r.log.Warn("daily reconciliation: mark an item alerted", "err", err)
			continue
		}
		if !isNew {
			continue
		}
		if fresh++; fresh <= recAlertItems {
			shown = append(shown, itemLine(lang, it))
		}
	}
	if fresh > 0 {
		text := locales.T(lang, "rep.rec.alert", "from", locales.DateTime(lang, rep.from), "to", locales.DateTime(lang, rep.to),
			"count", len(rep.items)) + "\n" + strings.Join(shown, "\n")
		if more := fresh - len(shown); more > 0 {
			text += "\n" + locales.N(lang, "rep.rec.alert_more", int64(more))
		}
		r.alerts.Tell(ctx, text)
	}
	r.log.Info("daily reconciliation", "unexplained", len(rep.items), "new", fresh, "pending", rep.pending, "incomplete", len(rep.failed))
	if err := r.runs.Record(ctx, now, len(rep.items)); err != nil {
		r.log.Warn("daily reconciliation: record the run", "err", err)
	}
}
