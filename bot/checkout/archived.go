package checkout

import (
	"sync"
	"time"

	"shopbot/state"
)

// A store that came back empty and continues an earlier one (its
// lineage, state.Journal.Continues) finds in the Stars sweep every charge
// of the last SweepWindow without an order. The archive (state.Archive)
// holds each order that reached its end in the earlier stores: a charge it
// shows delivered to the buyer who paid is done, not listed for review.

// archivedEvery is how long the archive's orders are kept in memory before
// they are read again (a replica still bound to the earlier store may
// archive an order it finishes).
const archivedEvery = 10 * time.Minute

// archivedOrders is the archive's orders of the stores this one continues.
type archivedOrders struct {
	sync.Mutex
	of     int64 // the newest store of the lineage they were read for
	read   time.Time
	orders map[string]state.ArchivedOrder
	told   map[string]bool // charges logged as settled by the archive
}

// archivedDelivered reports whether the archive shows the order of charge
// (a Star charge's id, a wallet payment's ref) delivered, in a store this
// one continues, to the buyer who paid it.
func (p *Checkout) archivedDelivered(charge string, user int64) bool {
	from := p.journal.Continues()
	if len(from) == 0 || p.Wallets == nil || p.Wallets.Archive == nil {
		return false
	}
	a := &p.archived
	a.Lock()
	defer a.Unlock()
	if a.orders == nil || a.of != from[0] || p.now().Sub(a.read) > archivedEvery {
		entries, damaged, err := p.Wallets.Archive.Read(from)
		if err != nil {
			p.log.Warn("read the archive's orders", "err", err)
			return false
		}
		a.orders, a.of, a.read = state.Orders(entries), from[0], p.now()
		if a.told == nil {
			a.told = map[string]bool{}
		}
		p.log.Info("read the archive of the stores this one continues", "orders", len(a.orders), "damaged_lines", damaged)
	}
	o, ok := a.orders[charge]
	if !ok || o.User != user || o.Status != state.OrderDelivered {
		return false
	}
	if !a.told[charge] {
		a.told[charge] = true
		p.log.Info("payment delivered in the store this one continues (archive): done", "charge", charge, "order", o.ID, "upstream", o.Upstream, "method", o.PayMethod)
	}
	return true
}
