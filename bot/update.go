package bot

import (
	"encoding/json"
	"strings"

	"github.com/go-telegram/bot/models"

	"shopbot/flows"
)

// updateHead is the little of an update the intake needs: its id and the
// chat whose queue it joins.
type updateHead struct {
	ID      int64 `json:"update_id"`
	Message *struct {
		Chat struct {
			ID int64 `json:"id"`
		} `json:"chat"`
		SuccessfulPayment json.RawMessage `json:"successful_payment"`
	} `json:"message"`
	EditedMessage *struct {
		Chat struct {
			ID int64 `json:"id"`
		} `json:"chat"`
	} `json:"edited_message"`
	CallbackQuery *struct {
		From struct {
			ID int64 `json:"id"`
		} `json:"from"`
		Message *struct {
			Chat struct {
				ID int64 `json:"id"`
			} `json:"chat"`
		} `json:"message"`
	} `json:"callback_query"`
	PreCheckoutQuery *struct {
		From struct {
			ID int64 `json:"id"`
		} `json:"from"`
	} `json:"pre_checkout_query"`
	MyChatMember *struct {
		Chat struct {
			ID int64 `json:"id"`
		} `json:"chat"`
	} `json:"my_chat_member"`
	InlineQuery        *struct{ From struct{ ID int64 } } `json:"inline_query"`
	ChosenInlineResult *struct{ From struct{ ID int64 } } `json:"chosen_inline_result"`
}

// chatKey returns the update's id, the queue it joins and whether the
// queue's bound may drop it. The queue is the chat's (the buyer's id for a
// button press on an inline message; 0 for kinds the shop ignores), except
// for a pre-checkout query: it joins the buyer's pre-checkout lane
// (preCheckoutLane), so Telegram's 10 s for its answer never wait behind
// the chat's other updates or a worker that holds the chat. An inline
// query (and a chosen inline result) has no chat and wants as quick an
// answer: it joins its sender's lane too. Payments and pre-checkout
// queries are never dropped.
func chatKey(body []byte) (id, chat int64, keep bool, err error) {
	var h updateHead
	if err := json.Unmarshal(body, &h); err != nil {
		return 0, 0, false, err
	}
	switch {
	case h.Message != nil:
		chat = h.Message.Chat.ID
		keep = len(h.Message.SuccessfulPayment) > 0 && string(h.Message.SuccessfulPayment) != "null"
	case h.EditedMessage != nil:
		chat = h.EditedMessage.Chat.ID
	case h.CallbackQuery != nil:
		chat = h.CallbackQuery.From.ID
		if h.CallbackQuery.Message != nil && h.CallbackQuery.Message.Chat.ID != 0 {
			chat = h.CallbackQuery.Message.Chat.ID
		}
	case h.PreCheckoutQuery != nil:
		chat, keep = preCheckoutLane(h.PreCheckoutQuery.From.ID), true
	case h.MyChatMember != nil:
		chat = h.MyChatMember.Chat.ID
	case h.InlineQuery != nil: // no chat: the lane's quick answer, droppable
		chat = preCheckoutLane(h.InlineQuery.From.ID)
	case h.ChosenInlineResult != nil:
		chat = preCheckoutLane(h.ChosenInlineResult.From.ID)
	}
	return h.ID, chat, keep, nil
}

// laneBase marks the intake queues of pre-checkout queries: the lane of
// buyer u is laneBase + u. Telegram's user and chat ids have at most 52
// significant bits, so no chat's queue has such an id.
const laneBase = int64(1) << 60

// preCheckoutLane is the intake queue of user's pre-checkout queries.
func preCheckoutLane(user int64) int64 {
	if user <= 0 || user >= laneBase {
		return 0 // not a user: the update is ignored like other chatless kinds
	}
	return laneBase + user
}

// laneUser returns the buyer of a pre-checkout lane, or 0 when queue is a
// chat's own.
func laneUser(queue int64) int64 {
	if queue > laneBase {
		return queue - laneBase
	}
	return 0
}

// updateKind names an update for metrics and logs.
func updateKind(u *models.Update) string {
	switch {
	case u.CallbackQuery != nil:
		return "callback_query"
	case u.PreCheckoutQuery != nil:
		return "pre_checkout_query"
	case u.MyChatMember != nil:
		return "my_chat_member"
	case u.InlineQuery != nil:
		return "inline_query"
	case u.ChosenInlineResult != nil:
		return "chosen_inline_result"
	case u.Message != nil && u.Message.SuccessfulPayment != nil:
		return "successful_payment"
	case u.Message != nil && strings.HasPrefix(u.Message.Text, "/"):
		return "command"
	case u.Message != nil:
		return "message"
	case u.EditedMessage != nil:
		return "edited_message"
	}
	return "other"
}

// parseCommand splits "/cmd@bot arg..." into the lowercased command and its
// argument; ok is false for text that is not a command.
func parseCommand(text string) (cmd, arg string, ok bool) {
	if !strings.HasPrefix(text, "/") || len(text) < 2 {
		return "", "", false
	}
	head, rest, _ := strings.Cut(text[1:], " ")
	head, _, _ = strings.Cut(head, "@")
	if head == "" {
		return "", "", false
	}
	return strings.ToLower(head), strings.TrimSpace(rest), true
}

// flowUser is the sender of an update as the flows see it, with their
// staff roles.
func flowUser(u models.User, staff flows.Staff) flows.User {
	return flows.User{ID: u.ID, LanguageCode: u.LanguageCode, Username: u.Username, FirstName: u.FirstName, Roles: staff.Roles(u.ID)}
}
