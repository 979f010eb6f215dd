//go:build linux

package main

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"shopbot/state/redisstore/records"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/botapitest"
	"shopbot/bot/botapitest/types"
	"shopbot/reseller/resellersim"
	"shopbot/state"
)

// The chaos run's outcome, read from the systems of record once every
// replica has stopped: the Star charges and refunds and the messages each
// buyer received (the fake Bot API), the upstream orders and balance (the
// simulator), our orders (Redis), and the purchases as the buyers made
// them. checkChaos turns it into figures and invariant failures.

// starCharge is one incoming Star payment and how many times it was
// refunded.
type starCharge struct {
	id      string
	user    int64
	amount  int64
	payload string
	refunds int
}

// starCharges reads the charges and refunds from the bot's Star
// transactions: a payment has a Source, a refund the same id and a Receiver.
func starCharges(txs []types.StarTransaction) []*starCharge {
	byID := map[string]*starCharge{}
	var out []*starCharge
	for _, tx := range txs {
		if tx.Source != nil && tx.Source.TransactionType == "invoice_payment" {
			c := &starCharge{id: tx.ID, amount: tx.Amount, payload: tx.Source.InvoicePayload}
			if tx.Source.User != nil {
				c.user = tx.Source.User.ID
			}
			byID[tx.ID] = c
			out = append(out, c)
		}
	}
	for _, tx := range txs {
		if tx.Receiver != nil {
			if c := byID[tx.ID]; c != nil {
				c.refunds++
			}
		}
	}
	return out
}

// sentText is one message (or edit) the bot sent to a chat.
type sentText struct {
	at   time.Time
	text string
}

// world is everything the checks read.
type world struct {
	purchases map[string]*purchase // by charge id
	buyers    map[int64]bool
	charges   []*starCharge
	orders    []*state.Order
	upstream  []resellersim.OrderSnapshot
	balance   decimal.Decimal
	sent      map[int64][]sentText          // by chat, in order
	reviews   map[string]state.ChargeReview // charges the sweep listed for admin review
	// restoredAt is when Redis was restarted on a backup older than the
	// journal window (zero: never). What the store held of the purchases
	// paid before it is gone, and the journal no longer has all of it: a
	// purchase of then that the shop cannot prove undelivered is held for
	// the admin's review (an order in needs_review, or a charge listed for
	// review), never bought again, refunded or delivered to another buyer.
	restoredAt time.Time
}

// heldAfterRestore reports whether p's charge may be held for review: Redis
// was restored on an old backup after the buyer paid.
func (w *world) heldAfterRestore(p *purchase) bool {
	return p != nil && !w.restoredAt.IsZero() && p.paidAt.Before(w.restoredAt)
}

func gather(ctx context.Context, fake *botapitest.Server, sim *resellersim.Sim, orders *records.Orders, reviews *records.ChargeReviews, sh *shoppers, restoredAt time.Time) (*world, error) {
	w := &world{purchases: map[string]*purchase{}, buyers: map[int64]bool{}, sent: map[int64][]sentText{},
		reviews: map[string]state.ChargeReview{}, restoredAt: restoredAt}
	list, err := reviews.List(ctx, 0, 1<<20)
	if err != nil {
		return nil, err
	}
	for _, rv := range list {
		w.reviews[rv.ChargeID] = rv
	}
	for _, p := range sh.all() {
		w.purchases[p.chargeID] = p
		w.buyers[p.buyer] = true
	}
	w.charges = starCharges(fake.StarTransactions())
	if w.orders, err = orders.List(ctx, 0, 1<<30, state.OrderFilter{}); err != nil {
		return nil, err
	}
	w.upstream = sim.Orders()
	w.balance = sim.Balance()
	for _, c := range fake.Calls() {
		if !c.OK() {
			continue
		}
		var text string
		switch c.Method {
		case "sendMessage", "editMessageText":
			text = c.String("text")
		case "sendDocument", "sendPhoto", "editMessageCaption":
			text = c.String("caption")
			for _, f := range c.Files {
				text += "\n" + string(f.Data)
			}
		default:
			continue
		}
		chat, err := strconv.ParseInt(c.String("chat_id"), 10, 64)
		if err != nil {
			continue
		}
		w.sent[chat] = append(w.sent[chat], sentText{at: c.At, text: text})
	}
	return w, nil
}

