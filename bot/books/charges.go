package books

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state"
)

// /charges: the Star charges the payment sweep listed for review (a charge
// with no order in this store that nothing proves undelivered), oldest
// first, paged; each refunded (owners: orders.refund) or marked settled
// (owners: orders.retry), once, whoever presses and however often.

// Refunder gives back a Star charge listed for review through the shop's
// one Stars refund (checkout.Checkout implements it): the buyer is told
// once, in the language of the charge's quote, else lang. It reports
// whether this call gave the charge back (false: the shop had refunded it
// before); state.ErrChargeHasOrder when the charge has an order by now.
type Refunder interface {
	RefundReviewed(ctx context.Context, rv *state.ChargeReview, lang locales.Lang) (bool, error)
}

// flowCharges is the flow of /charges.
const flowCharges = "rep_chg"

// Limits and timings of /charges.
const (
	chgPerPage = 5
	// chgLedgerPages bounds how many pages of Telegram's Star transactions
	// a refund reads, looking for a refund of the charge Telegram already
	// made (the list is newest first; it stops at the charge's date).
	chgLedgerPages = 30
	// chgRetryAfter is how long a decided refund may be under way before
	// the retry (FinishChargeRefunds) takes it for cut short and finishes
	// it; chgRetryEvery how often every replica looks.
	chgRetryAfter = 2 * time.Minute
	chgRetryEvery = 5 * time.Minute
)

// Button actions of /charges (arg of the per-charge ones: the charge's
// chgRef).
const (
	actChgRefund   flows.Action = "crf"   // ask to refund a charge
	actChgSettle   flows.Action = "cst"   // ask to mark a charge settled
	actChgRefundOK flows.Action = "crfok" // refund it (confirmed)
	actChgSettleOK flows.Action = "cstok" // mark it settled (confirmed)
	actChgBack     flows.Action = "cbk"   // back to the list
	actChgPrev     flows.Action = "cprv"  // the page before (older charges)
	actChgNext     flows.Action = "cnxt"  // the page after (newer charges)
	actChgReload   flows.Action = "crl"   // read the page again
)

// Steps of /charges.
const (
	chgStepList   = "list"
	chgStepRefund = "refund" // the refund's confirmation
	chgStepSettle = "settle" // the settlement's confirmation
	chgStepDone   = "done"   // what came of it
)

// Session variables of /charges.
const (
	// chgKeyPage is the page shown (0 is the first).
	chgKeyPage flows.Key = "page"
	// chgKeyIDs are the charge ids of the page shown, in its order: a
	// button names a charge by its chgRef (charge ids may not fit in a
	// button's 64 bytes), found among them.
	chgKeyIDs flows.Key = "ids"
	// chgKeyCharge is the charge being confirmed or just resolved.
	chgKeyCharge flows.Key = "charge"
	// chgKeyNote is the locale key of what the last action found
	// (chg.note.*), shown above the charge on the done step.
	chgKeyNote flows.Key = "note"
	// chgKeyOrder is the order a charge turned out to have (chg.note.order).
	chgKeyOrder flows.Key = "order"
)

// chargesCommand opens /charges on its first page.
func (r *Books) chargesCommand(e *flows.Engine) flows.CommandFunc {
	return func(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
		s.Enter(flowCharges, chgStepList, ev.Now.Add(e.FlowTTL))
		sc, err := chgFlow{r}.Show(ctx, env, s)
		return &flows.Reply{Screen: sc, Save: true}, err
	}
}

// chgFlow is /charges: the list, a confirmation, the outcome (the chg keys
// above).
type chgFlow struct{ r *Books }

func (f chgFlow) Start(ctx context.Context, env *flows.Env, s *flows.Session, _ string) (*flows.Reply, error) {
	s.Step = chgStepList
	sc, err := f.Show(ctx, env, s)
	return &flows.Reply{Screen: sc}, err
}

