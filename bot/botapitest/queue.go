package botapitest

import "encoding/json"

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
