package admin

import (
	"context"
	"errors"
	"strconv"

	"shopbot/bot/fulfil"
	"shopbot/bot/upstreamorder"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state"
)

// maxMessageChars is the longest message Telegram takes.
const maxMessageChars = 4096

// ordersPerPage is how many orders a page of "My orders" shows.
const ordersPerPage = 5

// Global button actions of "My orders" (callback data "1:0:<action>:<arg>");
// the main menu's button, the first page, is flows.ActOrders.
const (
	actOrdersPage flows.Action = "ordp" // arg: page number
	actOrderView  flows.Action = "ord"  // arg: the order's Ref (state.Order.Ref)
)

// registerOrders adds /orders ("My orders").
func (ad *Admin) registerOrders(e *flows.Engine) {
	list := func(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
		page := 0
		if ev.Kind == flows.EvButton && ev.Button.Action == actOrdersPage {
			page, _ = strconv.Atoi(ev.Button.Arg)
		}
		return ad.ordersPage(ctx, env, ev.User.ID, page)
	}
	// /orders is the buyer's own list; staff who may read orders get the
	// shop-wide one instead (orders.go registers it with the gate). The
	// menu's "My orders" button stays the buyer's own list for everyone.
	e.HandleCommand("orders", list)
	ad.registerAdminOrders(e)
	e.HandleButton(flows.ActOrders, list)
	e.HandleButton(actOrdersPage, list)
	e.HandleButton(actOrderView, func(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
		return ad.orderView(ctx, env, ev.User.ID, ev.Button.Arg)
	})
}

// statusText is the buyer's word for an order status.
func statusText(lang locales.Lang, o *state.Order) string {
	return locales.T(lang, "order.status."+o.Status)
}

// ordersPage renders one page of the buyer's orders, newest first.
func (ad *Admin) ordersPage(ctx context.Context, env *flows.Env, userID int64, page int) (*flows.Reply, error) {
	total, err := ad.orders.CountByUser(ctx, userID)
	if err != nil {
		return nil, err
	}
	if total == 0 {
		return &flows.Reply{Screen: &flows.Screen{Text: env.T("orders.empty"),
			Rows: [][]flows.Button{{{Text: env.T("btn.menu"), Action: flows.ActMenu, Global: true}}}}, Save: true}, nil
	}
	pages := int((total + ordersPerPage - 1) / ordersPerPage)
	page = min(max(page, 0), pages-1)
	list, err := ad.orders.ListByUser(ctx, userID, page*ordersPerPage, ordersPerPage)
	if err != nil {
		return nil, err
	}
	text := env.T("orders.title") + "\n"
	var rows [][]flows.Button
	for _, o := range list {
		name := upstreamorder.ItemName(env.Lang, o)
		text += "\n" + env.T("orders.line", "id", o.ID, "item", locales.Escape(name),
			"status", statusText(env.Lang, o), "date", locales.Date(env.Lang, o.CreatedAt))
		label := locales.Clip("#"+strconv.FormatInt(o.ID, 10)+" · "+name, 40)
		rows = append(rows, []flows.Button{{Text: label, Action: actOrderView, Arg: o.Ref(), Global: true}})
	}
	if pages > 1 {
		text += "\n\n" + env.T("orders.page", "page", page+1, "pages", pages)
		var nav []flows.Button
		if page > 0 {
			nav = append(nav, flows.Button{Text: env.T("btn.prev"), Action: actOrdersPage, Arg: strconv.Itoa(page - 1), Global: true})
		}
		if page < pages-1 {
			nav = append(nav, flows.Button{Text: env.T("btn.next"), Action: actOrdersPage, Arg: strconv.Itoa(page + 1), Global: true})
		}
		rows = append(rows, nav)
	}
	rows = append(rows, []flows.Button{{Text: env.T("btn.menu"), Action: flows.ActMenu, Global: true}})
	return &flows.Reply{Screen: &flows.Screen{Text: text, Rows: rows}, Save: true}, nil
}

// orderView shows one of the buyer's orders with its codes again.
func (ad *Admin) orderView(ctx context.Context, env *flows.Env, userID int64, ref string) (*flows.Reply, error) {
	id, tag, ok := state.ParseRef(ref)
	if !ok {
		return ad.ordersPage(ctx, env, userID, 0)
	}
	o, err := ad.orders.Get(ctx, id)
	if errors.Is(err, state.ErrOrderNotFound) || (err == nil && (o.UserID != userID || !o.Is(tag))) {
		// Not the buyer's, or another purchase under a number Redis
		// handed out again after a loss: the list as it is now.
		return ad.ordersPage(ctx, env, userID, 0)
	}
	if err != nil {
		return nil, err
	}
	price := locales.Money(env.Lang, o.ShopUSD)
	if o.PayMethod == state.PayStars && o.Stars > 0 {
		price = locales.Stars(env.Lang, o.Stars)
	}
	text := env.T("order.view", "id", o.ID, "item", locales.Escape(upstreamorder.ItemName(env.Lang, o)), "price", price,
		"date", locales.DateTime(env.Lang, o.CreatedAt), "status", statusText(env.Lang, o))
	if q, err := upstreamorder.QuoteOf(o); err == nil && q.Quantity > 1 && q.Line != "stars" {
		text += "\n" + env.T("order.view_qty", "n", locales.Number(env.Lang, int64(q.Quantity)))
	}
	if why := fulfil.RefundReason(env.Lang, o); why != "" {
		text += "\n" + env.T("order.view_reason", "reason", why)
	}
	if to := upstreamorder.Recipient(o); to != "" {
		text += "\n" + env.T("order.delivered_to", "to", locales.Escape(to))
	}
	switch {
	case len(o.Codes) > 0:
		text, _ = fulfil.FitCodes(text+"\n\n"+env.T("order.codes_again"), fulfil.CodeLines(o.Codes), env.T("order.codes_cut"))
	case o.Shrunk && o.Status == state.OrderDelivered:
		text += "\n\n" + env.T("order.shrunk")
	}
	var rows [][]flows.Button
	if ad.chats != nil && ad.chats.HasChat(ctx, o) {
		rows = append(rows, []flows.Button{{Text: env.T("oc.btn_open"), Action: fulfil.ChatOpenAction, Arg: o.Ref(), Global: true}})
	}
	rows = append(rows, []flows.Button{{Text: env.T("btn.orders"), Action: flows.ActOrders, Global: true}, {Text: env.T("btn.menu"), Action: flows.ActMenu, Global: true}})
	return &flows.Reply{Screen: &flows.Screen{Text: text, Rows: rows}, Save: true}, nil
}