func (f chgFlow) Handle(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
	if ev.Kind != flows.EvButton {
		sc, err := f.Show(ctx, env, s)
		return &flows.Reply{Screen: sc, Save: true}, err
	}
	var answer string
	switch a := ev.Button.Action; {
	case a == actChgPrev:
		s.SetInt(chgKeyPage, max(0, s.Int64(chgKeyPage)-1))
	case a == actChgNext:
		s.SetInt(chgKeyPage, s.Int64(chgKeyPage)+1)
	case a == actChgBack:
		f.toList(s)
	case (a == actChgRefund || a == actChgSettle) && s.Step == chgStepList:
		id, err := f.pressed(ctx, s, ev.Button.Arg)
		if err != nil {
			return nil, err
		}
		if id == "" {
			answer = env.T("err.outdated")
			break
		}
		s.Set(chgKeyCharge, id)
		s.Goto(map[bool]string{true: chgStepRefund, false: chgStepSettle}[a == actChgRefund])
	case a == actChgRefundOK && s.Step == chgStepRefund, a == actChgSettleOK && s.Step == chgStepSettle:
		status := map[bool]string{true: state.ChargeRefunding, false: state.ChargeSettled}[a == actChgRefundOK]
		by := state.Actor{ID: env.User.ID, Role: env.User.RoleName(), Via: state.ViaChat}
		out, err := f.r.ResolveCharge(ctx, by, s.Get(chgKeyCharge), status)
		if errors.Is(err, state.ErrNoChargeReview) || errors.Is(err, errStarsRefundsOff) {
			f.toList(s)
			answer = env.T(map[bool]string{true: "chg.not_listed", false: "err.outdated"}[errors.Is(err, state.ErrNoChargeReview)])
			break
		}
		if err != nil {
			return nil, err // the confirmation stays: Confirm again finds what won
		}
		s.Goto(chgStepDone)
		s.Set(chgKeyNote, chargeNote(out))
		s.SetInt(chgKeyOrder, out.Order)
		answer = env.T("chg.answer." + out.Word())
	}
	sc, err := f.Show(ctx, env, s)
	return &flows.Reply{Screen: sc, Save: true, Answer: answer}, err
}

// chgRef names a charge in a button: a short hash of its id.
func chgRef(id string) string {
	h := sha256.Sum256([]byte(id))
	return hex.EncodeToString(h[:5])
}

// pressed finds the charge a button's ref names: on the page the session
// recorded, else on the page as it is now (a screen shown again after a
// stale press is read afresh and not saved); "" when neither has it.
func (f chgFlow) pressed(ctx context.Context, s *flows.Session, ref string) (string, error) {
	for _, id := range strings.Fields(s.Get(chgKeyIDs)) {
		if chgRef(id) == ref {
			return id, nil
		}
	}
	list, err := f.r.reviews.List(ctx, int(max(0, s.Int64(chgKeyPage)))*chgPerPage, chgPerPage)
	if err != nil {
		return "", err
	}
	for _, rv := range list {
		if chgRef(rv.ChargeID) == ref {
			return rv.ChargeID, nil
		}
	}
	return "", nil
}

// toList goes back to the list, on the page it was.
func (chgFlow) toList(s *flows.Session) {
	s.Step, s.Back = chgStepList, nil
	s.Set(chgKeyCharge, "")
	s.Set(chgKeyNote, "")
	s.Set(chgKeyOrder, "")
}

func (f chgFlow) Show(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Screen, error) {
	switch s.Step {
	case chgStepRefund, chgStepSettle, chgStepDone:
		if id := s.Get(chgKeyCharge); id != "" {
			return f.showCharge(ctx, env, s, id)
		}
		f.toList(s)
	}
	return f.showList(ctx, env, s)
}

