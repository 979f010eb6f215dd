package bot

import (
	"testing"

	"github.com/go-telegram/bot/models"
)

// decodeUpdate reads a callback query's message only as far as its id,
// date and chat, and keeps telling an inaccessible message (date 0) from
// an accessible one, as go-telegram/bot does.
func TestDecodeUpdateReadsTheCallbackMessageLean(t *testing.T) {
	var u models.Update
	body := `{"update_id":9,"callback_query":{"id":"q","from":{"id":5,"is_bot":false,"first_name":"B"},"chat_instance":"1","data":"d",
		"message":{"message_id":77,"date":1700000000,"chat":{"id":5,"type":"private"},"text":"menu","reply_markup":{"inline_keyboard":[[{"text":"x","callback_data":"y"}]]}}}}`
	if err := decodeUpdate([]byte(body), &u); err != nil {
		t.Fatal(err)
	}
	cq := u.CallbackQuery
	if u.ID != 9 || cq == nil || cq.ID != "q" || cq.From.ID != 5 || cq.Data != "d" || cq.ChatInstance != "1" ||
		cq.Message.Message == nil || cq.Message.Message.ID != 77 || cq.Message.Message.Chat.Type != "private" {
		t.Fatalf("decoded %+v / %+v", u, cq)
	}
	body = `{"update_id":10,"callback_query":{"id":"q","from":{"id":5,"is_bot":false,"first_name":"B"},"chat_instance":"1","data":"d",
		"message":{"message_id":78,"date":0,"chat":{"id":5,"type":"private"}}}}`
	if err := decodeUpdate([]byte(body), &u); err != nil {
		t.Fatal(err)
	}
	if m := u.CallbackQuery.Message; m.Message != nil || m.InaccessibleMessage == nil || m.InaccessibleMessage.MessageID != 78 ||
		m.Type != models.MaybeInaccessibleMessageTypeInaccessibleMessage {
		t.Fatalf("inaccessible message decoded as %+v", m)
	}
	if err := decodeUpdate([]byte(`{"update_id":11,"message":{"message_id":1,"date":1,"chat":{"id":5,"type":"private"},"text":"/start"}}`), &u); err != nil ||
		u.Message == nil || u.Message.Text != "/start" || u.CallbackQuery != nil {
		t.Fatalf("message update decoded as %+v (%v)", u, err)
	}
}
