package botapitest

import (
	"encoding/json"
	"fmt"
	"image/color"
	"strings"

	"shopbot/bot/botapitest/schema"
	"shopbot/bot/botapitest/types"
)

// QueuedUpdate is an update waiting in the server's queue: its update_id,
// its kind ("message", "callback_query", ...) and its JSON as Telegram
// would send it.
type QueuedUpdate struct {
	ID   int64
	Kind string
	Raw  json.RawMessage
}

// QueuedUpdates returns the updates waiting to be confirmed, oldest first,
// without removing them. With ConfirmUpdate and UpdatesChanged it lets a
// test deliver updates its own way, for example to several webhook
// replicas at once, as Telegram does with max_connections.
func (s *Server) QueuedUpdates() []QueuedUpdate {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]QueuedUpdate, 0, len(s.updates))
	for _, u := range s.updates {
		out = append(out, QueuedUpdate{ID: u.id, Kind: u.kind, Raw: append(json.RawMessage(nil), u.raw...)})
	}
	return out
}

// ConfirmUpdate removes the queued update id, as Telegram forgets an update
// once a webhook answered it with 2xx. It reports whether the update was
// still queued.
func (s *Server) ConfirmUpdate(id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, u := range s.updates {
		if u.id == id {
			s.updates = append(s.updates[:i:i], s.updates[i+1:]...)
			s.notifyUpdatesLocked()
			return true
		}
	}
	return false
}

// UpdatesChanged returns a channel that is closed the next time an update
// is queued or removed.
func (s *Server) UpdatesChanged() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.updatesChanged
}

// TextUpdate returns an update with a text message from the chat's buyer,
// as SendText does, without queueing it: for a caller that delivers updates
// itself (a load generator posting to webhooks) and needs no queue.
func (s *Server) TextUpdate(chatID int64, text string) types.Update {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.userMessageLocked(chatID)
	m.Text = text
	if strings.HasPrefix(text, "/") {
		cmd, _, _ := strings.Cut(text, " ")
		m.Entities = []types.MessageEntity{{Type: "bot_command", Offset: 0, Length: schema.UTF16Len(cmd)}}
	}
	return types.Update{UpdateID: s.assignIDLocked(0), Message: m}
}

// PhotoUpdate returns the update of a photo with a caption from the
// chat's user, as SendPhoto does, without queueing it (a webhook driver
// posts it). The bot may send the photo again by its file_id.
func (s *Server) PhotoUpdate(chatID int64, caption string) types.Update {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.userMessageLocked(chatID)
	m.Photo = s.photoSizesLocked(TestJPEG(800, 800, color.RGBA{R: 40, G: 120, B: 220, A: 255}))
	m.Caption = caption
	return types.Update{UpdateID: s.assignIDLocked(0), Message: m}
}

// PressUpdate returns the update of a press on the bot's message
// messageID, as Press does, without queueing it. The callback query can be
// answered like any other.
func (s *Server) PressUpdate(chatID int64, messageID int, callbackData string) types.Update {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := fmt.Sprintf("cbq%d", s.nextSeqLocked())
	msg := &types.Message{MessageID: messageID, Chat: s.chatObjLocked(chatID)}
	if cs := s.chats[chatID]; cs != nil && cs.msgs[messageID] != nil {
		m := *cs.msgs[messageID]
		msg = &m
	}
	s.callbacks[id] = &callbackState{at: s.now(), chat: chatID}
	return types.Update{UpdateID: s.assignIDLocked(0), CallbackQuery: &types.CallbackQuery{
		ID: id, From: s.userLocked(chatID), Message: msg,
		ChatInstance: fmt.Sprintf("%d", 7000000000000000000+abs64(chatID)), Data: callbackData,
	}}
}
