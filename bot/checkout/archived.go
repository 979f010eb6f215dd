package checkout

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"

	"shopbot/state"
	"shopbot/state/redisstore/records"
)

// A store that came back empty and continues an earlier one (its
// lineage, state.Journal.Continues) finds in the Stars sweep every charge
// of the last SweepWindow without an order. The archive (state.Archive)
// holds each order that reached its end in the earlier stores (the shop
// stores them all again when the new store is first used; this catches
// the ones archived after that): a charge it shows delivered to the buyer
// who paid gets its order back, delivered, with its upstream order
// claimed, instead of a listing for review or a rebuild that would send
// the codes again. A Stars payment whose order this store itself lost
// (Redis restored from a backup, a failover that lost writes) and whose
// quote or update comes again before a replica noticed the loss is looked
// up in this store's own archived orders too (restoreLost,
// settleQuoteGone); a wallet order is not, since storing it again must
// take its debit again, which the restore after a loss does
// (storefront.restoreDelivered).

// archivedOrders is what the archive holds of the orders of a list of
// stores (the stores this one continues, with or without this one), by
// the list.
type archivedOrders struct {
	sync.Mutex
	sets map[string]*archivedSet
}

// archivedSet is the archive's orders of one list of stores, by charge,
// as far as its cursor read.
type archivedSet struct {
	cursor state.ArchiveCursor
	orders map[string]*state.Order
}

// archivedDelivered returns the order of charge (a Star charge's id, a
// wallet payment's ref) when the archive shows it delivered, in a store
// this one continues (or, with own, in this store too), to the buyer who
// paid it. The archive is read once, then what it gained since for a
// charge not found yet.
func (p *Checkout) archivedDelivered(charge string, user int64, own bool) (*state.Order, bool) {
	stores := p.journal.Continues()
	if own {
		stores = append([]int64{p.journal.Shop().Store}, stores...)
	}
	if len(stores) == 0 || p.Wallets == nil || p.Wallets.Archive == nil {
		return nil, false
	}
	a := &p.archived
	a.Lock()
	defer a.Unlock()
	key := fmt.Sprint(stores)
	set := a.sets[key]
	if set == nil {
		set = &archivedSet{orders: map[string]*state.Order{}}
		if a.sets == nil {
			a.sets = map[string]*archivedSet{}
		}
		a.sets[key] = set
	}
	o, ok := set.orders[charge]
	if !ok {
		entries, damaged, err := p.Wallets.Archive.ReadOn(stores, &set.cursor, false)
		if err != nil {
			p.log.Warn("read the archive's orders", "err", err)
			return nil, false
		}
		if damaged > 0 {
			p.log.Warn("damaged lines in the archive skipped", "lines", damaged)
		}
		maps.Copy(set.orders, state.Orders(entries))
		o, ok = set.orders[charge]
	}
	if !ok || o.UserID != user || o.Status != state.OrderDelivered {
		return nil, false
	}
	return o, true
}

// restoreArchived stores again the order of charge the archive shows
// delivered (archivedDelivered), and reports whether the charge is done
// so. An upstream order or quote another order of this store has by now
// is not taken from it: the charge is not done here (the caller lists it
// for review).
func (p *Checkout) restoreArchived(ctx context.Context, charge string, user int64, own bool) (bool, error) {
	o, ok := p.archivedDelivered(charge, user, own)
	if !ok {
		return false, nil
	}
	stored, conflict, err := StoreArchived(ctx, p.Orders, o, "delivered before (its archive)", p.log)
	if stored {
		p.log.Info("delivered order stored again from the archive", "charge", charge, "number", o.ID, "upstream", o.UpstreamNumber)
	}
	return err == nil && !conflict, err
}

// StoreArchived stores again an order the archive shows delivered
// (records.Orders.CreateFinished) and reports whether this call stored it,
// or whether it conflicts with an order of this store (its upstream order
// or its quote taken: logged, its charge goes to review). Any other error
// is logged and returned: the caller stops, and tries again later.
func StoreArchived(ctx context.Context, orders *records.Orders, o *state.Order, note string, log *slog.Logger) (stored, conflict bool, err error) {
	_, dup, err := orders.CreateFinished(ctx, o, note)
	switch {
	case errors.Is(err, state.ErrUpstreamClaimed), errors.Is(err, state.ErrQuoteAlreadyPaid):
		log.Error("an order the archive shows delivered conflicts with an order of this store; its charge goes to review", "charge", o.ChargeID, "upstream", o.UpstreamNumber, "err", err)
		return false, true, nil
	case err != nil:
		log.Error("store an archived order again", "charge", o.ChargeID, "err", err)
		return false, false, err
	}
	if !dup && o.Status == state.OrderDelivered && o.DeliveredAt.IsZero() {
		// It never reached its buyer (they had blocked the bot): their
		// /start hands it over.
		if err := orders.MarkUndelivered(ctx, o.UserID); err != nil {
			log.Warn("remember an undelivered order stored again", "charge", o.ChargeID, "err", err)
		}
	}
	return !dup, false, nil
}
