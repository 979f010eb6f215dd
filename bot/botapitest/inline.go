package botapitest

import (
	"fmt"
	"time"

	"shopbot/bot/botapitest/calls"
	"shopbot/bot/botapitest/types"
)

// Inline mode: a test types a query after the bot's username
// (PushInlineQuery), reads the bot's answer (InlineAnswer), and may send one
// of its results (PushChosenInlineResult). A Mini App's prepared messages
// (savePreparedInlineMessage) are stored and can be read back
// (PreparedMessage).

// inlineQueryTTL is how long Telegram waits for an inline query's answer.
const inlineQueryTTL = 10 * time.Second

// preparedTTL is how long a prepared inline message can be sent.
const preparedTTL = 24 * time.Hour

type inlineState struct {
	at       time.Time
	from     int64
	query    string
	answered bool
	answer   InlineAnswer
}

// InlineAnswer is how the bot answered an inline query: its parameters as
// sent (the results decoded from their JSON).
type InlineAnswer struct {
	Results    []map[string]any
	CacheTime  int64
	IsPersonal bool
	NextOffset string
	Button     map[string]any // nil when none
}

// PreparedMessage is a stored prepared inline message.
type PreparedMessage struct {
	UserID  int64
	Result  map[string]any
	Expires time.Time
	Allow   map[string]bool // allow_user_chats, allow_group_chats, ...
}

// PushInlineQuery queues an inline_query update as if user (a buyer's chat
// id) typed query after the bot's username in a chat of chatType
// ("sender", "private", "group", "supergroup", "channel"; "" for none),
// asking for the page at offset. It returns the query id.
func (s *Server) PushInlineQuery(user int64, query, offset, chatType string) string {
	s.mu.Lock()
	id := fmt.Sprintf("iq%d", s.nextSeqLocked())
	s.inlineLocked()[id] = &inlineState{at: s.now(), from: user, query: query}
	q := &types.InlineQuery{ID: id, From: s.userLocked(user), Query: query, Offset: offset, ChatType: chatType}
	_, vs := s.pushLocked(types.Update{InlineQuery: q})
	s.mu.Unlock()
	s.report(vs)
	return id
}

// PushChosenInlineResult queues a chosen_inline_result update as if user
// sent the result resultID of their query (what Telegram sends when inline
// feedback is on).
func (s *Server) PushChosenInlineResult(user int64, resultID, query string) types.Update {
	s.mu.Lock()
	r := &types.ChosenInlineResult{ResultID: resultID, From: s.userLocked(user), Query: query}
	u, vs := s.pushLocked(types.Update{ChosenInlineResult: r})
	s.mu.Unlock()
	s.report(vs)
	return u
}

// InlineAnswer returns how the bot answered an inline query and whether it
// did.
func (s *Server) InlineAnswer(queryID string) (InlineAnswer, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.inline[queryID]
	if q == nil || !q.answered {
		return InlineAnswer{}, false
	}
	return q.answer, true
}

// PreparedMessage returns the prepared inline message of id and whether it
// exists.
func (s *Server) PreparedMessage(id string) (PreparedMessage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.prepared[id]
	return p, ok
}

func (s *Server) inlineLocked() map[string]*inlineState {
	if s.inline == nil {
		s.inline = map[string]*inlineState{}
	}
	return s.inline
}

// answerInlineQuery records the answer of a query that was pushed, not yet
// answered and not older than Telegram waits.
func (s *Server) answerInlineQuery(c *calls.Call) (any, *APIError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.inlineLocked()[c.String("inline_query_id")]
	if q == nil || q.answered || s.now().Sub(q.at) > inlineQueryTTL {
		return nil, badRequest(errQueryTooOld)
	}
	a := InlineAnswer{CacheTime: -1, IsPersonal: c.Bool("is_personal"), NextOffset: c.String("next_offset")}
	if c.Has("cache_time") {
		a.CacheTime = c.Int("cache_time")
	}
	if err := c.JSON("results", &a.Results); err != nil {
		return nil, badRequest("can't parse results JSON object")
	}
	if c.Has("button") {
		if err := c.JSON("button", &a.Button); err != nil {
			return nil, badRequest("can't parse button JSON object")
		}
	}
	q.answered, q.answer = true, a
	return true, nil
}

// savePreparedInlineMessage stores the result for user_id, as Telegram does
// for a Mini App to share with shareMessage.
func (s *Server) savePreparedInlineMessage(c *calls.Call) (any, *APIError) {
	var result map[string]any
	if err := c.JSON("result", &result); err != nil {
		return nil, badRequest("can't parse result JSON object")
	}
	allow := map[string]bool{}
	for _, k := range []string{"allow_user_chats", "allow_bot_chats", "allow_group_chats", "allow_channel_chats"} {
		allow[k] = c.Bool(k)
	}
	if !allow["allow_user_chats"] && !allow["allow_bot_chats"] && !allow["allow_group_chats"] && !allow["allow_channel_chats"] {
		return nil, badRequest("at least one chat type must be allowed")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prepared == nil {
		s.prepared = map[string]PreparedMessage{}
	}
	id := fmt.Sprintf("prep%d", s.nextSeqLocked())
	exp := s.now().Add(preparedTTL)
	s.prepared[id] = PreparedMessage{UserID: c.Int("user_id"), Result: result, Expires: exp, Allow: allow}
	return types.PreparedInlineMessage{ID: id, ExpirationDate: exp.Unix()}, nil
}
