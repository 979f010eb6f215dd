package resellersim

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"shopbot/reseller/resellersim/internal/wire"
)

// Chat message authors.
const (
	AuthorOperator = "operator"
	AuthorClient   = "client"
)

const maxChatText = 4000

// ChatMessage is a message in a manual-service order chat.
type ChatMessage struct {
	ID     int
	Author string // AuthorOperator or AuthorClient
	Text   string
	// Image is the id of the uploaded image, 0 when there is none. It is
	// served at /api/v1/chat-files/{id}.
	Image int
	// ImageURL, when set, is served as the message's "image" field as is
	// (a hostile or misconfigured upstream pointing anywhere).
	ImageURL  string
	CreatedAt time.Time
}

type chat struct {
	opened   bool
	frozen   bool
	readOnly bool
	messages []ChatMessage
}

type chatFile struct {
	contentType string
	data        []byte
}

func (s *Sim) addMessage(o *order, author, text string, image int, at time.Time) ChatMessage {
	m := ChatMessage{ID: s.nextMessageID, Author: author, Text: text, Image: image, CreatedAt: at}
	s.nextMessageID++
	o.chat.messages = append(o.chat.messages, m)
	return m
}

// openChat opens the chat of a manual order with the operator's greeting.
func (s *Sim) openChat(o *order, now time.Time) {
	o.chat.opened = true
	s.addMessage(o, AuthorOperator, fmt.Sprintf(
		"Hello! I am the operator for order #%d (%s). I will write here if I need anything from you.",
		o.Number, o.ProductName), 0, now)
}

// defaultScript acknowledges every buyer message.
func defaultScript(_ int, buyerMsg string) []string {
	if buyerMsg == "" {
		return []string{"Thanks, image received"}
	}
	return []string{"Got it: " + buyerMsg}
}

type messageJSON struct {
	Object    string  `json:"object"`
	ID        int     `json:"id"`
	Author    string  `json:"author"`
	Text      *string `json:"text"`
	Image     *string `json:"image"`
	CreatedAt string  `json:"created_at"`
}

func messageView(m ChatMessage, r *http.Request) messageJSON {
	j := messageJSON{Object: "chat_message", ID: m.ID, Author: m.Author, Text: wire.NullString(m.Text), CreatedAt: wire.TS(m.CreatedAt)}
	if m.ImageURL != "" {
		j.Image = wire.Ptr(m.ImageURL)
	} else if m.Image != 0 {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		j.Image = wire.Ptr(fmt.Sprintf("%s://%s%s/chat-files/%d", scheme, r.Host, PathPrefix, m.Image))
	}
	return j
}

// chatView is a chat copied under the lock and rendered with the request.
type chatView struct {
	frozen, opened, readOnly bool
	messages                 []ChatMessage
}

func (v chatView) render(r *http.Request) any {
	msgs := make([]messageJSON, 0, len(v.messages))
	for _, m := range v.messages {
		msgs = append(msgs, messageView(m, r))
	}
	return struct {
		Object       string        `json:"object"`
		ChatFrozen   bool          `json:"chat_frozen"`
		ChatOpened   bool          `json:"chat_opened"`
		ChatReadOnly bool          `json:"chat_read_only"`
		Messages     []messageJSON `json:"messages"`
	}{"chat", v.frozen, v.opened, v.readOnly, msgs}
}

// messageResult is a sent message rendered with the request.
type messageResult ChatMessage

func (m messageResult) render(r *http.Request) any { return messageView(ChatMessage(m), r) }

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
	c := o.chat
	return chatView{c.frozen, c.opened, c.readOnly, slices.Clone(c.messages)}, nil
}

// parseChatForm reads the body and image parts of a multipart chat message.
func parseChatForm(q *wire.Request) (text string, img *chatFile, err error) {
	mt, params, perr := mime.ParseMediaType(q.R.Header.Get("Content-Type"))
	if perr != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return "", nil, wire.Invalid("the message must be sent as multipart/form-data")
	}
	mr := multipart.NewReader(bytes.NewReader(q.Body), params["boundary"])
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", nil, wire.Invalid("malformed multipart body")
		}
		switch part.FormName() {
		case "body":
			b, err := io.ReadAll(io.LimitReader(part, maxChatText*4+1))
			if err != nil {
				return "", nil, wire.Invalid("malformed multipart body")
			}
			if len([]rune(string(b))) > maxChatText {
				return "", nil, wire.Invalid("body is longer than %d characters", maxChatText)
			}
			text = strings.TrimSpace(string(b))
		case "image":
			b, err := io.ReadAll(io.LimitReader(part, maxImageBytes+1))
			if err != nil {
				return "", nil, wire.Invalid("malformed multipart body")
			}
			if len(b) > maxImageBytes {
				return "", nil, wire.Invalid("image is larger than %d bytes", maxImageBytes)
			}
			if len(b) > 0 {
				ct := part.Header.Get("Content-Type")
				if ct == "" || ct == "application/octet-stream" {
					ct = http.DetectContentType(b)
				}
				img = &chatFile{contentType: ct, data: b}
			}
		}
		part.Close()
	}
	if text == "" && img == nil {
		return "", nil, wire.Invalid("a message needs body text or an image")
	}
	return text, img, nil
}

