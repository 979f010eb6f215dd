package resellersim

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"shopbot/reseller/resellersim/chat"
	"shopbot/reseller/resellersim/internal/wire"
)

func (s *Sim) addMessage(o *order, author, text string, image int, at time.Time) chat.Message {
	m := chat.Message{ID: s.nextMessageID, Author: author, Text: text, Image: image, CreatedAt: at}
	s.nextMessageID++
	o.chat.Messages = append(o.chat.Messages, m)
	return m
}

// openChat opens the chat of a manual order with the operator's greeting.
func (s *Sim) openChat(o *order, now time.Time) {
	o.chat.Opened = true
	s.addMessage(o, chat.AuthorOperator, fmt.Sprintf(
		"Hello! I am the operator for order #%d (%s). I will write here if I need anything from you.",
		o.Number, o.ProductName), 0, now)
}

// chatOrder finds a manual-service order for the chat endpoints.
func (s *Sim) chatOrder(seg string) (*order, error) {
	o, err := s.pathOrder(seg)
	if err != nil {
		return nil, err
	}
	if o.Type != LineManualService {
		return nil, wire.Invalid("order %d has no chat: chats exist for manual service orders only", o.Number)
	}
	return o, nil
}

func (s *Sim) getChat(q *wire.Request) (any, error) {
	o, err := s.chatOrder(q.Path[1])
	if err != nil {
		return nil, err
	}
	return chat.ViewOf(o.chat), nil
}

func (s *Sim) postChat(q *wire.Request) (any, error) {
	o, err := s.chatOrder(q.Path[1])
	if err != nil {
		return nil, err
	}
	if err := o.chat.CheckWritable(o.Number); err != nil {
		return nil, err
	}
	text, img, err := chat.ParseForm(q, maxImageBytes)
	if err != nil {
		return nil, err
	}
	imageID := 0
	if img != nil {
		imageID = s.nextMessageID
		s.files[imageID] = *img
	}
	sent := s.addMessage(o, chat.AuthorClient, text, imageID, q.Now)
	script := s.script
	if script == nil {
		script = chat.DefaultScript
	}
	// The script runs without the lock so that it may call the Sim.
	s.mu.Unlock()
	replies := script(o.Number, text)
	s.mu.Lock()
	for _, r := range replies {
		s.addMessage(o, chat.AuthorOperator, r, 0, q.Now)
	}
	return chat.Sent(sent), nil
}

func (s *Sim) serveFile(w http.ResponseWriter, seg string) {
	id, err := strconv.Atoi(seg)
	s.mu.Lock()
	f, ok := s.files[id]
	s.mu.Unlock()
	if err != nil || !ok {
		wire.WriteError(w, http.StatusNotFound, "not_found", "file not found")
		return
	}
	w.Header().Set("Content-Type", f.ContentType)
	w.Write(f.Data)
}

// onManualOrder runs change on manual-service order n under the lock, or
// says why there is no such order.
func (s *Sim) onManualOrder(n int, change func(o *order)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.ordersByNum[n]
	if !ok {
		return fmt.Errorf("order %d not found", n)
	}
	if o.Type != LineManualService {
		return fmt.Errorf("order %d is a %s order, not a manual service order", n, o.Type)
	}
	change(o)
	return nil
}

// OperatorSays adds an operator message to the chat of manual-service order
// n, opening the chat if needed.
func (s *Sim) OperatorSays(n int, text string) error {
	return s.onManualOrder(n, func(o *order) {
		o.chat.Opened = true
		s.addMessage(o, chat.AuthorOperator, text, 0, s.clock())
	})
}

// OperatorSendsImage adds an operator message with an image (and text, which
// may be empty) to the chat of manual-service order n, opening the chat if
// needed. The image is served at the URL in the message's "image" field.
func (s *Sim) OperatorSendsImage(n int, text, contentType string, data []byte) error {
	if len(data) == 0 {
		return errors.New("an image needs content")
	}
	if contentType == "" {
		contentType = http.DetectContentType(data)
	}
	return s.onManualOrder(n, func(o *order) {
		o.chat.Opened = true
		imageID := s.nextMessageID
		s.files[imageID] = chat.File{ContentType: contentType, Data: slices.Clone(data)}
		s.addMessage(o, chat.AuthorOperator, strings.TrimSpace(text), imageID, s.clock())
	})
}

// OperatorSendsImageURL adds an operator message whose "image" field is
// the given URL verbatim, for tests of what the shop fetches.
func (s *Sim) OperatorSendsImageURL(n int, text, imageURL string) error {
	return s.onManualOrder(n, func(o *order) {
		o.chat.Opened = true
		s.addMessage(o, chat.AuthorOperator, strings.TrimSpace(text), 0, s.clock())
		o.chat.Messages[len(o.chat.Messages)-1].ImageURL = imageURL
	})
}

// ChatImage returns the content of the image of a chat message (0 or an
// unknown id: false).
func (s *Sim) ChatImage(image int) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.files[image]
	return slices.Clone(f.Data), ok
}

// FreezeChat freezes the chat of manual-service order n: chat_frozen becomes
// true and the buyer can no longer write.
func (s *Sim) FreezeChat(n int) error {
	return s.onManualOrder(n, func(o *order) { o.chat.Frozen = true })
}

// SetChatReadOnly sets chat_read_only on the chat of manual-service order n;
// a read-only chat rejects buyer messages.
func (s *Sim) SetChatReadOnly(n int, readOnly bool) error {
	return s.onManualOrder(n, func(o *order) { o.chat.ReadOnly = readOnly })
}

// ChatMessages returns the messages of the chat of order n, oldest first
// (nil for an order without a chat).
func (s *Sim) ChatMessages(n int) []chat.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.ordersByNum[n]
	if !ok || o.chat == nil {
		return nil
	}
	return slices.Clone(o.chat.Messages)
}
