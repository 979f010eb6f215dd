package console

import (
	"bytes"
	"errors"
	"image"
	_ "image/jpeg" // the photos staff upload
	_ "image/png"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"shopbot/flows"
	"shopbot/state/redisstore/work"
)

// ticketRow is a ticket in the inbox.
type ticketRow struct {
	Buyer      int64     `json:"buyer"`
	Name       string    `json:"name"`
	Last       time.Time `json:"last"`
	Unread     bool      `json:"unread"`
	AnsweredBy int64     `json:"answered_by,omitempty"`
	Open       bool      `json:"open"`
}

func rowOf(t work.Ticket) ticketRow {
	return ticketRow{Buyer: t.Buyer, Name: t.Name, Last: t.Last, Unread: t.Unread(), AnsweredBy: t.AnsweredBy, Open: t.Open}
}

// tickets is the inbox: the open tickets, latest activity first, with
// their unread marks and who answered last.
func (c *Console) tickets(q *request) (any, *apiError) {
	list, err := c.d.Support.Inbox(q.r.Context(), 100)
	if err != nil {
		return nil, internal()
	}
	rows := make([]ticketRow, 0, len(list))
	for _, t := range list {
		rows = append(rows, rowOf(t))
	}
	return map[string]any{"tickets": rows}, nil
}

func buyerOf(q *request) (int64, *apiError) {
	id, err := strconv.ParseInt(q.r.PathValue("buyer"), 10, 64)
	if err != nil || id <= 0 {
		return 0, bad("console.err.buyer_id")
	}
	return id, nil
}

// thread is a ticket's messages (reading it marks it read).
func (c *Console) thread(q *request) (any, *apiError) {
	buyer, e := buyerOf(q)
	if e != nil {
		return nil, e
	}
	t, msgs, err := c.d.Support.Thread(q.r.Context(), buyer)
	if errors.Is(err, work.ErrNoTicket) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, internal()
	}
	out := make([]msgJSON, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, msgJSON{At: m.At, From: m.From, Via: m.Via, Text: m.Text, Photo: m.Photo, PhotoKey: m.PhotoKey()})
	}
	return map[string]any{"ticket": rowOf(t), "messages": out}, nil
}

// msgJSON is a message of a thread as the page shows it: its photo (if
// Telegram's file id of it is kept) is fetched by its key.
type msgJSON struct {
	At       time.Time `json:"at"`
	From     int64     `json:"from,omitempty"`
	Via      string    `json:"via,omitempty"`
	Text     string    `json:"text,omitempty"`
	Photo    bool      `json:"photo,omitempty"`
	PhotoKey string    `json:"photo_key,omitempty"`
}

type replyBody struct {
	Text string `json:"text"`
}

// The photo of a console answer: what Telegram's sendPhoto takes (at most
// 10 MB, width and height together at most 10000 pixels, one side at most
// 20 times the other), bounded further to keep the upload small.
const (
	maxPhoto      = 5 << 20 // bytes
	maxPhotoSides = 10000   // width + height, pixels
	maxPhotoRatio = 20
	maxCaption    = 900 // characters: the caption's limit with "from staff" around it
)

// reply answers a ticket as an agent's reply in the chat does: with text
// (a JSON body), or with a photo and an optional caption (a
// multipart/form-data body: the file in "photo", the caption in "text"),
// sent to the buyer with sendPhoto.
func (c *Console) reply(q *request) (any, *apiError) {
	buyer, e := buyerOf(q)
	if e != nil {
		return nil, e
	}
	if strings.HasPrefix(q.r.Header.Get("Content-Type"), "multipart/form-data") {
		return c.replyPhoto(q, buyer)
	}
	var b replyBody
	if e := q.decode(&b); e != nil {
		return nil, e
	}
	if strings.TrimSpace(b.Text) == "" {
		return nil, bad("console.err.no_answer")
	}
	return c.answered(q, buyer, c.d.Support.Answer(q.r.Context(), q.actor, buyer, b.Text))
}

