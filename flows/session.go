package flows

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// SessionVersion is the schema version of the conversation document written
// by this code. Version 1 documents are migrated on load; anything else is
// reset politely.
const SessionVersion = 2

// Session is one chat's conversation state, stored as JSON. The step is a
// name, never an index, so flows can change without breaking live chats.
type Session struct {
	V       int               `json:"v"`
	Lang    string            `json:"lang,omitempty"`
	Flow    string            `json:"flow,omitempty"`
	Step    string            `json:"step,omitempty"`
	Nonce   string            `json:"nonce,omitempty"`
	MenuMsg int               `json:"menu_msg,omitempty"` // message id of the live keyboard
	Data    map[string]string `json:"data,omitempty"`
	Back    []string          `json:"back,omitempty"` // steps to return to with Back
	Expires time.Time         `json:"expires,omitzero"`
	Started time.Time         `json:"started,omitzero"` // first /start

	// MenuImage says the live menu is a photo (the host's key of its
	// image); "" for a text menu. Only the host reads and writes it.
	MenuImage string `json:"menu_image,omitempty"`

	// Username is the user's Telegram @username (without "@"; "" for
	// none) as the host last recorded it in the buyer registry, and
	// UsernameAt when: the host writes the registry only when an update
	// brings another name or the record is old, so an unchanged name
	// costs no write. Only the host reads and writes them.
	Username   string    `json:"username,omitempty"`
	UsernameAt time.Time `json:"username_at,omitzero"`
}

// sessionV1 is the layout written before versioned flows: flat variables in
// "vars" and the menu message in "msg".
type sessionV1 struct {
	Lang string            `json:"lang"`
	Flow string            `json:"flow"`
	Step string            `json:"step"`
	Msg  int               `json:"msg"`
	Vars map[string]string `json:"vars"`
}

// LoadResult says how a stored document was read.
type LoadResult int

// How a stored conversation document was read.
const (
	Loaded   LoadResult = iota // current version, or none stored
	Migrated                   // an older version, converted
	Reset                      // unreadable or unknown version: started afresh
)

// DecodeSession reads a stored document. An empty document is a new chat.
// An old version is migrated; an unknown version or corrupt JSON gives a
// fresh session (keeping the language when it can be read) and Reset.
func DecodeSession(doc []byte) (Session, LoadResult) {
	if len(doc) == 0 {
		return Session{V: SessionVersion}, Loaded
	}
	var head struct {
		V    int    `json:"v"`
		Lang string `json:"lang"`
	}
	if err := json.Unmarshal(doc, &head); err != nil {
		return Session{V: SessionVersion}, Reset
	}
	switch head.V {
	case SessionVersion:
		var s Session
		if err := json.Unmarshal(doc, &s); err != nil {
			return Session{V: SessionVersion, Lang: head.Lang}, Reset
		}
		return s, Loaded
	case 1:
		var old sessionV1
		if err := json.Unmarshal(doc, &old); err != nil {
			return Session{V: SessionVersion, Lang: head.Lang}, Reset
		}
		return Session{V: SessionVersion, Lang: old.Lang, Flow: old.Flow, Step: old.Step, MenuMsg: old.Msg, Data: old.Vars}, Migrated
	default:
		return Session{V: SessionVersion, Lang: head.Lang}, Reset
	}
}

// Encode returns the document to store.
func (s *Session) Encode() []byte {
	s.V = SessionVersion
	b, _ := json.Marshal(s) // a struct of strings, ints and times always marshals
	return b
}

// Key names a flow variable (Session.Data). Each flow declares its keys as
// constants; the string is the variable's name in the stored document, so
// a key in use keeps its string, or live chats lose what they entered.
type Key string

// Get returns a flow variable ("" when unset).
func (s *Session) Get(k Key) string { return s.Data[string(k)] }

// Set stores a flow variable; an empty value removes it.
func (s *Session) Set(k Key, v string) {
	if v == "" {
		delete(s.Data, string(k))
		return
	}
	if s.Data == nil {
		s.Data = map[string]string{}
	}
	s.Data[string(k)] = v
}

// Int returns a flow variable stored as a number (SetInt); 0 when it is
// unset or not a number.
func (s *Session) Int(k Key) int {
	n, _ := strconv.Atoi(s.Get(k))
	return n
}

// Int64 is Int for a 64-bit number (an order's or a user's id).
func (s *Session) Int64(k Key) int64 {
	n, _ := strconv.ParseInt(s.Get(k), 10, 64)
	return n
}

// SetInt stores n as a flow variable, in decimal digits ("0" too; Set
// with "" removes it).
func (s *Session) SetInt(k Key, n int64) { s.Set(k, strconv.FormatInt(n, 10)) }

// listSep separates the entries of a list variable.
const listSep = "\x1f"

// List returns a flow variable stored as a list (SetList); nil when it is
// unset.
func (s *Session) List(k Key) []string {
	v := s.Get(k)
	if v == "" {
		return nil
	}
	return strings.Split(v, listSep)
}

// SetList stores a list of entries as a flow variable; no entries, or one
// empty entry, removes it. Entries must not contain \x1f.
func (s *Session) SetList(k Key, entries []string) { s.Set(k, strings.Join(entries, listSep)) }

// Decimal returns a flow variable stored as an amount (its decimal
// string); ok is false when it is unset or not a number.
func (s *Session) Decimal(k Key) (d decimal.Decimal, ok bool) {
	d, err := decimal.NewFromString(s.Get(k))
	return d, err == nil
}

// Enter starts flow at step with empty data, keeping the language, the live
// menu message and the start time.
func (s *Session) Enter(flow, step string, expires time.Time) {
	s.Flow, s.Step, s.Data, s.Back, s.Expires = flow, step, nil, nil, expires
}

// Goto moves to step, remembering the current one for Back.
func (s *Session) Goto(step string) {
	if s.Step != "" && s.Step != step {
		s.Back = append(s.Back, s.Step)
		if len(s.Back) > 16 {
			s.Back = s.Back[len(s.Back)-16:]
		}
	}
	s.Step = step
}

// GoBack returns to the previous step; false when there is none.
func (s *Session) GoBack() bool {
	if len(s.Back) == 0 {
		return false
	}
	s.Step = s.Back[len(s.Back)-1]
	s.Back = s.Back[:len(s.Back)-1]
	return true
}

// Clear leaves any flow, back at the main menu.
func (s *Session) Clear() {
	s.Flow, s.Step, s.Data, s.Back, s.Expires = "", "", nil, nil, time.Time{}
}