// showList is a page of the charges waiting for review.
func (f chgFlow) showList(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Screen, error) {
	p, err := f.r.ChargesPage(ctx, int(s.Int64(chgKeyPage)), chgPerPage)
	if err != nil {
		return nil, err
	}
	s.SetInt(chgKeyPage, int64(p.Page))
	var b strings.Builder
	if p.Waiting.N == 0 {
		b.WriteString(env.T("chg.none"))
	} else {
		b.WriteString(env.N("chg.title", p.Waiting.N, "stars", locales.Stars(env.Lang, p.Waiting.Stars),
			"usd", locales.Money(env.Lang, p.Waiting.USD), "page", p.Page+1, "pages", p.Pages))
		b.WriteString("\n" + env.T("chg.hint"))
	}
	if p.Refunding.N > 0 {
		b.WriteString("\n" + env.N("chg.refunding", p.Refunding.N, "stars", locales.Stars(env.Lang, p.Refunding.Stars)))
	}
	ids := make([]string, 0, len(p.Charges))
	var rows [][]flows.Button
	for i := range p.Charges {
		c := &p.Charges[i]
		n := strconv.Itoa(i + 1)
		ids = append(ids, c.ChargeID)
		b.WriteString("\n\n<b>" + n + ".</b> " + chargeText(env, c))
		ref := chgRef(c.ChargeID)
		row := []flows.Button{{Text: env.T("chg.btn.settle", "n", n), Action: actChgSettle, Arg: ref}}
		if f.r.refunds != nil {
			row = append([]flows.Button{{Text: env.T("chg.btn.refund", "n", n), Action: actChgRefund, Arg: ref}}, row...)
		}
		rows = append(rows, row)
	}
	s.Set(chgKeyIDs, strings.Join(ids, " "))
	var nav []flows.Button
	if p.Page > 0 {
		nav = append(nav, flows.Button{Text: env.T("chg.btn.prev"), Action: actChgPrev})
	}
	nav = append(nav, flows.Button{Text: env.T("chg.btn.reload"), Action: actChgReload})
	if p.Page+1 < p.Pages {
		nav = append(nav, flows.Button{Text: env.T("chg.btn.next"), Action: actChgNext})
	}
	return &flows.Screen{Text: b.String(), Rows: append(rows, nav)}, nil
}

// showCharge is one charge: its confirmation, or what came of it.
func (f chgFlow) showCharge(ctx context.Context, env *flows.Env, s *flows.Session, id string) (*flows.Screen, error) {
	r := f.r
	back := []flows.Button{{Text: env.T("chg.btn.back"), Action: actChgBack}}
	rv, err := r.reviews.Get(ctx, id)
	if errors.Is(err, state.ErrNoChargeReview) {
		return &flows.Screen{Text: env.T("chg.not_listed"), Rows: [][]flows.Button{back}}, nil
	}
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	if note := s.Get(chgKeyNote); s.Step == chgStepDone && note != "" {
		b.WriteString(env.T(note, "order", s.Get(chgKeyOrder)) + "\n\n")
	}
	b.WriteString(chargeText(env, &r.listed(ctx, []state.ChargeReview{*rv})[0]))
	if rv.Resolution != nil || s.Step == chgStepDone {
		if rv.Resolution != nil {
			b.WriteString("\n\n" + r.resolutionText(env, rv))
		}
		return &flows.Screen{Text: b.String(), Rows: [][]flows.Button{back}}, nil
	}
	stars := locales.Stars(env.Lang, rv.Stars)
	confirm := flows.Button{Text: env.T("rep.btn.confirm"), Action: actChgSettleOK}
	question := env.T("chg.confirm_settle", "stars", stars)
	if s.Step == chgStepRefund {
		confirm.Action = actChgRefundOK
		question = env.T("chg.confirm_refund", "stars", stars, "user", strconv.FormatInt(rv.UserID, 10))
	}
	b.WriteString("\n\n" + question)
	return &flows.Screen{Text: b.String(), Rows: [][]flows.Button{{confirm, back[0]}}}, nil
}

// ChargesPage is page (0 is the first; one past the last is the last) of
// the charges waiting for review, per a page, oldest listing first, with
// the totals: what /charges lists, and the admin console's Charges page.
func (r *Books) ChargesPage(ctx context.Context, page, per int) (*state.ChargesPage, error) {
	if per <= 0 {
		return nil, fmt.Errorf("charges for review: %d a page", per)
	}
	p := &state.ChargesPage{Pages: 1}
	if r.reviews == nil {
		return p, nil
	}
	waiting, refunding, err := r.reviews.Totals(ctx)
	if err != nil {
		return nil, err
	}
	p.Waiting = state.ChargeSum{N: waiting.N, Stars: waiting.Stars, USD: r.starsUSD(waiting.Stars)}
	p.Refunding = state.ChargeSum{N: refunding.N, Stars: refunding.Stars, USD: r.starsUSD(refunding.Stars)}
	p.Pages = int(max(1, (waiting.N+int64(per)-1)/int64(per)))
	p.Page = min(max(0, page), p.Pages-1)
	list, err := r.reviews.List(ctx, p.Page*per, per)
	if err != nil {
		return nil, err
	}
	p.Charges = r.listed(ctx, list)
	return p, nil
}