// replyPhoto answers a ticket with an uploaded photo, checked first: a
// JPEG or PNG (by its content, not its name) of at most maxPhoto bytes
// whose sides Telegram accepts; a caption of at most maxCaption.
func (c *Console) replyPhoto(q *request, buyer int64) (any, *apiError) {
	q.r.Body = http.MaxBytesReader(q.w, q.r.Body, maxPhoto+maxBody)
	if err := q.r.ParseMultipartForm(1 << 20); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) || strings.Contains(err.Error(), "request body too large") {
			return nil, bad("console.err.photo_size", "max", strconv.Itoa(maxPhoto>>20))
		}
		return nil, bad("console.err.photo_form")
	}
	defer func() { _ = q.r.MultipartForm.RemoveAll() }()
	caption := strings.TrimSpace(q.r.FormValue("text"))
	if len([]rune(caption)) > maxCaption {
		return nil, bad("console.err.caption", "max", strconv.Itoa(maxCaption))
	}
	f, hdr, err := q.r.FormFile("photo")
	if err != nil {
		return nil, bad("console.err.photo_form")
	}
	defer f.Close()
	if hdr.Size > maxPhoto {
		return nil, bad("console.err.photo_size", "max", strconv.Itoa(maxPhoto>>20))
	}
	data, err := io.ReadAll(io.LimitReader(f, maxPhoto+1))
	if err != nil {
		return nil, bad("console.err.photo_form")
	}
	if len(data) > maxPhoto {
		return nil, bad("console.err.photo_size", "max", strconv.Itoa(maxPhoto>>20))
	}
	name, e := checkPhoto(data)
	if e != nil {
		return nil, e
	}
	return c.answered(q, buyer, c.d.Support.AnswerPhoto(q.r.Context(), q.actor, buyer, caption, name, data))
}

// checkPhoto checks an uploaded photo and names it by its type.
func checkPhoto(data []byte) (string, *apiError) {
	var name string
	switch http.DetectContentType(data) {
	case "image/jpeg":
		name = "photo.jpg"
	case "image/png":
		name = "photo.png"
	default:
		return "", bad("console.err.photo_type")
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 {
		return "", bad("console.err.photo_type")
	}
	long, short := max(cfg.Width, cfg.Height), min(cfg.Width, cfg.Height)
	if cfg.Width+cfg.Height > maxPhotoSides || long > short*maxPhotoRatio {
		return "", bad("console.err.photo_dims", "width", strconv.Itoa(cfg.Width), "height", strconv.Itoa(cfg.Height))
	}
	return name, nil
}

// ticketPhoto serves a photo of a ticket's thread (the buyer's or staff's),
// fetched from Telegram, named by its key in the thread.
func (c *Console) ticketPhoto(q *request) (any, *apiError) {
	buyer, e := buyerOf(q)
	if e != nil {
		return nil, e
	}
	data, err := c.d.Support.ThreadPhoto(q.r.Context(), buyer, q.r.PathValue("key"), 20<<20)
	switch {
	case errors.Is(err, work.ErrNoTicket):
		return nil, errNotFound
	case err != nil:
		c.log.Warn("console: fetch a ticket's photo", "buyer", buyer, "err", err)
		return nil, &apiError{status: http.StatusBadGateway, Code: "telegram", key: "console.err.photo_fetch"}
	}
	typ := http.DetectContentType(data)
	if !strings.HasPrefix(typ, "image/") {
		return nil, errNotFound
	}
	q.w.Header().Set("Content-Type", typ)
	q.w.WriteHeader(http.StatusOK)
	_, _ = q.w.Write(data)
	return nil, nil
}

// answered is the answer to a reply sent (err nil) or not.
func (c *Console) answered(q *request, buyer int64, err error) (any, *apiError) {
	switch {
	case errors.Is(err, flows.ErrBlocked):
		return nil, conflict("blocked", "console.err.blocked")
	case err != nil:
		c.log.Warn("console: answer a ticket", "buyer", buyer, "err", err)
		return nil, internal()
	}
	return map[string]any{"done": "sent"}, nil
}

// closeTicket closes a ticket; the buyer is told.
func (c *Console) closeTicket(q *request) (any, *apiError) {
	buyer, e := buyerOf(q)
	if e != nil {
		return nil, e
	}
	was, err := c.d.Support.CloseTicket(q.r.Context(), q.actor, buyer)
	if err != nil {
		return nil, internal()
	}
	return map[string]any{"done": "closed", "was_open": was}, nil
}
