package flows

import (
	"encoding/json"
	"time"
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

// Get returns a flow variable.
func (s *Session) Get(k string) string { return s.Data[k] }

// Set stores a flow variable; an empty value removes it.
func (s *Session) Set(k, v string) {
	if v == "" {
		delete(s.Data, k)
		return
	}
	if s.Data == nil {
		s.Data = map[string]string{}
	}
	s.Data[k] = v
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