// ChargesWaiting counts the charges waiting for review (one read: the
// console's live count).
func (r *Books) ChargesWaiting(ctx context.Context) (int64, error) {
	if r.reviews == nil {
		return 0, nil
	}
	return r.reviews.Len(ctx)
}

// RefundsCharges reports whether a charge listed for review may be
// refunded: the shop takes Stars (else it only settles them).
func (r *Books) RefundsCharges() bool { return r.refunds != nil }

// listed are the charges with what /charges shows of them: the buyers'
// known @usernames (none when they cannot be read: the ids still show),
// the USD of their Stars, and what their quotes name while the store
// holds them.
func (r *Books) listed(ctx context.Context, list []state.ChargeReview) []state.ListedCharge {
	out := make([]state.ListedCharge, len(list))
	ids := make([]int64, len(list))
	for i, rv := range list {
		out[i] = state.ListedCharge{ChargeReview: rv, USD: r.starsUSD(rv.Stars)}
		ids[i] = rv.UserID
		if r.quotes == nil {
			continue
		}
		if qid, ok := strings.CutPrefix(rv.Payload, invoicePayload); ok {
			if q, err := r.quotes.Load(ctx, qid); err == nil {
				out[i].Line, out[i].ItemName = q.Line, q.ItemName
			}
		}
	}
	if r.users != nil && len(ids) > 0 {
		names, err := r.users.Usernames(ctx, ids)
		if err != nil {
			r.log.Warn("charges for review: read usernames", "err", err)
		}
		for i := range out {
			out[i].Username = names[out[i].UserID]
		}
	}
	return out
}

// chargeText is a charge's lines: its id, buyer, Stars and USD, date,
// why it is listed, and what its quote names while the store holds it.
func chargeText(env *flows.Env, c *state.ListedCharge) string {
	buyer := "<code>" + strconv.FormatInt(c.UserID, 10) + "</code>"
	if c.Username != "" {
		buyer += " @" + locales.Escape(c.Username)
	}
	text := env.T("chg.row", "charge", locales.Escape(c.ChargeID), "buyer", buyer,
		"stars", locales.Stars(env.Lang, c.Stars), "usd", locales.Money(env.Lang, c.USD),
		"date", locales.DateTime(env.Lang, c.PaidAt), "why", env.T(chargeReason(c.Reason)))
	if c.Line != "" {
		text += "\n    " + env.T("chg.row_item", "line", env.T("line."+c.Line), "item", locales.Escape(locales.Clip(c.ItemName, 80)))
	}
	return text
}

// chargeReason is the locale key of why a charge is listed.
func chargeReason(reason string) string {
	if reason == state.ReviewBeforeStore {
		return "chg.reason.before_store"
	}
	return "chg.reason.quote_gone"
}

// resolutionText says who resolved a charge, how and when.
func (r *Books) resolutionText(env *flows.Env, rv *state.ChargeReview) string {
	res := rv.Resolution
	kv := []any{"admin", strconv.FormatInt(res.By.ID, 10), "date", locales.DateTime(env.Lang, res.At), "stars", locales.Stars(env.Lang, rv.Stars)}
	switch {
	case res.HasOrder:
		return env.T("chg.res.has_order", kv...)
	case res.Status == state.ChargeSettled:
		return env.T("chg.res.settled", kv...)
	case res.Status == state.ChargeRefunding:
		return env.T("chg.res.refunding", kv...)
	case res.AlreadyRefunded:
		return env.T("chg.res.already_refunded", kv...)
	}
	return env.T("chg.res.refunded", append(kv, "done", locales.DateTime(env.Lang, res.DoneAt))...)
}

// chargeNote is the locale key of what an outcome says on the done step.
func chargeNote(o *state.ChargeOutcome) string { return "chg.note." + o.Word() }

// errStarsRefundsOff: the shop takes no Stars (no checkout), so it
// refunds none.
var errStarsRefundsOff = errors.New("no Stars refunds: payments are off")

