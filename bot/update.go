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
}

// chatKey returns the update's id and the chat it belongs to (the buyer's
// id for queries; 0 for kinds the shop ignores).
func chatKey(body []byte) (id, chat int64, err error) {
	var h updateHead
	if err := json.Unmarshal(body, &h); err != nil {
		return 0, 0, err
	}
	switch {
	case h.Message != nil:
		chat = h.Message.Chat.ID
	case h.EditedMessage != nil:
		chat = h.EditedMessage.Chat.ID
	case h.CallbackQuery != nil:
		chat = h.CallbackQuery.From.ID
		if h.CallbackQuery.Message != nil && h.CallbackQuery.Message.Chat.ID != 0 {
			chat = h.CallbackQuery.Message.Chat.ID
		}
	case h.PreCheckoutQuery != nil:
		chat = h.PreCheckoutQuery.From.ID
	case h.MyChatMember != nil:
		chat = h.MyChatMember.Chat.ID
	}
	return h.ID, chat, nil
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

func flowUser(u models.User, admins map[int64]bool) flows.User {
	return flows.User{ID: u.ID, LanguageCode: u.LanguageCode, Username: u.Username, FirstName: u.FirstName, Admin: admins[u.ID]}
}