// runFigures are the run's own numbers: what was done to the shop.
type runFigures struct {
	seed                                     uint64
	replicas, buyers                         int
	load, settle                             time.Duration
	settled                                  bool
	kills, crashes, rollbacks                int
	restoredAt                               time.Time
	noRestore                                string // why the restore on an old backup did not happen
	rollbackNotes                            []string
	faults                                   map[string]int
	deliveries, dupDeliveries                int64
	failedDeliveries                         int64
	attempts, abandoned, declined, noInvoice int64
	payTimeouts                              int64
	stuckAt, declines                        map[string]int
	violations                               int
}

// report is the outcome in figures, with the failures of each invariant.
type report struct {
	run runFigures

	purchases, charges                        int
	delivered, refunded, needsReview, stuck   int
	held, heldUnowned, heldCodes              int // held for review after a restore on an old backup
	heldCharged                               decimal.Decimal
	lost, deliveredAndRefunded, doubleRefunds int
	refundedNoMoney, ordersPerCharge          int
	deliveredUntold                           int
	upstreamOrders, unowned, multiClaimed     int
	wrongOwner, duplicates, unownedCards      int
	orphans                                   int
	claimsMissing                             int
	codesReceived, codesWrongBuyer            int
	codesMissing, unknownCodes, topupsWrong   int
	balanceMoved, deliveredCharged            decimal.Decimal
	completedCharged                          decimal.Decimal
	p50, p99, pmax                            time.Duration
	timed, deliveredNoMessage                 int
	p99Max                                    time.Duration

	fails map[string][]string // invariant -> examples
}

func (r *report) fail(invariant, format string, args ...any) {
	if r.fails == nil {
		r.fails = map[string][]string{}
	}
	r.fails[invariant] = append(r.fails[invariant], fmt.Sprintf(format, args...))
}

// The invariants: what a shop owner and the buyers must be able to count on.
const (
	invOutcome  = "every paid charge ends delivered or refunded exactly once"
	invOwners   = "upstream orders created == orders claimed by exactly one purchase (its own)"
	invStuck    = "0 stuck at the end"
	invBalance  = "the upstream balance moved by exactly the delivered orders' charged_usd"
	invOwnCodes = "every buyer got their own codes (and top-ups for their own player id)"
	invLatency  = "payment-to-delivery p99 under the bound"
)

var (
	// chaosCodeRe matches the simulator's gift-card codes and game keys.
	chaosCodeRe = regexp.MustCompile(`\b[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}\b|\b[A-Z2-9]{5}-[A-Z2-9]{5}-[A-Z2-9]{5}\b`)
	// chaosDoneRe matches the delivery message of an order.
	chaosDoneRe = regexp.MustCompile(`Order #(\d+) is (?:ready|delivered)`)
)

