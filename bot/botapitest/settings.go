package botapitest

import (
	"net/http"
	"shopbot/bot/botapitest/calls"
	"shopbot/bot/botapitest/types"
	"strconv"
	"strings"
	"time"
)

// CommandScope identifies one command list of setMyCommands: the scope type
// ("default", "all_private_chats", "chat", "chat_member", ...), the chat and
// user ids of scopes that have them, and the language code ("" for all).
type CommandScope struct {
	Type         string
	ChatID       int64
	UserID       int64
	LanguageCode string
}

func scopeOf(c *calls.Call) CommandScope {
	sc := CommandScope{Type: "default", LanguageCode: c.String("language_code")}
	m, ok := c.Params["scope"].(map[string]any)
	if !ok {
		return sc
	}
	if t, ok := m["type"].(string); ok {
		sc.Type = t
	}
	if id, ok := m["chat_id"].(float64); ok {
		sc.ChatID = int64(id)
	}
	if id, ok := m["user_id"].(float64); ok {
		sc.UserID = int64(id)
	}
	return sc
}

// MyCommands returns the commands set for a scope and language, nil if none.
func (s *Server) MyCommands(scope CommandScope) []types.BotCommand {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]types.BotCommand(nil), s.commands[scope]...)
}

func (s *Server) commandsMethod(method string, c *calls.Call) (any, *APIError) {
	sc := scopeOf(c)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch method {
	case "setMyCommands":
		var cmds []types.BotCommand
		_ = c.JSON("commands", &cmds)
		if len(cmds) == 0 {
			delete(s.commands, sc)
		} else {
			s.commands[sc] = cmds
		}
		return true, nil
	case "deleteMyCommands":
		delete(s.commands, sc)
		return true, nil
	}
	out := append([]types.BotCommand{}, s.commands[sc]...)
	return out, nil
}

// Webhook returns the webhook the bot set (URL empty when none), with the
// secret token it chose.
func (s *Server) Webhook() types.WebhookInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.webhook
	w.PendingUpdateCount = len(s.updates)
	w.AllowedUpdates = append([]string(nil), w.AllowedUpdates...)
	return w
}

func (s *Server) webhookMethod(method string, c *calls.Call) (any, *APIError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch method {
	case "getWebhookInfo":
		w := s.webhook
		w.PendingUpdateCount = len(s.updates)
		return w, nil
	case "setWebhook":
		url := c.String("url")
		if url != "" && !strings.HasPrefix(url, "https://") {
			return nil, badRequest("bad webhook: An HTTPS URL must be provided for webhook")
		}
		if url == "" {
			s.webhook = types.WebhookInfo{}
		} else {
			w := types.WebhookInfo{URL: url, MaxConnections: 40, SecretToken: c.String("secret_token"), IPAddress: c.String("ip_address")}
			if c.Has("max_connections") {
				w.MaxConnections = int(c.Int("max_connections"))
			}
			_, w.HasCustomCertificate = c.Files["certificate"]
			if c.Has("allowed_updates") {
				_ = c.JSON("allowed_updates", &w.AllowedUpdates)
				s.allowedUpdates = w.AllowedUpdates
			}
			s.webhook = w
			s.pollGen++ // a waiting getUpdates ends with 409
			s.notifyUpdatesLocked()
		}
	case "deleteWebhook":
		s.webhook = types.WebhookInfo{}
	}
	if c.Bool("drop_pending_updates") {
		s.updates = nil
	}
	return true, nil
}

// failure is one FailNext rule.
type failure struct {
	method string
	left   int
	err    APIError
}

