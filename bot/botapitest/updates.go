package botapitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"shopbot/bot/botapitest/calls"
	"shopbot/bot/botapitest/schema"
	"shopbot/bot/botapitest/types"
)

// queuedUpdate is an update waiting to be fetched with getUpdates.
type queuedUpdate struct {
	id   int64
	kind string // "message", "callback_query", ...
	raw  json.RawMessage
}

// defaultAllowed are the update kinds delivered when the bot never set
// allowed_updates: all but chat_member, message_reaction and
// message_reaction_count, as in Telegram.
func allowedByDefault(kind string) bool {
	switch kind {
	case "chat_member", "message_reaction", "message_reaction_count":
		return false
	}
	return true
}

// PushUpdate queues an update for getUpdates (and DeliverPending) and
// returns it; a zero UpdateID is replaced by the next id.
func (s *Server) PushUpdate(u types.Update) types.Update {
	s.mu.Lock()
	u, vs := s.pushLocked(u)
	s.mu.Unlock()
	s.report(vs)
	return u
}

func (s *Server) assignIDLocked(id int64) int64 {
	if id == 0 {
		s.nextUpdateID++
		return s.nextUpdateID
	}
	if id > s.nextUpdateID {
		s.nextUpdateID = id
	}
	return id
}

func (s *Server) pushLocked(u types.Update) (types.Update, []*schema.Violation) {
	u.UpdateID = s.assignIDLocked(u.UpdateID)
	raw, err := json.Marshal(u)
	if err != nil {
		return u, []*schema.Violation{{Method: "PushUpdate", Problem: err.Error()}}
	}
	vs := s.checkOutgoing("PushUpdate", u, []string{"Update"})
	s.enqueueLocked(u.UpdateID, raw)
	return u, vs
}

func (s *Server) enqueueLocked(id int64, raw json.RawMessage) {
	var obj map[string]json.RawMessage
	_ = json.Unmarshal(raw, &obj)
	kind := ""
	for k := range obj {
		if k != "update_id" {
			kind = k
		}
	}
	s.updates = append(s.updates, queuedUpdate{id: id, kind: kind, raw: raw})
	s.notifyUpdatesLocked()
}

func (s *Server) notifyUpdatesLocked() {
	close(s.updatesChanged)
	s.updatesChanged = make(chan struct{})
}

