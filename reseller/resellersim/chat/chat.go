package chat

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"
	"time"

	"shopbot/reseller/resellersim/internal/wire"
)

// Message authors.
const (
	AuthorOperator = "operator"
	AuthorClient   = "client"
)

// MaxText is the longest message body, in characters.
const MaxText = 4000

// Message is a message in a manual-service order chat.
type Message struct {
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

// Chat is the chat of one manual-service order.
type Chat struct {
	Opened   bool
	Frozen   bool
	ReadOnly bool
	Messages []Message
}

// File is an uploaded chat image.
type File struct {
	ContentType string
	Data        []byte
}

// CheckWritable answers why the buyer cannot write in the chat of order
// number, or nil when they can.
func (c *Chat) CheckWritable(number int) error {
	switch {
	case !c.Opened:
		return wire.Invalid("the chat of order %d is not open", number)
	case c.Frozen:
		return wire.Invalid("the chat of order %d is frozen", number)
	case c.ReadOnly:
		return wire.Invalid("the chat of order %d is read-only", number)
	}
	return nil
}

// DefaultScript is the operator who acknowledges every buyer message.
func DefaultScript(_ int, buyerMsg string) []string {
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

func messageView(m Message, r *http.Request) messageJSON {
	j := messageJSON{Object: "chat_message", ID: m.ID, Author: m.Author, Text: wire.NullString(m.Text), CreatedAt: wire.TS(m.CreatedAt)}
	if m.ImageURL != "" {
		j.Image = wire.Ptr(m.ImageURL)
	} else if m.Image != 0 {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		j.Image = wire.Ptr(fmt.Sprintf("%s://%s%s/chat-files/%d", scheme, r.Host, wire.PathPrefix, m.Image))
	}
	return j
}

// View is a chat copied under the simulator's lock, rendered with the
// request.
type View Chat

// ViewOf copies c.
func ViewOf(c *Chat) View {
	v := View(*c)
	v.Messages = slices.Clone(c.Messages)
	return v
}

// Render is the chat object.
func (v View) Render(r *http.Request) any {
	msgs := make([]messageJSON, 0, len(v.Messages))
	for _, m := range v.Messages {
		msgs = append(msgs, messageView(m, r))
	}
	return struct {
		Object       string        `json:"object"`
		ChatFrozen   bool          `json:"chat_frozen"`
		ChatOpened   bool          `json:"chat_opened"`
		ChatReadOnly bool          `json:"chat_read_only"`
		Messages     []messageJSON `json:"messages"`
	}{"chat", v.Frozen, v.Opened, v.ReadOnly, msgs}
}

// Sent is a sent message, rendered with the request.
type Sent Message

// Render is the chat_message object.
func (m Sent) Render(r *http.Request) any { return messageView(Message(m), r) }

// ParseForm reads the body and image parts of a multipart chat message; an
// image may have up to maxImage bytes.
func ParseForm(q *wire.Request, maxImage int) (text string, img *File, err error) {
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
			b, err := io.ReadAll(io.LimitReader(part, MaxText*4+1))
			if err != nil {
				return "", nil, wire.Invalid("malformed multipart body")
			}
			if len([]rune(string(b))) > MaxText {
				return "", nil, wire.Invalid("body is longer than %d characters", MaxText)
			}
			text = strings.TrimSpace(string(b))
		case "image":
			b, err := io.ReadAll(io.LimitReader(part, int64(maxImage)+1))
			if err != nil {
				return "", nil, wire.Invalid("malformed multipart body")
			}
			if len(b) > maxImage {
				return "", nil, wire.Invalid("image is larger than %d bytes", maxImage)
			}
			if len(b) > 0 {
				ct := part.Header.Get("Content-Type")
				if ct == "" || ct == "application/octet-stream" {
					ct = http.DetectContentType(b)
				}
				img = &File{ContentType: ct, Data: b}
			}
		}
		part.Close()
	}
	if text == "" && img == nil {
		return "", nil, wire.Invalid("a message needs body text or an image")
	}
	return text, img, nil
}