// FailNext makes the next n calls of method (or of any method when method
// is "*") fail with the given error answer. An empty description gets
// Telegram's usual text for the code; retryAfter > 0 adds
// parameters.retry_after (use it with 429). Rules apply in the order added.
func (s *Server) FailNext(method string, n int, code int, description string, retryAfter int) {
	if description == "" {
		switch code {
		case http.StatusTooManyRequests:
			description = "Too Many Requests: retry after " + strconv.Itoa(retryAfter)
		case http.StatusForbidden:
			description = errBlocked
		case http.StatusBadRequest:
			description = "Bad Request"
		case http.StatusUnauthorized:
			description = "Unauthorized"
		case http.StatusConflict:
			description = "Conflict"
		default:
			description = http.StatusText(code)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.schema.Method(method); m != nil {
		method = m.Name
	}
	s.failures = append(s.failures, &failure{method: method, left: n, err: APIError{Code: code, Description: description, RetryAfter: retryAfter}})
}

const errBlocked = "Forbidden: bot was blocked by the user"

// BlockChat makes the chat's buyer block the bot: every send or edit to the
// chat fails with 403 "Forbidden: bot was blocked by the user" until
// UnblockChat. Like Telegram, it pushes a my_chat_member update (kicked).
func (s *Server) BlockChat(chatID int64) { s.setBlocked(chatID, true) }

// UnblockChat lets the buyer talk to the bot again and pushes a
// my_chat_member update (member).
func (s *Server) UnblockChat(chatID int64) { s.setBlocked(chatID, false) }

func (s *Server) setBlocked(chatID int64, blocked bool) {
	s.mu.Lock()
	if s.blocked[chatID] == blocked {
		s.mu.Unlock()
		return
	}
	if blocked {
		s.blocked[chatID] = true
	} else {
		delete(s.blocked, chatID)
	}
	oldStatus, newStatus := "member", "kicked"
	if !blocked {
		oldStatus, newStatus = newStatus, oldStatus
	}
	upd := &types.ChatMemberUpdated{
		Chat:          s.chatObjLocked(chatID),
		From:          s.userLocked(chatID),
		Date:          s.now().Unix(),
		OldChatMember: types.ChatMember{Status: oldStatus, User: s.bot},
		NewChatMember: types.ChatMember{Status: newStatus, User: s.bot},
	}
	_, vs := s.pushLocked(types.Update{MyChatMember: upd})
	s.mu.Unlock()
	s.report(vs)
}

// ChatFloodLimit makes the server refuse messages to a chat beyond limit
// within per, as Telegram does: the message over the limit is answered
// 429 "Too Many Requests: retry after N" with parameters.retry_after N
// (retryAfter, whole seconds), and so is every message to that chat until
// the wait ends, with the seconds left. Other chats and calls that send no
// message (answers to queries, deletes, reads) are not limited. Messages
// are the send, copy, forward and edit methods; time is the server's
// clock (WithClock). limit 0 turns the limit off.
func (s *Server) ChatFloodLimit(limit int, per, retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flood = floodLimit{limit: limit, per: per, wait: retryAfter}
	s.floods = map[int64]*chatFlood{}
}

type floodLimit struct {
	limit     int
	per, wait time.Duration
}

// chatFlood is one chat's messages within the limit's window and the end
// of its flood wait.
type chatFlood struct {
	sent  []time.Time
	until time.Time
}

// floodLocked applies the chat flood limit to a call and returns the 429
// for a refused one.
func (s *Server) floodLocked(method string, c *calls.Call) *APIError {
	if s.flood.limit <= 0 || !isMessageMethod(method) {
		return nil
	}
	id, ok := c.Params["chat_id"].(int64)
	if !ok {
		return nil
	}
	now := s.now()
	f := s.floods[id]
	if f == nil {
		f = &chatFlood{}
		s.floods[id] = f
	}
	if now.Before(f.until) {
		return tooMany(f.until.Sub(now))
	}
	keep := f.sent[:0]
	for _, at := range f.sent {
		if now.Sub(at) < s.flood.per {
			keep = append(keep, at)
		}
	}
	f.sent = keep
	if len(f.sent) >= s.flood.limit {
		f.until, f.sent = now.Add(s.flood.wait), nil
		return tooMany(s.flood.wait)
	}
	f.sent = append(f.sent, now)
	return nil
}

func tooMany(wait time.Duration) *APIError {
	secs := int((wait + time.Second - 1) / time.Second)
	return &APIError{Code: http.StatusTooManyRequests, Description: "Too Many Requests: retry after " + strconv.Itoa(secs), RetryAfter: secs}
}

// isMessageMethod reports whether method puts a message in a chat or
// changes one: what Telegram's per-chat limit counts.
func isMessageMethod(method string) bool {
	for _, p := range []string{"send", "copyMessage", "forwardMessage", "editMessage"} {
		if strings.HasPrefix(method, p) {
			return true
		}
	}
	return false
}

// SetLatency delays every request by d before it is handled (0 turns it off).
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency = d
}

// takeFaultLocked returns the injected failure for a call, if any.
func (s *Server) takeFaultLocked(method string, c *calls.Call) *APIError {
	for i, f := range s.failures {
		if f.method != method && f.method != "*" {
			continue
		}
		f.left--
		if f.left <= 0 {
			s.failures = append(s.failures[:i:i], s.failures[i+1:]...)
		}
		e := f.err
		return &e
	}
	if id, ok := c.Params["chat_id"].(int64); ok && s.blocked[id] && isMessageMethod(method) {
		return &APIError{Code: http.StatusForbidden, Description: errBlocked}
	}
	return s.floodLocked(method, c)
}
