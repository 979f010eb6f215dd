package console

import (
	"errors"
	"net/http"
	"strconv"
	"time"
	"unicode"

	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state"
)

// The Star charges listed for review: the chat's /charges (bot/books), read
// and resolved through the same calls (Books.ChargesPage, ResolveCharge),
// so a charge is refunded or settled once whichever of the chat, the
// console or another replica decides first, and audited by the books.

// chargesPerPage is how many charges a page of the console lists.
const chargesPerPage = 20

// chargeSum is a total of charges as the page shows it.
type chargeSum struct {
	N         int64  `json:"n"`
	Stars     int64  `json:"stars"`
	StarsText string `json:"stars_text"`
	USD       string `json:"usd"`
	USDText   string `json:"usd_text"`
}

func sumOf(lang locales.Lang, s state.ChargeSum) chargeSum {
	return chargeSum{N: s.N, Stars: s.Stars, StarsText: locales.Plain(locales.Stars(lang, s.Stars)),
		USD: s.USD.StringFixed(2), USDText: locales.Plain(locales.Money(lang, s.USD))}
}

// chargeRow is a charge waiting for review as the page lists it: the facts
// /charges shows of it.
type chargeRow struct {
	Charge    string    `json:"charge"`
	Buyer     int64     `json:"buyer"`
	Username  string    `json:"username,omitempty"`
	Stars     int64     `json:"stars"`
	StarsText string    `json:"stars_text"`
	USD       string    `json:"usd"`
	USDText   string    `json:"usd_text"`
	Paid      time.Time `json:"paid"`
	Reason    string    `json:"reason"` // state.ReviewBeforeStore, ...
	Why       string    `json:"why"`    // the reason in words
	Line      string    `json:"line,omitempty"`
	LineLabel string    `json:"line_label,omitempty"`
	Item      string    `json:"item,omitempty"` // the quote's item, while it is stored
}

// chargeActions are the actions on a charge, each its endpoint's last
// segment.
var chargeActions = []string{"refund", "settle"}

// charges is a page of the Star charges waiting for review (?page=, 1 is
// the first; past the last, the last), oldest first, with the totals
// waiting and refunding, and the actions the user may take on them.
func (c *Console) charges(q *request) (any, *apiError) {
	page := 1
	if s := q.r.URL.Query().Get("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return nil, bad("console.err.page")
		}
		page = n
	}
	p, err := c.d.Books.ChargesPage(q.r.Context(), page-1, chargesPerPage)
	if err != nil {
		c.log.Warn("console: charges for review", "err", err)
		return nil, internal()
	}
	lang := q.env.Lang
	rows := make([]chargeRow, 0, len(p.Charges))
	for _, ch := range p.Charges {
		row := chargeRow{Charge: ch.ChargeID, Buyer: ch.UserID, Username: ch.Username, Stars: ch.Stars,
			StarsText: locales.Plain(locales.Stars(lang, ch.Stars)), USD: ch.USD.StringFixed(2),
			USDText: locales.Plain(locales.Money(lang, ch.USD)), Paid: ch.PaidAt, Reason: ch.Reason,
			Why: locales.Plain(q.env.T(reasonKey(ch.Reason)))}
		if ch.Line != "" {
			row.Line, row.LineLabel, row.Item = ch.Line, lineLabel(q.env, ch.Line), locales.Clip(ch.ItemName, 80)
		}
		rows = append(rows, row)
	}
	actions := []string{}
	for _, a := range chargeActions {
		if a == "refund" && !c.d.Books.RefundsCharges() {
			continue
		}
		if c.d.Engine.ConsoleAllows("POST charges/{charge}/"+a, q.user) {
			actions = append(actions, a)
		}
	}
	return map[string]any{
		"waiting": sumOf(lang, p.Waiting), "refunding": sumOf(lang, p.Refunding),
		"page": p.Page + 1, "pages": p.Pages, "per_page": chargesPerPage,
		"charges": rows, "actions": actions, "hint": locales.Plain(q.env.T("chg.hint")),
	}, nil
}

// reasonKey is the locale key of why a charge is listed (/charges' words).
func reasonKey(reason string) string {
	if reason == state.ReviewBeforeStore {
		return "chg.reason.before_store"
	}
	return "chg.reason.quote_gone"
}

// validChargeID reports whether s may be a Telegram charge id: a short
// printable word.
func validChargeID(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

// refundCharge gives a charge back: /charges' "Refund", confirmed.
func (c *Console) refundCharge(q *request) (any, *apiError) {
	return c.resolveCharge(q, state.ChargeRefunding)
}

// settleCharge marks a charge settled (delivered or handled elsewhere; no
// money moves): /charges' "Settled", confirmed.
func (c *Console) settleCharge(q *request) (any, *apiError) {
	return c.resolveCharge(q, state.ChargeSettled)
}

// resolveCharge decides about a charge waiting for review as status says,
// through the chat's own call (Books.ResolveCharge): of any number of
// decisions at once, from the console, the chat or other replicas, one is
// recorded, only its caller refunds, and the books audit it. The decision
// that won is answered 200 with what came of it in words (a refund that
// did not go through yet is retried: done "refund_later"); a charge
// resolved before, by anyone, is answered 409 resolved_before with that
// resolution, one that has an order by now 409 has_order with the order
// (refunded from its page), one not listed 409 not_listed.
func (c *Console) resolveCharge(q *request, status string) (any, *apiError) {
	id := q.r.PathValue("charge")
	if !validChargeID(id) {
		return nil, bad("console.err.charge")
	}
	if status == state.ChargeRefunding && !c.d.Books.RefundsCharges() {
		return nil, conflict("unavailable", "console.err.no_stars_refunds")
	}
	ctx := q.r.Context()
	out, err := c.d.Books.ResolveCharge(ctx, q.actor, id, status)
	switch {
	case errors.Is(err, state.ErrNoChargeReview):
		return nil, conflict("not_listed", "chg.not_listed")
	case err != nil:
		c.log.Warn("console: resolve a charge for review", "charge", id, "err", err)
		return nil, internal()
	}
	text := c.d.Books.ChargeOutcomeText(q.env.Lang, out)
	switch word := out.Word(); word {
	case state.ChargeOutcomeOrder:
		e := &apiError{status: http.StatusConflict, Code: "has_order", Message: text}
		if o, err := c.d.Orders.Get(ctx, out.Order); err == nil {
			e.Order = o.Ref()
		}
		return nil, e
	case state.ChargeOutcomeBefore:
		return nil, &apiError{status: http.StatusConflict, Code: "resolved_before", Message: text}
	default:
		return map[string]any{"done": word, "message": text}, nil
	}
}

// chargesLive is the count of charges waiting for review, for the live
// poll of those who read the books (one read of the store).
func (c *Console) chargesLive(q *request, out map[string]any) *apiError {
	if !q.user.Can(flows.PermBooksRead) || c.d.Books == nil {
		return nil
	}
	n, err := c.d.Books.ChargesWaiting(q.r.Context())
	if err != nil {
		return internal()
	}
	out["charges"] = n
	return nil
}
