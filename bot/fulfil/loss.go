package fulfil

import (
	"context"
	"errors"
	"sync"
	"time"

	"shopbot/state"
)

// After Redis loses writes (a crash with AOF everysec, a failover to a
// replica that was behind, a restore from an older backup) the upstream
// may hold orders whose claims the loss took: created, perhaps delivered,
// and now nobody's in the store. For a fungible kind (gift cards: any order
// of the same card serves any identical purchase) the listing before a
// create would take the oldest such order for whichever identical purchase
// looks first, and its codes, delivered once to the buyer who paid for
// it, would be delivered again to another. So the canary's notice of a
// loss is recorded with the newest upstream number at that moment (the
// loss mark, records.Orders.NoteLoss), and an unclaimed upstream order at
// or below the mark is:
//   - never this order's when the order was paid after the loss was
//     noticed, by more than the clocks may be apart (its creates came
//     after the mark);
//   - this order's only when the journal names this order's charge as
//     the one whose create made it, or may have made it (an open attempt);
//   - otherwise a possible match: the order goes to review (after the
//     usual wait for the replica that made it to put it back), and the
//     admin decides whose it is.

// lossClockMargin is how much later than the loss was noticed an order
// must have been paid to be "paid after" it: the payment's date is
// Telegram's clock and the loss's ours, and the two may be apart.
const lossClockMargin = time.Minute

// errLossPending means this process noticed a loss of writes it could not
// yet record: nothing unclaimed can be sorted out until it has.
var errLossPending = errors.New("a loss of writes is not recorded yet")

// errLossNoticed means the store lost writes while unclaimed upstream
// orders were being sorted out: what was read may be what the loss left.
var errLossNoticed = errors.New("redis lost writes while reading claims; looking again")

// lossMark is the last loss of writes on record, read at most once a
// second, and whether this process noticed one it has not recorded yet.
type lossMark struct {
	sync.Mutex
	// noticed counts the losses this process noticed: a listing that
	// began before one and sorted out unclaimed orders after it read
	// claims from a store that may have lost them since (look's fence).
	noticed int64
	pending bool
	read    time.Time // when mark and at were read (zero: never)
	mark    int64
	at      time.Time
}

// noteLoss records a loss of writes this process noticed: the newest
// upstream number now is its mark. It reports whether it did; until it
// has, look refuses to sort out unclaimed orders (errLossPending), and the
// rollback watch tries again every second.
func (f *Fulfiller) noteLoss(ctx context.Context) bool {
	f.loss.Lock()
	f.loss.pending = true
	f.loss.Unlock()
	newest, err := f.newestOfType(ctx, "")
	if err != nil {
		f.log.Warn("read the newest upstream order after a loss of writes; trying again", "err", err)
		return false
	}
	// The hint quotes take their watermark from may be gone with the loss
	// (a store that came back empty has none): raised to what the
	// upstream holds now, a quote saved from here on looks above it.
	if err := f.orders.NoteUpstream(ctx, newest); err != nil {
		f.log.Warn("note the newest upstream order after a loss of writes", "err", err)
	}
	at := f.now().UTC() // after the listing: every order at or below newest was made before
	if err := f.orders.NoteLoss(ctx, newest, at); err != nil {
		f.log.Warn("record a loss of writes; trying again", "err", err)
		return false
	}
	// Not waited durable: a replica just promoted may have no replica of
	// its own yet, and a mark lost again comes with a loss noticed again.
	f.log.Warn("loss of writes recorded: unclaimed upstream orders up to the mark need the journal's word", "mark", newest)
	f.loss.Lock()
	f.loss.pending, f.loss.read = false, time.Time{}
	f.loss.Unlock()
	return true
}

// lossPending reports whether this process noticed a loss it has not
// recorded yet.
func (f *Fulfiller) lossPending() bool {
	f.loss.Lock()
	defer f.loss.Unlock()
	return f.loss.pending
}

// lossesNoticed is how many losses of writes this process has noticed.
func (f *Fulfiller) lossesNoticed() int64 {
	f.loss.Lock()
	defer f.loss.Unlock()
	return f.loss.noticed
}

// lastLoss returns the last loss of writes on record (mark 0: none), or
// errLossPending.
func (f *Fulfiller) lastLoss(ctx context.Context) (mark int64, at time.Time, err error) {
	f.loss.Lock()
	defer f.loss.Unlock()
	if f.loss.pending {
		return 0, time.Time{}, errLossPending
	}
	if now := f.now(); f.loss.read.IsZero() || now.Sub(f.loss.read) > time.Second {
		m, a, err := f.orders.Loss(ctx)
		if err != nil {
			return 0, time.Time{}, err
		}
		f.loss.mark, f.loss.at, f.loss.read = m, a, now
	}
	return f.loss.mark, f.loss.at, nil
}

// journalNames reports whether the journal names the order's charge as
// the one whose create made upstream order n, or may have made it (an
// attempt of the charge still open that could have taken n; att is the
// listing's reading of the journal).
func (f *Fulfiller) journalNames(o *state.Order, n int64, att attempts) bool {
	if e, ok, err := f.journal.ByCharge(state.JournalCreated, o.ChargeID); err == nil && ok && e.Number == n {
		return true
	}
	return att.mine(o.ChargeID, n)
}
