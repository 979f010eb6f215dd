package bot

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"unicode/utf16"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state"
)

// Delivery limits: a message holds at most 4096 characters; above
// maxInlineCodes codes (or when they do not fit) a .txt file comes too.
const (
	maxMessageChars = 4096
	maxInlineCodes  = 10
	ordersPerPage   = 5
)

// Global button actions of "My orders" (callback data "1:0:<action>:<arg>").
const (
	actOrders     = "orders" // the main menu's button: first page
	actOrdersPage = "ordp"   // arg: page number
	actOrderView  = "ord"    // arg: order id
)

// registerOrders adds /orders ("My orders") and the /start hook that hands
// over deliveries a buyer missed while the bot was blocked.
func (b *Bot) registerOrders(e *flows.Engine) {
	list := func(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
		page := 0
		if ev.Kind == flows.EvButton && ev.Button.Action == actOrdersPage {
			page, _ = strconv.Atoi(ev.Button.Arg)
		}
		return b.ful.ordersPage(ctx, env, ev.User.ID, page)
	}
	// An admin's /orders is the shop-wide list (admin_orders.go); the menu's
	// "My orders" button stays the buyer's own list for everyone.
	admin := adminOrders{b}
	e.HandleCommand("orders", func(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
		if env.User.Admin {
			return admin.listCommand(ctx, env, s)
		}
		return list(ctx, env, s, ev)
	})
	b.registerAdminOrders(e)
	e.HandleButton(actOrders, list)
	e.HandleButton(actOrdersPage, list)
	e.HandleButton(actOrderView, func(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
		id, _ := strconv.ParseInt(ev.Button.Arg, 10, 64)
		return b.ful.orderView(ctx, env, ev.User.ID, id)
	})
	b.Hook(func(ctx context.Context, b *Bot, u *models.Update) bool {
		m := u.Message
		if m == nil || m.From == nil || m.Chat.Type != models.ChatTypePrivate {
			return false
		}
		if cmd, _, ok := parseCommand(m.Text); ok && cmd == "start" {
			b.ful.redeliver(ctx, m.From.ID)
		}
		return false // the menu still shows
	})
}

func (f *fulfiller) undeliveredKey() string { return f.b.opts.Prefix + "orders:undelivered" }

// redeliver hands the user's finished orders that never reached them.
func (f *fulfiller) redeliver(ctx context.Context, userID int64) {
	n, err := f.b.rdb.SRem(ctx, f.undeliveredKey(), userID).Result()
	if err != nil || n == 0 {
		return
	}
	list, err := f.orders.ListByUser(ctx, userID, 0, 50)
	if err != nil {
		f.b.log.Warn("list orders for redelivery", "user", userID, "err", err)
		return
	}
	for _, o := range list {
		if o.Status == state.OrderDelivered && o.DeliveredAt.IsZero() {
			if err := f.finishNotices(ctx, o); err != nil {
				// Hand it to the worker, which retries until it gets through.
				f.b.log.Warn("redeliver order", "order", o.ID, "err", err)
				if err := f.sched.Put(ctx, OrderJob(o.ID), f.now().Add(f.cfg.RetryMin)); err != nil {
					f.b.log.Error("schedule redelivery", "order", o.ID, "err", err)
				}
			}
		}
	}
}

// markUndelivered remembers that a user has a delivery waiting for /start.
func (f *fulfiller) markUndelivered(ctx context.Context, userID int64) {
	if err := f.b.rdb.SAdd(ctx, f.undeliveredKey(), userID).Err(); err != nil {
		f.b.log.Warn("remember undelivered order", "user", userID, "err", err)
	}
}

func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

// codeLines renders codes as copyable monospace lines.
func codeLines(codes []string) []string {
	out := make([]string, len(codes))
	for i, c := range codes {
		out[i] = "<code>" + locales.Escape(c) + "</code>"
	}
	return out
}

// fitCodes joins as many code lines after head as fit in one message with
// room for tail, and reports whether all fit.
func fitCodes(head string, lines []string, tail string) (string, bool) {
	text := head
	room := maxMessageChars - utf16Len(tail) - 2
	for i, l := range lines {
		if utf16Len(text)+1+utf16Len(l) > room {
			return text, i == len(lines)
		}
		text += "\n" + l
	}
	return text, true
}

// sendResult sends a delivered order to the buyer: its codes in one
// message (and a .txt file when there are many or they do not fit), or the
// line's "delivered" notice.
func (f *fulfiller) sendResult(ctx context.Context, o *state.Order) error {
	lang := f.lang(o)
	item := locales.Escape(itemName(o))
	if len(o.Codes) == 0 {
		text := locales.T(lang, "order.delivered", "id", o.ID, "item", item)
		if to := recipient(o); to != "" {
			text += "\n" + locales.T(lang, "order.delivered_to", "to", locales.Escape(to))
		}
		text += "\n\n" + locales.T(lang, "order.note."+o.Line)
		var rows [][]flows.Button
		if f.b.chat.hasChat(ctx, o) {
			rows = openButton(lang, o.ID, "oc.btn_open")
		}
		_, err := f.b.Send(ctx, o.ChatID, text, rows)
		return f.blocked(ctx, o, err)
	}
	head := locales.T(lang, "order.codes", "id", o.ID, "item", item) + "\n"
	text, all := fitCodes(head, codeLines(o.Codes), locales.T(lang, "order.codes_cut"))
	file := !all || len(o.Codes) > maxInlineCodes
	switch {
	case !all:
		text += "\n\n" + locales.T(lang, "order.codes_cut")
	case file:
		text += "\n\n" + locales.T(lang, "order.codes_file")
	default:
		text += "\n\n" + locales.T(lang, "order.codes_hint")
	}
	if _, err := f.b.Send(ctx, o.ChatID, text, nil); err != nil {
		return f.blocked(ctx, o, err)
	}
	if file {
		return f.blocked(ctx, o, f.sendCodesFile(ctx, o))
	}
	return nil
}

