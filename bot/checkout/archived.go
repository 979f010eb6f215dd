package checkout

import (
	"context"
	"errors"
	"sync"
	"time"

	"shopbot/state"
)

// A store that came back empty and continues an earlier one (its
// lineage, state.Journal.Continues) finds in the Stars sweep every charge
// of the last SweepWindow without an order. The archive (state.Archive)
// holds each order that reached its end in the earlier stores (the shop
// stores them all again when the new store is first used; this catches
// the ones archived after that): a charge it shows delivered to the buyer
// who paid gets its order back, delivered, with its upstream order
// claimed, instead of a listing for review or a rebuild that would send
// the codes again.

// archivedEvery is how long the archive's orders are kept in memory before
// they are read again (a replica still bound to the earlier store may
// archive an order it finishes).
const archivedEvery = 10 * time.Minute

// archivedOrders is the archive's orders of the stores this one continues.
type archivedOrders struct {
	sync.Mutex
	of     int64 // the newest store of the lineage they were read for
	read   time.Time
	orders map[string]*state.Order
}

// archivedDelivered returns the order of charge (a Star charge's id, a
// wallet payment's ref) when the archive shows it delivered, in a store
// this one continues, to the buyer who paid it.
func (p *Checkout) archivedDelivered(charge string, user int64) (*state.Order, bool) {
	from := p.journal.Continues()
	if len(from) == 0 || p.Wallets == nil || p.Wallets.Archive == nil {
		return nil, false
	}
	a := &p.archived
	a.Lock()
	defer a.Unlock()
	if a.orders == nil || a.of != from[0] || p.now().Sub(a.read) > archivedEvery {
		entries, damaged, err := p.Wallets.Archive.Read(from)
		if err != nil {
			p.log.Warn("read the archive's orders", "err", err)
			return nil, false
		}
		a.orders, a.of, a.read = state.Orders(entries), from[0], p.now()
		p.log.Info("read the archive of the stores this one continues", "orders", len(a.orders), "damaged_lines", damaged)
	}
	o, ok := a.orders[charge]
	if !ok || o.UserID != user || o.Status != state.OrderDelivered {
		return nil, false
	}
	return o, true
}

// restoreArchived stores again the order of charge the archive shows
// delivered (archivedDelivered), and reports whether the charge is done
// so. An upstream order another order of this store claims by now is not
// taken from it: the charge is not done here (the caller lists it for
// review), and the conflict is logged.
func (p *Checkout) restoreArchived(ctx context.Context, charge string, user int64) (bool, error) {
	o, ok := p.archivedDelivered(charge, user)
	if !ok {
		return false, nil
	}
	got, dup, err := p.Orders.CreateFinished(ctx, o, "delivered in the store this one continues (its archive)")
	switch {
	case errors.Is(err, state.ErrUpstreamClaimed):
		p.log.Error("archived delivered order's upstream order is claimed by another order of this store; the charge goes to review", "charge", charge, "upstream", o.UpstreamNumber, "err", err)
		return false, nil
	case errors.Is(err, state.ErrQuoteAlreadyPaid):
		p.log.Error("archived delivered order's quote is paid by another order of this store; the charge goes to review", "charge", charge, "err", err)
		return false, nil
	case err != nil:
		return false, err
	}
	if !dup {
		p.log.Info("order delivered in the store this one continues stored again from its archive", "charge", charge, "order", got.ID, "was", o.ID, "upstream", o.UpstreamNumber)
	}
	return true, nil
}