// ResolveCharge resolves a charge listed for review as by decided:
// status state.ChargeRefunding gives it back, state.ChargeSettled moves no
// money (it was delivered or handled elsewhere). Of two decisions at once
// (two admins, two replicas, a double press) exactly one is recorded
// (records.ChargeReviews.Resolve) and only its caller refunds, after
// winning; a refund cut short (a crash, a failed call) is finished by
// FinishChargeRefunds, and Telegram's CHARGE_ALREADY_REFUNDED and the
// refund mark keep the money and the buyer's notice to once. The decision
// goes to the audit log once it took effect. state.ErrNoChargeReview when
// the charge is not listed.
func (r *Books) ResolveCharge(ctx context.Context, by state.Actor, chargeID, status string) (*state.ChargeOutcome, error) {
	if status != state.ChargeRefunding && status != state.ChargeSettled {
		return nil, fmt.Errorf("resolve charge %s: %q is not a decision", chargeID, status)
	}
	rv, err := r.reviews.Get(ctx, chargeID)
	if err != nil {
		return nil, err
	}
	out := &state.ChargeOutcome{Review: rv}
	if rv.Resolution != nil {
		return out, nil
	}
	if status == state.ChargeRefunding {
		if r.refunds == nil {
			return nil, errStarsRefundsOff
		}
		if o, err := r.orders.ByCharge(ctx, chargeID); err == nil {
			out.Order = o.ID
			return out, nil
		} else if !errors.Is(err, state.ErrOrderNotFound) {
			return nil, err
		}
	}
	won, cur, err := r.reviews.Resolve(ctx, chargeID, state.ChargeResolution{Status: status, By: by, At: r.now()})
	if err != nil {
		return nil, err
	}
	rv.Resolution, out.Won = cur, won
	if !won {
		return out, nil
	}
	if status == state.ChargeSettled {
		r.log.Info("admin settled a charge listed for review", "admin", by.ID, "via", by.Via, "charge", chargeID, "stars", rv.Stars)
		r.auditCharge(ctx, rv, state.AuditChargeSettle, by, locales.Stars(locales.En, rv.Stars)+", no money moved")
		return out, nil
	}
	r.log.Info("admin decided to refund a charge listed for review", "admin", by.ID, "via", by.Via, "charge", chargeID, "stars", rv.Stars)
	out.RefundErr = r.finishRefund(ctx, rv)
	if out.RefundErr != nil {
		r.log.Warn("refund of a charge listed for review; retried", "charge", chargeID, "err", out.RefundErr)
	}
	if errors.Is(out.RefundErr, state.ErrChargeHasOrder) {
		// Its order came after the look above: said as for one found then.
		if o, err := r.orders.ByCharge(ctx, chargeID); err == nil {
			out.Order = o.ID
		}
	}
	if again, err := r.reviews.Get(ctx, chargeID); err == nil {
		out.Review = again
	}
	return out, nil
}

// finishRefund sees a decided refund through: a charge Telegram lists as
// refunded already is only recorded so; any other is refunded (Refunder),
// and the refund recorded as finished, and audited, once.
func (r *Books) finishRefund(ctx context.Context, rv *state.ChargeReview) error {
	already, err := r.refundedInTelegram(ctx, rv)
	if err != nil {
		// Telegram refuses a second refund of a charge, and the refund
		// mark tells the buyer once: refunding without the look is safe.
		r.log.Warn("refund of a charge listed for review: read Telegram's refunds", "charge", rv.ChargeID, "err", err)
	}
	if !already {
		if _, err := r.refunds.RefundReviewed(ctx, rv, r.buyerLang(ctx, rv.UserID)); errors.Is(err, state.ErrChargeHasOrder) {
			return r.closeForOrder(ctx, rv)
		} else if err != nil {
			return err
		}
	}
	res := *rv.Resolution
	res.Status, res.DoneAt, res.AlreadyRefunded = state.ChargeRefunded, r.now(), already
	first, err := r.reviews.FinishRefund(ctx, rv.ChargeID, res)
	if err != nil || !first {
		return err
	}
	r.log.Info("charge listed for review refunded", "charge", rv.ChargeID, "user", rv.UserID, "stars", rv.Stars, "before", already)
	detail := locales.Stars(locales.En, rv.Stars)
	if already {
		detail += ", refunded in Telegram before"
	}
	r.auditCharge(ctx, rv, state.AuditChargeRefund, res.By, detail)
	return nil
}

