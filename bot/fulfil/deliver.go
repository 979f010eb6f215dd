package fulfil

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"unicode/utf16"

	"shopbot/bot/upstreamorder"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state"
)

// Delivery limits: a message holds at most 4096 characters; above
// maxInlineCodes codes (or when they do not fit) a .txt file comes too.
const (
	maxMessageChars = 4096
	maxInlineCodes  = 10
)

func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

// Redeliver hands the user's finished orders that never reached them.
func (f *Fulfiller) Redeliver(ctx context.Context, userID int64) {
	waiting, err := f.orders.TakeUndelivered(ctx, userID)
	if err != nil || !waiting {
		return
	}
	list, err := f.orders.ListByUser(ctx, userID, 0, 50)
	if err != nil {
		f.log.Warn("list orders for redelivery", "user", userID, "err", err)
		return
	}
	for _, o := range list {
		if o.Status == state.OrderDelivered && o.DeliveredAt.IsZero() {
			if err := f.finishNotices(ctx, o); err != nil {
				// Hand it to the worker, which retries until it gets through.
				f.log.Warn("redeliver order", "order", o.ID, "err", err)
				if err := f.sched.Put(ctx, OrderJob(o.ID), f.now().Add(f.cfg.RetryMin)); err != nil {
					f.log.Error("schedule redelivery", "order", o.ID, "err", err)
				}
			}
		}
	}
}

// markUndelivered remembers that a user has a delivery waiting for /start.
func (f *Fulfiller) markUndelivered(ctx context.Context, userID int64) {
	if err := f.orders.MarkUndelivered(ctx, userID); err != nil {
		f.log.Warn("remember undelivered order", "user", userID, "err", err)
	}
}

// CodeLines renders codes as copyable monospace lines.
func CodeLines(codes []string) []string {
	out := make([]string, len(codes))
	for i, c := range codes {
		out[i] = "<code>" + locales.Escape(c) + "</code>"
	}
	return out
}

// FitCodes joins as many code lines after head as fit in one message with
// room for tail, and reports whether all fit.
func FitCodes(head string, lines []string, tail string) (string, bool) {
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
func (f *Fulfiller) sendResult(ctx context.Context, o *state.Order) error {
	lang := f.Lang(o)
	item := locales.Escape(upstreamorder.ItemName(lang, o))
	if len(o.Codes) == 0 {
		text := locales.T(lang, "order.delivered", "id", o.ID, "item", item)
		if to := upstreamorder.Recipient(o); to != "" {
			text += "\n" + locales.T(lang, "order.delivered_to", "to", locales.Escape(to))
		}
		text += "\n\n" + locales.T(lang, "order.note."+o.Line)
		var rows [][]flows.Button
		if f.chats != nil && f.chats.HasChat(ctx, o) {
			rows = OpenChatButton(lang, o)
		}
		_, err := f.msg.Send(ctx, o.ChatID, text, rows)
		return f.blocked(ctx, o, err)
	}
	head := locales.T(lang, "order.codes", "id", o.ID, "item", item) + "\n"
	text, all := FitCodes(head, CodeLines(o.Codes), locales.T(lang, "order.codes_cut"))
	file := !all || len(o.Codes) > maxInlineCodes
	switch {
	case !all:
		text += "\n\n" + locales.T(lang, "order.codes_cut")
	case file:
		text += "\n\n" + locales.T(lang, "order.codes_file")
	default:
		text += "\n\n" + locales.T(lang, "order.codes_hint")
	}
	if _, err := f.msg.Send(ctx, o.ChatID, text, nil); err != nil {
		return f.blocked(ctx, o, err)
	}
	if file {
		return f.blocked(ctx, o, f.sendCodesFile(ctx, o))
	}
	return nil
}

// blocked remembers a delivery the buyer could not get (403) and passes the
// error on.
func (f *Fulfiller) blocked(ctx context.Context, o *state.Order, err error) error {
	if errors.Is(err, flows.ErrBlocked) {
		f.markUndelivered(ctx, o.UserID)
	}
	return err
}

// sendCodesFile sends the order's codes as a .txt document, one per line.
func (f *Fulfiller) sendCodesFile(ctx context.Context, o *state.Order) error {
	data := []byte(strings.Join(o.Codes, "\n") + "\n")
	name := "order-" + strconv.FormatInt(o.ID, 10) + "-codes.txt"
	caption := locales.T(f.Lang(o), "order.codes_file_caption", "id", o.ID)
	return f.msg.SendDocument(ctx, o.ChatID, name, data, caption)
}