func (s *Sim) postChat(q *wire.Request) (any, error) {
	o, err := s.chatOrder(q.Path[1])
	if err != nil {
		return nil, err
	}
	switch {
	case !o.chat.opened:
		return nil, wire.Invalid("the chat of order %d is not open", o.Number)
	case o.chat.frozen:
		return nil, wire.Invalid("the chat of order %d is frozen", o.Number)
	case o.chat.readOnly:
		return nil, wire.Invalid("the chat of order %d is read-only", o.Number)
	}
	text, img, err := parseChatForm(q)
	if err != nil {
		return nil, err
	}
	imageID := 0
	if img != nil {
		imageID = s.nextMessageID
		s.files[imageID] = *img
	}
	sent := s.addMessage(o, AuthorClient, text, imageID, q.Now)
	script := s.script
	if script == nil {
		script = defaultScript
	}
	// The script runs without the lock so that it may call the Sim.
	s.mu.Unlock()
	replies := script(o.Number, text)
	s.mu.Lock()
	for _, r := range replies {
		s.addMessage(o, AuthorOperator, r, 0, q.Now)
	}
	return messageResult(sent), nil
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
	w.Header().Set("Content-Type", f.contentType)
	w.Write(f.data)
}

// manualOrder finds a manual-service order for the chat hooks.
func (s *Sim) manualOrder(n int) (*order, error) {
	o, ok := s.ordersByNum[n]
	if !ok {
		return nil, fmt.Errorf("order %d not found", n)
	}
	if o.Type != LineManualService {
		return nil, fmt.Errorf("order %d is a %s order, not a manual service order", n, o.Type)
	}
	return o, nil
}

// OperatorSays adds an operator message to the chat of manual-service order
// n, opening the chat if needed.
func (s *Sim) OperatorSays(n int, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, err := s.manualOrder(n)
	if err != nil {
		return err
	}
	o.chat.opened = true
	s.addMessage(o, AuthorOperator, text, 0, s.clock())
	return nil
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
	s.mu.Lock()
	defer s.mu.Unlock()
	o, err := s.manualOrder(n)
	if err != nil {
		return err
	}
	o.chat.opened = true
	imageID := s.nextMessageID
	s.files[imageID] = chatFile{contentType: contentType, data: slices.Clone(data)}
	s.addMessage(o, AuthorOperator, strings.TrimSpace(text), imageID, s.clock())
	return nil
}

// OperatorSendsImageURL adds an operator message whose "image" field is
// the given URL verbatim, for tests of what the shop fetches.
func (s *Sim) OperatorSendsImageURL(n int, text, imageURL string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, err := s.manualOrder(n)
	if err != nil {
		return err
	}
	o.chat.opened = true
	s.addMessage(o, AuthorOperator, strings.TrimSpace(text), 0, s.clock())
	o.chat.messages[len(o.chat.messages)-1].ImageURL = imageURL
	return nil
}

// ChatImage returns the content of the image of a chat message (0 or an
// unknown id: false).
func (s *Sim) ChatImage(image int) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.files[image]
	return slices.Clone(f.data), ok
}

// FreezeChat freezes the chat of manual-service order n: chat_frozen becomes
// true and the buyer can no longer write.
func (s *Sim) FreezeChat(n int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, err := s.manualOrder(n)
	if err != nil {
		return err
	}
	o.chat.frozen = true
	return nil
}

// SetChatReadOnly sets chat_read_only on the chat of manual-service order n;
// a read-only chat rejects buyer messages.
func (s *Sim) SetChatReadOnly(n int, readOnly bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, err := s.manualOrder(n)
	if err != nil {
		return err
	}
	o.chat.readOnly = readOnly
	return nil
}

// ChatMessages returns the messages of the chat of order n, oldest first
// (nil for an order without a chat).
func (s *Sim) ChatMessages(n int) []ChatMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.ordersByNum[n]
	if !ok || o.chat == nil {
		return nil
	}
	return slices.Clone(o.chat.messages)
}