// PushUpdateJSON queues an update given as JSON, for kinds the Update type
// does not cover. A missing or zero update_id is assigned. The update is
// checked against the schema's Update type; a mismatch is returned as an
// error and the update is not queued.
func (s *Server) PushUpdateJSON(update []byte) (int64, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(update, &obj); err != nil {
		return 0, fmt.Errorf("botapitest: update must be a JSON object: %w", err)
	}
	var id int64
	if raw, ok := obj["update_id"]; ok {
		if err := json.Unmarshal(raw, &id); err != nil {
			return 0, fmt.Errorf("botapitest: update_id: %w", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id = s.assignIDLocked(id)
	obj["update_id"], _ = json.Marshal(id)
	raw, err := json.Marshal(obj)
	if err != nil {
		return 0, fmt.Errorf("botapitest: encode update: %w", err)
	}
	vs, err := s.schema.CheckJSON("PushUpdateJSON", raw, "Update")
	if err != nil {
		return 0, fmt.Errorf("botapitest: decode update: %w", err)
	}
	if len(vs) > 0 {
		return 0, vs[0]
	}
	s.enqueueLocked(id, raw)
	return id, nil
}

// PendingUpdates returns how many updates wait to be confirmed.
func (s *Server) PendingUpdates() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.updates)
}

// The 409 descriptions of getUpdates.
const (
	errWebhookActive = "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"
	errOtherPoller   = "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
)

// getUpdates confirms updates below offset and returns up to limit pending
// ones, waiting up to timeout seconds for one to arrive. A newer getUpdates
// request ends a waiting one with 409, as Telegram does.
func (s *Server) getUpdates(ctx context.Context, c *calls.Call) (any, *APIError) {
	offset := c.Int("offset")
	limit := 100
	if c.Has("limit") {
		limit = int(c.Int("limit"))
	}
	timeout := time.Duration(c.Int("timeout")) * time.Second

	s.mu.Lock()
	if s.webhook.URL != "" {
		s.mu.Unlock()
		return nil, &APIError{Code: http.StatusConflict, Description: errWebhookActive}
	}
	if c.Has("allowed_updates") {
		var list []string
		_ = c.JSON("allowed_updates", &list)
		s.allowedUpdates = list
	}
	s.pollGen++
	gen := s.pollGen
	s.notifyUpdatesLocked() // wakes an older poll, which then ends with 409
	switch {
	case offset > 0:
		i := 0
		for i < len(s.updates) && s.updates[i].id < offset {
			i++
		}
		s.updates = s.updates[i:]
	case offset < 0:
		if keep := int(-offset); keep < len(s.updates) {
			s.updates = s.updates[len(s.updates)-keep:]
		}
	}
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	for {
		if s.pollGen != gen {
			s.mu.Unlock()
			return nil, &APIError{Code: http.StatusConflict, Description: errOtherPoller}
		}
		out := []json.RawMessage{}
		for _, u := range s.updates {
			if len(out) >= limit {
				break
			}
			if s.allowedLocked(u.kind) {
				out = append(out, u.raw)
			}
		}
		if len(out) > 0 || timer == nil {
			s.mu.Unlock()
			return out, nil
		}
		ch := s.updatesChanged
		s.polling++
		s.pollingChangedLocked()
		s.mu.Unlock()
		stop := false
		select {
		case <-ch:
		case <-timer:
			timer = nil
		case <-ctx.Done():
			stop = true
		case <-s.done:
			stop = true
		}
		s.mu.Lock()
		s.polling--
		s.pollingChangedLocked()
		if stop {
			s.mu.Unlock()
			return []json.RawMessage{}, nil
		}
	}
}

func (s *Server) allowedLocked(kind string) bool {
	if len(s.allowedUpdates) == 0 {
		return allowedByDefault(kind)
	}
	return slices.Contains(s.allowedUpdates, kind)
}

// SendText pushes a text message from the chat's buyer and returns the
// update. A leading /command gets a bot_command entity, as in Telegram.
func (s *Server) SendText(chatID int64, text string) types.Update {
	s.mu.Lock()
	m := s.userMessageLocked(chatID)
	m.Text = text
	if strings.HasPrefix(text, "/") {
		cmd, _, _ := strings.Cut(text, " ")
		cmd, _, _ = strings.Cut(cmd, "\n")
		m.Entities = []types.MessageEntity{{Type: "bot_command", Offset: 0, Length: schema.UTF16Len(cmd)}}
	}
	u, vs := s.pushLocked(types.Update{Message: m})
	s.mu.Unlock()
	s.report(vs)
	return u
}

// SendReply pushes text from the chat's user as a reply to the message
// replyTo of that chat (Telegram includes the replied-to message).
func (s *Server) SendReply(chatID int64, replyTo int, text string) types.Update {
	s.mu.Lock()
	var orig *types.Message
	if m, ok := s.chatLocked(chatID).msgs[replyTo]; ok {
		c := *m
		c.ReplyToMessage = nil
		orig = &c
	}
	m := s.userMessageLocked(chatID)
	m.Text, m.ReplyToMessage = text, orig
	u, vs := s.pushLocked(types.Update{Message: m})
	s.mu.Unlock()
	s.report(vs)
	return u
}

// SendCommand pushes a command from the chat's buyer: "/start" with arg
// "giftcards" sends "/start giftcards". The slash is optional.
func (s *Server) SendCommand(chatID int64, command, arg string) types.Update {
	text := "/" + strings.TrimPrefix(command, "/")
	if arg != "" {
		text += " " + arg
	}
	return s.SendText(chatID, text)
}

// SendPhoto pushes a photo with a caption from the chat's buyer. Its sizes
// have content (generated JPEGs, 90x90 and 800x800), which the bot fetches
// with getFile and the file link; SendPhotoData sets the content.
func (s *Server) SendPhoto(chatID int64, caption string) types.Update {
	s.mu.Lock()
	m := s.userMessageLocked(chatID)
	m.Photo = s.photoSizesLocked(TestJPEG(800, 800, color.RGBA{R: 220, G: 60, B: 40, A: 255}))
	m.Caption = caption
	u, vs := s.pushLocked(types.Update{Message: m})
	s.mu.Unlock()
	s.report(vs)
	return u
}

// callbackState tracks one callback query.
type callbackState struct {
	at       time.Time
	chat     int64 // the chat the press came from
	answered bool
	answer   CallbackAnswer
}

// CallbackAnswer is how the bot answered a callback query.
type CallbackAnswer struct {
	Text      string
	ShowAlert bool
	URL       string
}

// Press pushes a callback_query update as if the buyer pressed a button
// with callbackData on the bot's message messageID (its current state is
// sent along; an unknown message is sent as inaccessible, with date 0). The
// data is not checked against the keyboard, so tests can forge presses.
// It returns the query id.
func (s *Server) Press(chatID int64, messageID int, callbackData string) string {
	s.mu.Lock()
	id := fmt.Sprintf("cbq%d", s.nextSeqLocked())
	msg := &types.Message{MessageID: messageID, Chat: s.chatObjLocked(chatID)} // inaccessible
	if cs := s.chats[chatID]; cs != nil && cs.msgs[messageID] != nil {
		m := *cs.msgs[messageID]
		msg = &m
	}
	s.callbacks[id] = &callbackState{at: s.now(), chat: chatID}
	q := &types.CallbackQuery{
		ID:           id,
		From:         s.userLocked(chatID),
		Message:      msg,
		ChatInstance: fmt.Sprintf("%d", 7000000000000000000+abs64(chatID)),
		Data:         callbackData,
	}
	_, vs := s.pushLocked(types.Update{CallbackQuery: q})
	s.mu.Unlock()
	s.report(vs)
	return id
}

// PressButton presses the inline button labelled label on the bot's message
// messageID and returns the callback query id.
func (s *Server) PressButton(chatID int64, messageID int, label string) (string, error) {
	m, ok := s.Message(chatID, messageID)
	if !ok {
		return "", fmt.Errorf("botapitest: chat %d has no message %d", chatID, messageID)
	}
	for _, b := range m.ReplyMarkup.Buttons() {
		if b.Text == label {
			if b.CallbackData == "" {
				return "", fmt.Errorf("botapitest: button %q has no callback_data", label)
			}
			return s.Press(chatID, messageID, b.CallbackData), nil
		}
	}
	return "", fmt.Errorf("botapitest: message %d in chat %d has no button %q", messageID, chatID, label)
}

// CallbackChat returns the chat a callback query was pressed in.
func (s *Server) CallbackChat(queryID string) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.callbacks[queryID]
	if q == nil {
		return 0, false
	}
	return q.chat, true
}

