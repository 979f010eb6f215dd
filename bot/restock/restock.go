// Package restock tells buyers when a sold-out item is back: a buyer who
// pressed "tell me when back" on a sold-out gift card or game key
// (flows/lines, through bot/catalog.Restock) gets one message when the
// catalog shows it in stock again, then the watch ends.
//
// Every replica checks the watched items every Every, reading them
// through the cached catalog the product lines browse (so a check costs
// what the catalog's refresh costs, and an item is seen back as the
// catalog refreshes). The watchers of an item back in stock are taken in
// one script (records.Restock.Take): however many replicas see it at
// once, each watcher is told once.
package restock

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state/redisstore/records"
)

// Options configure the checks.
type Options struct {
	// Catalog is the catalog the product lines browse; nil: nobody can
	// watch an item, and nothing is checked.
	Catalog flows.Catalog
	// Every is how often the watched items are checked; default a minute.
	Every time.Duration
	// Batch bounds the items one check looks at (the longest watched
	// first); default 200.
	Batch int
}

// Telegram is what the feature needs of the Bot API. Errors wrap
// flows.ErrBlocked when the buyer blocked the bot.
type Telegram interface {
	Send(ctx context.Context, chat int64, text string, rows [][]flows.Button) (int, error)
}

// Deps are the stores and services the feature uses.
type Deps struct {
	Telegram Telegram
	Store    *records.Restock
	// BotName is the bot's username (getMe at start), for the button that
	// opens the item.
	BotName func() string
	Lang    locales.Lang // the language of a watch without one
	Log     *slog.Logger
	Now     func() time.Time
}

// Restock is the feature.
type Restock struct {
	o Options
	d Deps
}

// New returns the feature; Enabled says whether it does anything.
func New(o Options, d Deps) *Restock {
	if o.Every <= 0 {
		o.Every = time.Minute
	}
	if o.Batch <= 0 {
		o.Batch = 200
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Restock{o: o, d: d}
}

// Enabled reports whether there is a catalog to check.
func (r *Restock) Enabled() bool { return r != nil && r.o.Catalog != nil }

// Run checks the watched items every Every until ctx ends.
func (r *Restock) Run(ctx context.Context) {
	t := time.NewTicker(r.o.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := r.Check(ctx); err != nil && ctx.Err() == nil {
			r.d.Log.Warn("check the watched items", "err", err)
		}
	}
}

// Check looks at the watched items once and tells the watchers of those
// back in stock; it returns how many were told. An item gone from the
// catalog is forgotten with its watchers; one the catalog cannot show now
// waits for the next check.
func (r *Restock) Check(ctx context.Context) (int, error) {
	items, err := r.d.Store.Items(ctx, r.o.Batch)
	if err != nil {
		return 0, err
	}
	told := 0
	for _, it := range items {
		back, gone, err := r.inStock(ctx, it)
		switch {
		case err != nil:
			r.d.Log.Debug("watched item not checked", "item", it.Key(), "err", err)
			continue
		case gone:
			if err := r.d.Store.Drop(ctx, it); err != nil {
				return told, err
			}
			r.d.Log.Info("watched item gone from the catalog: its watches end", "item", it.Key())
			continue
		case !back:
			continue
		}
		ws, err := r.d.Store.Take(ctx, it)
		if err != nil {
			return told, err
		}
		for _, w := range ws {
			if r.tell(ctx, it, w) {
				told++
			}
		}
	}
	return told, nil
}

// inStock reports whether the catalog shows the item in stock, or gone.
func (r *Restock) inStock(ctx context.Context, it records.RestockItem) (back, gone bool, err error) {
	var load func(context.Context, string) (*flows.Offers, bool, error)
	switch it.Line {
	case "giftcards":
		load = r.o.Catalog.GiftCardOffers
	case "keys":
		load = r.o.Catalog.GameKeyOffers
	default:
		return false, true, nil
	}
	offers, _, err := load(ctx, it.Category)
	if errors.Is(err, flows.ErrNotFound) {
		return false, true, nil
	}
	if err != nil {
		return false, false, err
	}
	o, ok := offers.Offer(it.Item)
	if !ok {
		return false, true, nil
	}
	return o.Stock >= max(o.MinQuantity, 1), false, nil
}

// tell sends one watcher the news with a button that opens the item's
// category in the shop; it reports whether the message went. A message
// that does not go is not tried again: the watch has ended.
func (r *Restock) tell(ctx context.Context, it records.RestockItem, w records.Watcher) bool {
	lang, ok := locales.Parse(w.Lang)
	if !ok {
		lang = r.d.Lang
	}
	text := locales.T(lang, "restock.back", "item", locales.Escape(locales.Clip(w.Name, 120)))
	var rows [][]flows.Button
	if name := r.d.BotName(); name != "" {
		link := "https://t.me/" + name + "?start=" + flows.ProductLink(it.Line, it.Category)
		rows = [][]flows.Button{{{Text: locales.T(lang, "restock.open"), URL: link}}}
	}
	if _, err := r.d.Telegram.Send(ctx, w.Chat, text, rows); err != nil {
		if !errors.Is(err, flows.ErrBlocked) {
			r.d.Log.Warn("tell a watcher the item is back", "user", w.User, "item", it.Key(), "err", err)
		}
		return false
	}
	r.d.Log.Info("watcher told the item is back", "user", w.User, "item", it.Key())
	return true
}