// blocked remembers a delivery the buyer could not get (403) and passes the
// error on.
func (f *fulfiller) blocked(ctx context.Context, o *state.Order, err error) error {
	if errors.Is(err, ErrBlocked) {
		f.markUndelivered(ctx, o.UserID)
	}
	return err
}

// sendCodesFile sends the order's codes as a .txt document, one per line.
func (f *fulfiller) sendCodesFile(ctx context.Context, o *state.Order) error {
	data := []byte(strings.Join(o.Codes, "\n") + "\n")
	name := "order-" + strconv.FormatInt(o.ID, 10) + "-codes.txt"
	caption := locales.T(f.lang(o), "order.codes_file_caption", "id", o.ID)
	return f.b.API.Do(ctx, "sendDocument", o.ChatID, func(ctx context.Context) error {
		_, err := f.b.API.TG.SendDocument(ctx, &tgbot.SendDocumentParams{
			ChatID: o.ChatID, Caption: caption, ParseMode: models.ParseModeHTML,
			Document: &models.InputFileUpload{Filename: name, Data: bytes.NewReader(data)},
		})
		return err
	})
}

// recipientLines are the lines whose quote names a recipient (a username,
// a store login, an invite link); the field answers of services and in-game
// top-ups (which may hold a password) are never repeated.
var recipientLines = map[string]bool{"stars": true, "premium": true, "topup": true, "gifts": true}

// recipient is who received the order, as the buyer typed it, or "".
func recipient(o *state.Order) string {
	if !recipientLines[o.Line] {
		return ""
	}
	if q, err := quoteOf(o); err == nil {
		return q.For
	}
	return ""
}

// statusText is the buyer's word for an order status.
func statusText(lang locales.Lang, o *state.Order) string {
	return locales.T(lang, "order.status."+o.Status)
}

// ordersPage renders one page of the buyer's orders, newest first.
func (f *fulfiller) ordersPage(ctx context.Context, env *flows.Env, userID int64, page int) (*flows.Reply, error) {
	total, err := f.orders.CountByUser(ctx, userID)
	if err != nil {
		return nil, err
	}
	if total == 0 {
		return &flows.Reply{Screen: &flows.Screen{Text: env.T("orders.empty"),
			Rows: [][]flows.Button{{{Text: env.T("btn.menu"), Action: "m", Global: true}}}}, Save: true}, nil
	}
	pages := int((total + ordersPerPage - 1) / ordersPerPage)
	page = min(max(page, 0), pages-1)
	list, err := f.orders.ListByUser(ctx, userID, page*ordersPerPage, ordersPerPage)
	if err != nil {
		return nil, err
	}
	text := env.T("orders.title") + "\n"
	var rows [][]flows.Button
	for _, o := range list {
		name := itemName(o)
		text += "\n" + env.T("orders.line", "id", o.ID, "item", locales.Escape(name),
			"status", statusText(env.Lang, o), "date", locales.Date(env.Lang, o.CreatedAt))
		label := "#" + strconv.FormatInt(o.ID, 10) + " · " + name
		if r := []rune(label); len(r) > 40 {
			label = string(r[:39]) + "…"
		}
		rows = append(rows, []flows.Button{{Text: label, Action: actOrderView, Arg: strconv.FormatInt(o.ID, 10), Global: true}})
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
	rows = append(rows, []flows.Button{{Text: env.T("btn.menu"), Action: "m", Global: true}})
	return &flows.Reply{Screen: &flows.Screen{Text: text, Rows: rows}, Save: true}, nil
}

// orderView shows one of the buyer's orders with its codes again.
func (f *fulfiller) orderView(ctx context.Context, env *flows.Env, userID, id int64) (*flows.Reply, error) {
	o, err := f.orders.Get(ctx, id)
	if errors.Is(err, state.ErrOrderNotFound) || (err == nil && o.UserID != userID) {
		return f.ordersPage(ctx, env, userID, 0)
	}
	if err != nil {
		return nil, err
	}
	price := locales.Money(env.Lang, o.ShopUSD)
	if o.PayMethod == state.PayStars && o.Stars > 0 {
		price = locales.Stars(env.Lang, o.Stars)
	}
	text := env.T("order.view", "id", o.ID, "item", locales.Escape(itemName(o)), "price", price,
		"date", locales.DateTime(env.Lang, o.CreatedAt), "status", statusText(env.Lang, o))
	if to := recipient(o); to != "" {
		text += "\n" + env.T("order.delivered_to", "to", locales.Escape(to))
	}
	switch {
	case len(o.Codes) > 0:
		text, _ = fitCodes(text+"\n\n"+env.T("order.codes_again"), codeLines(o.Codes), env.T("order.codes_cut"))
	case o.Shrunk && o.Status == state.OrderDelivered:
		text += "\n\n" + env.T("order.shrunk")
	}
	var rows [][]flows.Button
	if f.b.chat.hasChat(ctx, o) {
		rows = append(rows, []flows.Button{{Text: env.T("oc.btn_open"), Action: actChatOpen, Arg: strconv.FormatInt(o.ID, 10), Global: true}})
	}
	rows = append(rows, []flows.Button{{Text: env.T("btn.orders"), Action: actOrders, Global: true}, {Text: env.T("btn.menu"), Action: "m", Global: true}})
	return &flows.Reply{Screen: &flows.Screen{Text: text, Rows: rows}, Save: true}, nil
}