// CallbackAnswer returns how the bot answered a callback query and whether
// it did.
func (s *Server) CallbackAnswer(queryID string) (CallbackAnswer, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.callbacks[queryID]
	if q == nil || !q.answered {
		return CallbackAnswer{}, false
	}
	return q.answer, true
}

const errQueryTooOld = "query is too old and response timeout expired or query ID is invalid"

func (s *Server) answerCallbackQuery(c *calls.Call) (any, *APIError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.callbacks[c.String("callback_query_id")]
	if q == nil || q.answered || s.now().Sub(q.at) > s.cfg.callbackTTL {
		return nil, badRequest(errQueryTooOld)
	}
	q.answered = true
	q.answer = CallbackAnswer{Text: c.String("text"), ShowAlert: c.Bool("show_alert"), URL: c.String("url")}
	return true, nil
}

// DeliverWebhook POSTs an update to a bot's webhook the way Telegram does:
// JSON body, and the X-Telegram-Bot-Api-Secret-Token header when secret is
// not empty. A zero UpdateID is assigned. It returns the HTTP status.
func (s *Server) DeliverWebhook(ctx context.Context, url, secret string, u types.Update) (int, error) {
	s.mu.Lock()
	u.UpdateID = s.assignIDLocked(u.UpdateID)
	s.mu.Unlock()
	raw, err := json.Marshal(u)
	if err != nil {
		return 0, fmt.Errorf("botapitest: encode update: %w", err)
	}
	return postWebhook(ctx, url, secret, raw)
}

func postWebhook(ctx context.Context, url, secret string, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("botapitest: webhook request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("botapitest: deliver webhook: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// DeliverPending POSTs the queued updates to a webhook in order, removing
// each one the webhook answers with 2xx, and stops at the first other answer
// (Telegram would retry it later). It returns how many were delivered.
func (s *Server) DeliverPending(ctx context.Context, url, secret string) (int, error) {
	n := 0
	for {
		s.mu.Lock()
		if len(s.updates) == 0 {
			s.mu.Unlock()
			return n, nil
		}
		u := s.updates[0]
		s.mu.Unlock()
		status, err := postWebhook(ctx, url, secret, u.raw)
		if err != nil {
			return n, err
		}
		if status < 200 || status > 299 {
			return n, fmt.Errorf("botapitest: webhook answered %d to update %d", status, u.id)
		}
		s.mu.Lock()
		if len(s.updates) > 0 && s.updates[0].id == u.id {
			s.updates = s.updates[1:]
		}
		s.mu.Unlock()
		n++
	}
}

func (s *Server) pollingChangedLocked() {
	close(s.pollingChanged)
	s.pollingChanged = make(chan struct{})
}

// WaitPolling waits until at least n getUpdates requests are blocked in a
// long poll: the bot has set itself up and is listening.
func (s *Server) WaitPolling(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		p, ch := s.polling, s.pollingChanged
		s.mu.Unlock()
		if p >= n {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("botapitest: waiting for %d long polls, %d waiting: %w", n, p, ctx.Err())
		case <-s.done:
			return fmt.Errorf("botapitest: waiting for %d long polls: server closed", n)
		}
	}
}