// closeForOrder closes a decided refund whose charge has an order by now
// (a rebuilt or late payment made it): nothing is refunded here, the order
// delivers or refunds the charge, and the decision is recorded as settled
// (HasOrder), so it is not retried for ever. It returns
// state.ErrChargeHasOrder for the admin who decided.
func (r *Books) closeForOrder(ctx context.Context, rv *state.ChargeReview) error {
	res := *rv.Resolution
	res.Status, res.DoneAt, res.HasOrder = state.ChargeSettled, r.now(), true
	first, err := r.reviews.FinishRefund(ctx, rv.ChargeID, res)
	if err != nil {
		return err
	}
	if first {
		r.log.Info("refund of a charge listed for review closed: the charge has an order now", "charge", rv.ChargeID, "user", rv.UserID)
		r.auditCharge(ctx, rv, state.AuditChargeSettle, res.By, locales.Stars(locales.En, rv.Stars)+", not refunded: the charge has an order")
	}
	return state.ErrChargeHasOrder
}

// auditCharge writes a resolution to the admin audit log.
func (r *Books) auditCharge(ctx context.Context, rv *state.ChargeReview, action string, by state.Actor, detail string) {
	if r.auditLog == nil {
		return
	}
	e := state.AuditEntry{At: r.now(), Actor: by, Action: action, Target: state.AuditCharge(rv.ChargeID),
		Detail: strings.ReplaceAll(detail, "\u00a0", " ")}
	if err := r.auditLog.Record(ctx, e); err != nil {
		r.log.Warn("audit a charge resolution", "charge", rv.ChargeID, "err", err)
	}
}

// refundedInTelegram reports whether Telegram's Star transactions hold a
// refund of the charge: read newest first, back to the charge's date
// (a refund comes after its charge), at most chgLedgerPages pages.
func (r *Books) refundedInTelegram(ctx context.Context, rv *state.ChargeReview) (bool, error) {
	if r.stars == nil {
		return false, nil
	}
	since := rv.PaidAt.Add(-time.Minute)
	for page := range chgLedgerPages {
		txs, err := r.stars.StarTransactions(ctx, page*recPage, recPage)
		if err != nil {
			return false, err
		}
		for _, tx := range txs {
			if tx.Refund && tx.ID == rv.ChargeID {
				return true, nil
			}
			if !rv.PaidAt.IsZero() && tx.Date.Before(since) {
				return false, nil
			}
		}
		if len(txs) < recPage {
			break
		}
	}
	return false, nil
}

// FinishChargeRefunds finishes the refunds decided more than
// chgRetryAfter ago and not seen through (a process that won the decision
// died, or the refund call failed), and reports how many it finished.
// Every replica may run it at once: the money moves once (Telegram's
// CHARGE_ALREADY_REFUNDED), the buyer is told once (the refund mark) and
// the finish is recorded and audited once (FinishRefund).
func (r *Books) FinishChargeRefunds(ctx context.Context) (int, error) {
	if r.refunds == nil || r.reviews == nil {
		return 0, nil
	}
	list, err := r.reviews.Refunding(ctx, r.now().Add(-chgRetryAfter), 50)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for i := range list {
		rv := &list[i]
		if rv.Resolution == nil || rv.Resolution.Status != state.ChargeRefunding {
			continue
		}
		if err := r.finishRefund(ctx, rv); err != nil && !errors.Is(err, state.ErrChargeHasOrder) {
			errs = append(errs, fmt.Errorf("charge %s: %w", rv.ChargeID, err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// runChargeRefunds runs FinishChargeRefunds at start and every
// chgRetryEvery until ctx ends.
func (r *Books) runChargeRefunds(ctx context.Context) {
	if r.refunds == nil {
		return
	}
	t := time.NewTicker(chgRetryEvery)
	defer t.Stop()
	for {
		if n, err := r.FinishChargeRefunds(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("finish refunds of charges listed for review", "finished", n, "err", err)
		} else if n > 0 {
			r.log.Info("finished refunds of charges listed for review", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// runBoth runs fs until each returns.
func runBoth(ctx context.Context, fs ...func(context.Context)) {
	var wg sync.WaitGroup
	for _, f := range fs {
		wg.Go(func() { f(ctx) })
	}
	wg.Wait()
}
