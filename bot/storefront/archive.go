package storefront

import (
	"context"
	"errors"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/checkout"
	"shopbot/state"
)

// The archive (state.Archive): every wallet movement is archived as it is
// made (records.Wallets.Archive); every wallet's balance once a day
// (archiveBalances); every order that reaches its end (archiveOrder); and
// a store that continues an earlier one (it came
// back empty, or the shop moved to a new Redis) gets the earlier store's
// wallets back once (restoreWallets), before the shop serves and again
// whenever a replica notices the store it served is gone.

// archiveEvery is how often every balance is archived (by one replica);
// archiveCheck how often each replica looks whether that is due.
const (
	archiveEvery = 20 * time.Hour
	archiveCheck = time.Hour
)

// restoreWallets puts back, once for the store, what the archive of the
// store this one continues holds: every wallet (each once, however many
// replicas do it at the same moment), and every order it shows delivered
// whose charge has no order here (stored again in its final status, its
// upstream order claimed, so no other purchase can take it and its buyer
// is not sent the codes again). Errors are logged: the next start, or the
// next loss, tries again.
func (s *Shop) restoreWallets(ctx context.Context) {
	from := s.opts.Journal.Continues()
	if len(from) == 0 || s.wallets.Archive == nil {
		return
	}
	log := s.opts.Logger
	if done, err := s.wallets.RestoredFrom(ctx, from[0]); err != nil || done {
		if err != nil {
			log.Warn("read whether the wallets were restored", "err", err)
		}
		return
	}
	entries, damaged, err := s.wallets.Archive.Read(from)
	if err != nil {
		log.Error("read the archive", "err", err)
		return
	}
	orders, conflicts := 0, 0
	archived := state.Orders(entries)
	s.keepNumbers(ctx, archived)
	for _, o := range archived {
		if o.Status != state.OrderDelivered {
			continue
		}
		stored, conflict, err := checkout.StoreArchived(ctx, s.orders, o, "delivered in the store this one continues (its archive)", s.opts.Logger)
		if err != nil {
			return
		}
		if stored {
			orders++
		}
		if conflict {
			conflicts++
		}
	}
	restored, total := 0, decimal.Zero
	for _, f := range state.Wallets(entries) {
		done, err := s.wallets.Restore(ctx, from[0], f)
		if err != nil {
			log.Error("restore a wallet from the archive", "user", f.User, "err", err)
			return
		}
		if done {
			restored++
			total = total.Add(f.Balance)
		}
	}
	if err := s.wallets.MarkRestored(ctx, from[0]); err != nil {
		log.Warn("record that the wallets were restored", "err", err)
	}
	log.Warn("the archive of the store this one continues restored",
		"from_store", from[0], "wallets", restored, "usd", total.StringFixed(2), "delivered_orders", orders, "conflicts", conflicts, "damaged_lines", damaged)
}

// archiveBalances archives every wallet's balance every archiveEvery, in
// one replica (the first to find it due), until ctx ends.
func (s *Shop) archiveBalances(ctx context.Context) {
	if s.wallets.Archive == nil {
		return
	}
	t := time.NewTicker(archiveCheck)
	defer t.Stop()
	for {
		s.archiveBalancesOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// archiveBalancesOnce archives every balance when no replica did for
// archiveEvery.
func (s *Shop) archiveBalancesOnce(ctx context.Context) {
	log := s.opts.Logger
	ok, err := s.wallets.ClaimBalancesRun(ctx, archiveEvery)
	if err != nil || !ok {
		return
	}
	list, err := s.wallets.ArchiveBalances(ctx)
	if err == nil {
		err = s.wallets.Archive.Append(list...)
	}
	if err != nil {
		log.Error("archive every wallet's balance", "err", err)
		_ = s.wallets.DropBalancesRun(context.WithoutCancel(ctx)) // the next check tries again
		return
	}
	log.Info("archived every wallet's balance", "wallets", len(list))
}

// archiveOrder archives an order that reached its end (delivered or
// refunded): a store that continues this one after it came back empty
// settles the order's charge from it instead of listing it for review.
func (s *Shop) archiveOrder(o *state.Order) {
	a := s.wallets.Archive
	if a == nil {
		return
	}
	undelivered := o.Status == state.OrderDelivered && o.DeliveredAt.IsZero() // the buyer had blocked the bot
	err := a.Append(state.ArchiveEntry{Kind: state.ArchiveOrder, User: o.UserID, Order: state.ArchivedOrder(o), Undelivered: undelivered})
	if err != nil {
		s.opts.Logger.Error("archive an order that reached its end", "order", o.ID, "err", err)
	}
}

// restoreDelivered stores again every order the archive (of this store
// and the stores it continues) shows delivered whose charge has no order
// in the store: after Redis lost writes (a crash, a failover, a restore
// from an older backup), before the Stars sweep looks at the charges, so
// a purchase delivered after the backup is back as delivered, its
// upstream order claimed, instead of being listed for review or bought
// again. Orders the store holds in an earlier state are left to the
// placement protocol (the journal, the upstream).
func (s *Shop) restoreDelivered(ctx context.Context) {
	a := s.wallets.Archive
	if a == nil {
		return
	}
	log := s.opts.Logger
	stores := append([]int64{s.opts.Journal.Shop().Store}, s.opts.Journal.Continues()...)
	entries, _, err := a.Read(stores)
	if err != nil {
		log.Error("read the archive after a loss", "err", err)
		return
	}
	n := 0
	archived := state.Orders(entries)
	s.keepNumbers(ctx, archived)
	for _, o := range archived {
		if o.Status != state.OrderDelivered {
			continue
		}
		if _, err := s.orders.ByCharge(ctx, o.ChargeID); err == nil || !errors.Is(err, state.ErrOrderNotFound) {
			continue // in the store (or it cannot be read now)
		}
		stored, _, err := checkout.StoreArchived(ctx, s.orders, o, "delivered before Redis lost it (its archive)", s.opts.Logger)
		if err != nil {
			return
		}
		if stored {
			n++
			if o.PayMethod == state.PayWallet {
				// Its debit may be lost with it: taken again, once by its
				// ref (a debit the store still holds is not taken twice).
				if _, err := s.wallets.Debit(ctx, o.UserID, o.ShopUSD, o.ChargeID, "order"); err != nil {
					log.Error("take again the wallet debit of an order stored again from the archive", "charge", o.ChargeID, "user", o.UserID, "err", err)
				}
			}
		}
	}
	if n > 0 {
		log.Warn("orders delivered before Redis lost them stored again from the archive", "orders", n)
	}
}

// keepNumbers makes the numbers of the archived orders ones no new order
// takes: their buyers were told them, and the orders stored again keep
// them (the journal keeps the newest numbers only for minutes:
// records.Orders.Floor).
func (s *Shop) keepNumbers(ctx context.Context, archived map[string]*state.Order) {
	var newest int64
	for _, o := range archived {
		newest = max(newest, o.ID)
	}
	if err := s.orders.KeepNumbers(ctx, newest); err != nil {
		s.opts.Logger.Warn("keep the archived orders' numbers", "err", err)
	}
}