func checkChaos(w *world, startBalance decimal.Decimal, p99Max time.Duration) *report {
	r := &report{purchases: len(w.purchases), charges: len(w.charges), p99Max: p99Max}

	byCharge := map[string][]*state.Order{}
	claims := map[int64][]*state.Order{}
	for _, o := range w.orders {
		byCharge[o.ChargeID] = append(byCharge[o.ChargeID], o)
		if o.UpstreamNumber > 0 {
			claims[o.UpstreamNumber] = append(claims[o.UpstreamNumber], o)
		}
	}
	upByNum := map[int64]*resellersim.OrderSnapshot{}
	for i := range w.upstream {
		upByNum[int64(w.upstream[i].Number)] = &w.upstream[i]
	}

	// 1. Every paid charge ends delivered or refunded, exactly once.
	chargeIDs := map[string]bool{}
	chargeByID := map[string]*starCharge{}
	for _, c := range w.charges {
		chargeIDs[c.id] = true
		chargeByID[c.id] = c
		os := byCharge[c.id]
		if len(os) > 1 {
			r.ordersPerCharge++
			r.fail(invOutcome, "charge %s has %d orders", c.id, len(os))
		}
		var delivered bool
		var o *state.Order
		for _, x := range os {
			o = x
			if x.Status == state.OrderDelivered {
				delivered = true
			}
		}
		if c.refunds > 1 {
			r.doubleRefunds++
			r.fail(invOutcome, "charge %s refunded %d times", c.id, c.refunds)
		}
		switch {
		case delivered && c.refunds == 0:
			r.delivered++
		case delivered:
			r.deliveredAndRefunded++
			r.fail(invOutcome, "charge %s (order #%d) delivered and refunded", c.id, o.ID)
		case c.refunds == 1:
			r.refunded++
			if o != nil && o.Status != state.OrderRefunded {
				r.fail(invOutcome, "charge %s refunded but its order #%d is %s", c.id, o.ID, o.Status)
			}
		case o == nil && w.reviews[c.id].ChargeID != "" && w.heldAfterRestore(w.purchases[c.id]):
			r.held++
		case o == nil:
			r.lost++
			if rv, ok := w.reviews[c.id]; ok {
				r.fail(invOutcome, "charge %s (buyer %d) was listed for review (%s) though nothing it needs was lost", c.id, c.user, rv.Reason)
			} else {
				r.fail(invOutcome, "charge %s (buyer %d) has no order and no refund: the payment is lost", c.id, c.user)
			}
		case o.Status == state.OrderNeedsReview && w.heldAfterRestore(w.purchases[c.id]):
			r.held++
		case o.Status == state.OrderRefunded:
			r.refundedNoMoney++
			r.fail(invOutcome, "order #%d is refunded but charge %s was never refunded", o.ID, c.id)
		default:
			r.fail(invOutcome, "charge %s: order #%d ended %s (%s), neither delivered nor refunded", c.id, o.ID, o.Status, o.Reason)
		}
	}
	for _, o := range w.orders {
		if !chargeIDs[o.ChargeID] {
			r.fail(invOutcome, "order #%d has charge %q, which Telegram never took", o.ID, o.ChargeID)
		}
	}

	// 2. Nothing stuck.
	for _, o := range w.orders {
		switch {
		case o.Status == state.OrderNeedsReview && w.heldAfterRestore(w.purchases[o.ChargeID]):
			r.needsReview++ // counted as held above
		case o.Status == state.OrderNeedsReview:
			r.needsReview++
			r.fail(invStuck, "order #%d needs_review: %s", o.ID, o.Reason)
		case !state.Terminal(o.Status):
			r.stuck++
			r.fail(invStuck, "order #%d still %s", o.ID, o.Status)
		case o.Status == state.OrderDelivered && o.DeliveredAt.IsZero():
			r.deliveredUntold++
			r.fail(invStuck, "order #%d delivered but never handed to the buyer", o.ID)
		}
	}

	// 3. Every upstream order is claimed by exactly one purchase, its own.
	r.upstreamOrders = len(w.upstream)
	byPlayer := map[string]*purchase{}
	heldCards := 0 // gift-card purchases held for review: each may own one unclaimed order
	for _, p := range w.purchases {
		if p.playerID != "" {
			byPlayer[p.playerID] = p
		}
		if p.line == "giftcards" && w.heldAfterRestore(p) && held(w, byCharge, p.chargeID) {
			heldCards++
		}
	}
	for i := range w.upstream {
		u := &w.upstream[i]
		cl := claims[int64(u.Number)]
		switch {
		case len(cl) == 0 && u.Status == resellersim.OrderFailed && refundedAfterRestore(w, byCharge, chargeByID, byPlayer[u.Fields["player_id"]]):
			// A failed upstream order bought nothing; its purchase, whose
			// order the restore took, was refunded once.
			r.heldUnowned++
		case len(cl) == 0 && heldOwner(w, byCharge, byPlayer, u, &heldCards):
			r.heldUnowned++
			if u.Status == resellersim.OrderCompleted {
				r.heldCharged = r.heldCharged.Add(u.ChargedUSD)
			}
		case len(cl) == 0:
			r.unowned++
			// A top-up tells its purchase by the player id (unique per
			// purchase); gift-card orders of the same card and quantity
			// look the same whoever bought them.
			what := "gift card: whose, cannot tell"
			if p := byPlayer[u.Fields["player_id"]]; u.Type == resellersim.LineGameTopup && p != nil {
				served := false
				for _, o := range byCharge[p.chargeID] {
					if o.UpstreamNumber != 0 && o.UpstreamNumber != int64(u.Number) {
						served = true
					}
				}
				if served {
					r.duplicates++
					what = fmt.Sprintf("a duplicate of buyer %d's top-up, served by another upstream order", p.buyer)
				} else {
					r.orphans++
					st := "no order"
					if os := byCharge[p.chargeID]; len(os) > 0 {
						st = "order #" + strconv.FormatInt(os[0].ID, 10) + " " + os[0].Status
					}
					if c := chargeByID[p.chargeID]; c != nil && c.refunds > 0 {
						st += ", charge refunded"
					}
					what = fmt.Sprintf("buyer %d's top-up, whose purchase does not claim it: %s", p.buyer, st)
				}
			} else {
				r.unownedCards++
			}
			r.fail(invOwners, "upstream order %d (%s %s%s, %s, %s USD) is claimed by no order (%s)", u.Number, u.Type, u.CardName, u.OfferName, u.Status, u.ChargedUSD.StringFixed(2), what)
		case len(cl) > 1:
			r.multiClaimed++
			r.fail(invOwners, "upstream order %d is claimed by %d orders", u.Number, len(cl))
		default:
			o := cl[0]
			if p := w.purchases[o.ChargeID]; p == nil {
				r.fail(invOwners, "upstream order %d is claimed by order #%d of an unknown charge", u.Number, o.ID)
			} else if why := mismatch(u, p); why != "" {
				r.wrongOwner++
				r.fail(invOwners, "order #%d of buyer %d claims upstream order %d, which is not its purchase: %s", o.ID, p.buyer, u.Number, why)
			}
		}
	}
	for num, cl := range claims {
		if upByNum[num] == nil {
			r.claimsMissing++
			r.fail(invOwners, "order #%d claims upstream order %d, which does not exist", cl[0].ID, num)
		}
	}

	// 4. The upstream balance moved by the delivered orders' charge.
	r.balanceMoved = startBalance.Sub(w.balance)
	r.deliveredCharged, r.completedCharged = decimal.Zero, decimal.Zero
	for _, o := range w.orders {
		if o.Status == state.OrderDelivered {
			r.deliveredCharged = r.deliveredCharged.Add(o.ChargedUSD)
		}
	}
	for _, u := range w.upstream {
		if u.Status == resellersim.OrderCompleted {
			r.completedCharged = r.completedCharged.Add(u.ChargedUSD)
		}
	}
	if !r.balanceMoved.Equal(r.deliveredCharged.Add(r.heldCharged)) {
		r.fail(invBalance, "the upstream balance moved by %s USD, the delivered orders' charged_usd is %s USD and the held ones' %s USD (difference %s USD)",
			r.balanceMoved.StringFixed(2), r.deliveredCharged.StringFixed(2), r.heldCharged.StringFixed(2), r.balanceMoved.Sub(r.deliveredCharged).Sub(r.heldCharged).StringFixed(2))
	}

	// 5. Every buyer got their own codes, and top-ups for their own player.
	codeOwner := map[string]int64{}
	for _, u := range w.upstream {
		for _, c := range u.Codes {
			codeOwner[c] = int64(u.Number)
		}
		for _, k := range u.Keys {
			codeOwner[k.Key] = int64(u.Number)
		}
	}
	received := map[int64]map[string]bool{}
	for _, buyer := range slices.Sorted(maps.Keys(w.buyers)) {
		got := map[string]bool{}
		first := map[string]time.Time{} // when the buyer first got each code
		for _, m := range w.sent[buyer] {
			for _, code := range chaosCodeRe.FindAllString(m.text, -1) {
				if !got[code] {
					first[code] = m.at
				}
				got[code] = true
			}
		}
		received[buyer] = got
		for _, code := range slices.Sorted(maps.Keys(got)) {
			r.codesReceived++
			num, ok := codeOwner[code]
			if !ok {
				r.unknownCodes++
				r.fail(invOwnCodes, "buyer %d received %s, a code of no upstream order", buyer, code)
				continue
			}
			cl := claims[num]
			if len(cl) == 0 && !w.restoredAt.IsZero() && first[code].Before(w.restoredAt) && buyerHeld(w, byCharge, buyer) {
				// Delivered before the restore took the order's record;
				// the buyer's charge is held for review.
				r.heldCodes++
				continue
			}
			if len(cl) != 1 || cl[0].UserID != buyer {
				r.codesWrongBuyer++
				owner := "nobody"
				if len(cl) > 0 {
					owner = fmt.Sprintf("buyer %d's order #%d", cl[0].UserID, cl[0].ID)
				}
				r.fail(invOwnCodes, "buyer %d received a code of upstream order %d, claimed by %s", buyer, num, owner)
			}
		}
	}
	for _, o := range w.orders {
		if o.Status != state.OrderDelivered {
			continue
		}
		u := upByNum[o.UpstreamNumber]
		p := w.purchases[o.ChargeID]
		if u == nil || p == nil {
			continue // reported above
		}
		switch u.Type {
		case resellersim.LineGiftCard:
			for _, c := range u.Codes {
				if !received[o.UserID][c] {
					r.codesMissing++
					r.fail(invOwnCodes, "buyer %d never received a code of their delivered order #%d (upstream %d)", o.UserID, o.ID, u.Number)
					break
				}
			}
		case resellersim.LineGameTopup:
			if u.Fields["player_id"] != p.playerID {
				r.topupsWrong++
				r.fail(invOwnCodes, "buyer %d was told order #%d is delivered, but upstream order %d topped up player %s, not their %s",
					o.UserID, o.ID, u.Number, u.Fields["player_id"], p.playerID)
			}
		}
	}

	// 6. Payment to delivery: from the buyer's payment to the delivery
	// message of the charge's order in their chat.
	var lat []time.Duration
	for _, c := range w.charges {
		p := w.purchases[c.id]
		if p == nil {
			continue
		}
		var o *state.Order
		for _, x := range byCharge[c.id] {
			if x.Status == state.OrderDelivered {
				o = x
			}
		}
		if o == nil {
			continue
		}
		found := false
		for _, m := range w.sent[p.buyer] {
			if m.at.Before(p.paidAt.Add(-time.Second)) {
				continue
			}
			if sm := chaosDoneRe.FindStringSubmatch(m.text); sm != nil && sm[1] == strconv.FormatInt(o.ID, 10) {
				lat = append(lat, max(m.at.Sub(p.paidAt), 0))
				found = true
				break
			}
		}
		if !found {
			r.deliveredNoMessage++
			r.fail(invOwnCodes, "order #%d of buyer %d is delivered, but no delivery message reached the buyer", o.ID, p.buyer)
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	r.timed = len(lat)
	if len(lat) > 0 {
		q := func(f float64) time.Duration {
			i := int(float64(len(lat))*f+0.999999) - 1
			return lat[min(max(i, 0), len(lat)-1)]
		}
		r.p50, r.p99, r.pmax = q(0.50), q(0.99), lat[len(lat)-1]
		if p99Max > 0 && r.p99 >= p99Max {
			r.fail(invLatency, "payment-to-delivery p99 is %s (bound %s; p50 %s, max %s)", r.p99.Round(100*time.Millisecond), p99Max, r.p50.Round(100*time.Millisecond), r.pmax.Round(100*time.Millisecond))
		}
	}
	return r
}

// mismatch says how the upstream order differs from the purchase ("" when
// it is the purchase's).
func mismatch(u *resellersim.OrderSnapshot, p *purchase) string {
	switch p.line {
	case "giftcards":
		if u.Type != resellersim.LineGiftCard || u.CardName != p.item || u.Quantity != p.qty {
			return fmt.Sprintf("upstream has %s %q x%d, the buyer paid for %q x%d", u.Type, u.CardName, u.Quantity, p.item, p.qty)
		}
	case "games":
		if u.Type != resellersim.LineGameTopup || u.OfferName != p.item || u.Fields["player_id"] != p.playerID {
			return fmt.Sprintf("upstream has %s %q for player %s, the buyer paid for %q for player %s", u.Type, u.OfferName, u.Fields["player_id"], p.item, p.playerID)
		}
	}
	return ""
}

// failures returns one message per failed invariant, with examples.
func (r *report) failures() []string {
	var out []string
	for _, inv := range []string{invOutcome, invOwners, invStuck, invBalance, invOwnCodes, invLatency} {
		ex := r.fails[inv]
		if len(ex) == 0 {
			continue
		}
		shown := ex[:min(len(ex), 100)]
		more := ""
		if len(ex) > len(shown) {
			more = fmt.Sprintf("\n    ... and %d more", len(ex)-len(shown))
		}
		out = append(out, fmt.Sprintf("chaos invariant broken: %s (%d):\n    %s%s", inv, len(ex), strings.Join(shown, "\n    "), more))
	}
	return out
}

// short is the run's outcome in one line: enough to tell a shop that did
// not settle in time from one that settled wrong.
func (r *report) short() string {
	f := r.run
	broken := []string{}
	for _, inv := range []string{invOutcome, invOwners, invStuck, invBalance, invOwnCodes, invLatency} {
		if n := len(r.fails[inv]); n > 0 {
			broken = append(broken, fmt.Sprintf("%q %d", inv, n))
		}
	}
	restored := "no restore"
	if f.noRestore != "" {
		restored += " (" + f.noRestore + ")"
	}
	if !f.restoredAt.IsZero() {
		restored = "restored at " + f.restoredAt.UTC().Format("15:04:05.000")
	}
	return fmt.Sprintf("load %s, settle %s (settled: %v); %s; %d paid, %d delivered, %d refunded, %d needs_review, %d stuck, %d held, %d lost; %d codes of another buyer or nobody; broken: %s",
		f.load.Round(100*time.Millisecond), f.settle.Round(100*time.Millisecond), f.settled, restored,
		r.charges, r.delivered, r.refunded, r.needsReview, r.stuck, r.held, r.lost, r.codesWrongBuyer, strings.Join(broken, ", "))
}

// String prints the figures.
func (r *report) String() string {
	var b strings.Builder
	ms := func(d time.Duration) string { return d.Round(100 * time.Millisecond).String() }
	f := r.run
	fmt.Fprintf(&b, "  run: seed %d, %d replicas, %d buyers; load %s, settle %s (settled: %v)\n", f.seed, f.replicas, f.buyers, ms(f.load), ms(f.settle), f.settled)
	fmt.Fprintf(&b, "  faults: %d kill -9 (+%d exits on their own), %d Redis rollbacks, %d duplicated webhook deliveries (of %d; %d failed attempts retried)\n",
		f.kills, f.crashes, f.rollbacks, f.dupDeliveries, f.deliveries, f.failedDeliveries)
	for _, k := range slices.Sorted(maps.Keys(f.faults)) {
		label := "upstream fault armed: "
		if strings.HasPrefix(k, "redis ") {
			label = "Redis fault:           "
		}
		fmt.Fprintf(&b, "    %s%-48s %d\n", label, k, f.faults[k])
	}
	for _, n := range f.rollbackNotes {
		fmt.Fprintf(&b, "    %s\n", n)
	}
	fmt.Fprintf(&b, "  buyers: %d purchase attempts, %d paid, %d abandoned before paying (%d: Pay said the invoice was in the chat, none was), %d declined at pre-checkout, %d pre-checkouts unanswered in 10 s\n",
		f.attempts, r.purchases, f.abandoned, f.noInvoice, f.declined, f.payTimeouts)
	for _, k := range slices.Sorted(maps.Keys(f.stuckAt)) {
		fmt.Fprintf(&b, "    abandoned: %-44s %d\n", k, f.stuckAt[k])
	}
	for _, k := range slices.Sorted(maps.Keys(f.declines)) {
		fmt.Fprintf(&b, "    declined: %-45q %d\n", k, f.declines[k])
	}
	fmt.Fprintf(&b, "  purchases (paid charges): %d\n", r.charges)
	fmt.Fprintf(&b, "    delivered %d, refunded %d, needs_review %d, stuck (unfinished) %d, delivered-not-told %d\n", r.delivered, r.refunded, r.needsReview, r.stuck, r.deliveredUntold)
	if !r.run.restoredAt.IsZero() {
		fmt.Fprintf(&b, "    held for the admin's review after the restore on an old backup: %d purchases (their upstream orders: %d, %s USD; codes they got before it: %d)\n",
			r.held, r.heldUnowned, r.heldCharged.StringFixed(2), r.heldCodes)
	}
	fmt.Fprintf(&b, "    lost (no order, no refund) %d, delivered AND refunded %d, refunded twice %d, marked refunded without a refund %d, charges with several orders %d\n",
		r.lost, r.deliveredAndRefunded, r.doubleRefunds, r.refundedNoMoney, r.ordersPerCharge)
	fmt.Fprintf(&b, "  upstream orders: %d; unowned %d, claimed by several %d, claimed by the wrong purchase %d, claims of missing orders %d\n",
		r.upstreamOrders, r.unowned, r.multiClaimed, r.wrongOwner, r.claimsMissing)
	fmt.Fprintf(&b, "    unowned: %d duplicate top-ups (the purchase was served by another upstream order), %d orphan top-ups (the purchase was not), %d gift cards (duplicate or orphan: cannot tell)\n",
		r.duplicates, r.orphans, r.unownedCards)
	fmt.Fprintf(&b, "  balance: moved %s USD; delivered orders' charged_usd %s USD; completed upstream orders %s USD\n",
		r.balanceMoved.StringFixed(2), r.deliveredCharged.StringFixed(2), r.completedCharged.StringFixed(2))
	fmt.Fprintf(&b, "  codes: %d received; of another buyer's order %d, of no order %d; delivered gift-card orders missing codes %d; top-ups delivered to another player %d; delivered without a message %d\n",
		r.codesReceived, r.codesWrongBuyer, r.unknownCodes, r.codesMissing, r.topupsWrong, r.deliveredNoMessage)
	bound := "bound " + r.p99Max.String()
	if r.p99Max <= 0 {
		bound = "reported, not asserted: CHAOS_P99_MAX=report"
	}
	fmt.Fprintf(&b, "  payment-to-delivery (%d delivered): p50 %s, p99 %s, max %s (%s)\n", r.timed, ms(r.p50), ms(r.p99), ms(r.pmax), bound)
	if f.violations > 0 {
		fmt.Fprintf(&b, "  Bot API schema violations: %d\n", f.violations)
	}
	if len(r.fails) == 0 {
		b.WriteString("  invariants: all hold\n")
	} else {
		for _, inv := range []string{invOutcome, invOwners, invStuck, invBalance, invOwnCodes, invLatency} {
			st := "holds"
			if n := len(r.fails[inv]); n > 0 {
				st = fmt.Sprintf("BROKEN (%d)", n)
			}
			fmt.Fprintf(&b, "  invariant: %-76s %s\n", inv, st)
		}
	}
	return b.String()
}

func (sh *shoppers) stuckAtCopy() map[string]int {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return maps.Clone(sh.stuckAt)
}

func (sh *shoppers) declinesCopy() map[string]int {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return maps.Clone(sh.declines)
}

// held reports whether the charge is held for review: an order of it in
// needs_review, or no order and a review entry.
func held(w *world, byCharge map[string][]*state.Order, charge string) bool {
	os := byCharge[charge]
	if len(os) == 0 {
		return w.reviews[charge].ChargeID != ""
	}
	for _, o := range os {
		if o.Status == state.OrderNeedsReview {
			return true
		}
	}
	return false
}

// buyerHeld reports whether one of the buyer's charges is held for review
// after the restore.
func buyerHeld(w *world, byCharge map[string][]*state.Order, buyer int64) bool {
	for _, p := range w.purchases {
		if p.buyer == buyer && w.heldAfterRestore(p) && held(w, byCharge, p.chargeID) {
			return true
		}
	}
	return false
}

// heldOwner reports whether an upstream order no order claims belongs to a
// purchase held for review after the restore: a top-up to the player of
// such a purchase, or a gift card while held gift-card purchases remain
// (each accounts for one; whose, the admin's review tells).
func heldOwner(w *world, byCharge map[string][]*state.Order, byPlayer map[string]*purchase, u *resellersim.OrderSnapshot, heldCards *int) bool {
	if w.restoredAt.IsZero() {
		return false
	}
	if u.Type == resellersim.LineGameTopup {
		p := byPlayer[u.Fields["player_id"]]
		return w.heldAfterRestore(p) && held(w, byCharge, p.chargeID)
	}
	if *heldCards > 0 {
		*heldCards--
		return true
	}
	return false
}

// refundedAfterRestore reports whether p's purchase, paid before the
// restore on an old backup, was refunded once and has no order that claims
// an upstream order: none (the restore took it), or one the sweep settled
// as refunded from Telegram's list after the restore took its refund and
// its claim of the failed upstream order.
func refundedAfterRestore(w *world, byCharge map[string][]*state.Order, charges map[string]*starCharge, p *purchase) bool {
	if !w.heldAfterRestore(p) {
		return false
	}
	for _, o := range byCharge[p.chargeID] {
		if o.Status != state.OrderRefunded || o.UpstreamNumber != 0 {
			return false
		}
	}
	c := charges[p.chargeID]
	return c != nil && c.refunds == 1
}
