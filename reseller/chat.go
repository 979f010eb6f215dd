package reseller

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"shopbot/reseller/internal/check"
	"shopbot/reseller/internal/rawjson"
	"shopbot/reseller/internal/transport"
)

// MaxChatImageSize is the largest image SendChatMessage uploads (20 MiB).
// The upstream limit is not documented; this one keeps memory bounded.
const MaxChatImageSize = 20 << 20

// Chat is the order chat of a manual-service order (object "chat").
type Chat struct {
	// Object is "chat".
	Object string `json:"object"`
	// ChatFrozen says whether the chat is frozen.
	ChatFrozen bool `json:"chat_frozen"`
	// ChatOpened says whether the chat is open.
	ChatOpened bool `json:"chat_opened"`
	// ChatReadOnly says whether new messages are refused.
	ChatReadOnly bool `json:"chat_read_only"`
	// Messages are the messages as received (item shape not shown by the
	// spec); a single non-array value is kept as one message.
	Messages []ChatMessage `json:"messages"`
}

// UnmarshalJSON decodes a chat, tolerating a messages value that is not an
// array. JSON null leaves ch unchanged.
func (ch *Chat) UnmarshalJSON(data []byte) error {
	if rawjson.IsNull(data) {
		return nil
	}
	type plain Chat
	var p struct {
		plain
		Messages RawList `json:"messages"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*ch = Chat(p.plain)
	ch.Messages = nil
	for _, m := range p.Messages {
		ch.Messages = append(ch.Messages, ChatMessage{Raw: m})
	}
	return nil
}

// ChatMessage is one chat message, kept as raw JSON because the spec does
// not show its fields. The accessors look for commonly used field names
// (case-insensitively) and return zero values when nothing fits.
type ChatMessage struct {
	// Raw is the message as received; nil when the answer had no JSON body.
	Raw json.RawMessage
}

// UnmarshalJSON keeps the raw message.
func (m *ChatMessage) UnmarshalJSON(data []byte) error {
	m.Raw = append(json.RawMessage(nil), bytes.TrimSpace(data)...)
	return nil
}

// MarshalJSON writes the raw message back (null when empty).
func (m ChatMessage) MarshalJSON() ([]byte, error) {
	if len(m.Raw) == 0 {
		return []byte("null"), nil
	}
	return m.Raw, nil
}

// Text returns the message text: the message itself when it is a JSON
// string, else the first of text, body, message, content, msg or caption
// (looking one level into an object value such as {"message":{"text":..}}).
func (m *ChatMessage) Text() string { return rawjson.Text(m.Raw) }

// Time returns when the message was sent and whether a time was found. It
// reads created_at, at, time, date, timestamp, sent_at, created, datetime or
// ts, as RFC 3339 or common date-time strings, or as Unix time in seconds,
// milliseconds, microseconds or nanoseconds (number or numeric string).
func (m *ChatMessage) Time() (time.Time, bool) { return rawjson.Time(m.Raw) }

// ID returns the message's id, message_id, number or uuid as text, or "".
func (m *ChatMessage) ID() string { return rawjson.ID(m.Raw) }

// Author returns who wrote the message (author, from, sender, user,
// username, name or role, looking into an object value for its name,
// username, role or type), or "".
func (m *ChatMessage) Author() string { return rawjson.Author(m.Raw) }

// Image returns an attached image's URL or name (image, image_url,
// attachment, photo, file, file_url, url), or "".
func (m *ChatMessage) Image() string { return rawjson.Image(m.Raw) }

// FromOperator reports whether the message was written by the upstream
// operator (support, seller) rather than by us, and whether that could be
// told at all. It looks at boolean flags such as is_operator, is_admin,
// from_me or is_mine, then at role-like fields (role, author_type, sender,
// from, direction ...) holding words such as operator, admin, support,
// reseller, client or user, also inside an author object.
func (m *ChatMessage) FromOperator() (fromOperator, known bool) { return rawjson.FromOperator(m.Raw) }

// ChatMessageInput is a message to send to an order chat: Body, Image or
// both.
type ChatMessageInput struct {
	// Body is the text; "" sends no text.
	Body string
	// Image is an image to attach (read fully, at most MaxChatImageSize);
	// nil sends no image.
	Image io.Reader
	// ImageName is the uploaded file name; "image" when "".
	ImageName string
	// ImageContentType is the image's media type; sniffed from its first
	// bytes when "".
	ImageContentType string
}

// Chat returns the chat of a manual-service order: GET /orders/{number}/chat.
func (c *Client) Chat(ctx context.Context, orderNumber int64) (*Chat, error) {
	if err := check.Number("number", orderNumber); err != nil {
		return nil, err
	}
	path := "/orders/" + strconv.FormatInt(orderNumber, 10) + "/chat"
	return getJSON[Chat](ctx, c, "GET /orders/{number}/chat", path, nil)
}

// SendChatMessage sends text and/or an image to an order chat: POST
// /orders/{number}/chat as multipart/form-data (parts "body" and "image").
// It is retried only when the request provably was not sent (429, connection
// refused); other failures are returned as they are. The answer is returned
// raw; if the upstream answered 2xx without a JSON body, Raw is nil and the
// error is nil (the message was accepted).
func (c *Client) SendChatMessage(ctx context.Context, orderNumber int64, msg *ChatMessageInput) (*ChatMessage, error) {
	if err := check.Number("number", orderNumber); err != nil {
		return nil, err
	}
	if msg == nil || (strings.TrimSpace(msg.Body) == "" && msg.Image == nil) {
		return nil, invalid("body", "a message needs text or an image")
	}
	body, contentType, err := transport.EncodeForm(msg.Body, msg.Image, msg.ImageName, msg.ImageContentType, MaxChatImageSize)
	if err != nil {
		return nil, err
	}
	var raw []byte
	path := "/orders/" + strconv.FormatInt(orderNumber, 10) + "/chat"
	err = c.tr.Do(ctx, &transport.Call{Method: http.MethodPost, Route: "POST /orders/{number}/chat", Path: path,
		Body: body, ContentType: contentType, Policy: policyUnsent}, &raw)
	if err != nil {
		return nil, err
	}
	out := &ChatMessage{}
	if raw = bytes.TrimSpace(raw); len(raw) > 0 && json.Valid(raw) {
		out.Raw = raw
	}
	return out, nil
}

// ChatImage is an image downloaded from an order chat.
type ChatImage struct {
	// Data is the content, at most MaxChatImageSize bytes.
	Data []byte
	// ContentType is the media type the server gave, or the one sniffed from
	// Data when it gave none or a generic one.
	ContentType string
	// Name is the last element of the URL's path ("image" when empty).
	Name string
}

// DownloadChatImage fetches the image a chat message refers to
// (ChatMessage.Image): an absolute http(s) URL, or a path relative to the
// base URL. The API key goes only to the base URL's own scheme and host; an
// image hosted elsewhere is fetched without it.
//
// Only the base URL's host and the hosts given to WithMediaHosts are
// fetched from, and only at public addresses: the address each connection
// dials is checked after DNS resolution, and every redirect (at most
// MaxChatImageRedirects) is checked like the first URL. The one address not
// checked is the base URL's own host and port, where every API call goes.
// A refused URL is a *ValidationError wrapping ErrImageRefused. One
// attempt, bounded by WithImageTimeout (body included); a non-2xx answer is
// an *Error, an image over MaxChatImageSize a *ValidationError.
func (c *Client) DownloadChatImage(ctx context.Context, ref string) (*ChatImage, error) {
	return c.downloadImage(ctx, ref, MaxChatImageSize, "GET chat image")
}

// DownloadImage fetches an image a catalog entry refers to (its image URL)
// with every guard of DownloadChatImage (the hosts, the public addresses,
// the redirects, the timeout), refusing one over limit bytes (at most
// MaxChatImageSize) with a *ValidationError.
func (c *Client) DownloadImage(ctx context.Context, ref string, limit int) (*ChatImage, error) {
	if limit <= 0 || limit > MaxChatImageSize {
		limit = MaxChatImageSize
	}
	return c.downloadImage(ctx, ref, limit, "GET catalog image")
}

func (c *Client) downloadImage(ctx context.Context, ref string, limit int, route string) (*ChatImage, error) {
	img, err := c.tr.DownloadImage(ctx, ref, limit, route)
	if err != nil {
		return nil, err
	}
	return &ChatImage{Data: img.Data, ContentType: img.ContentType, Name: img.Name}, nil
}
