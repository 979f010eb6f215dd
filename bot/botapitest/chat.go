package botapitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"path"
	"path/filepath"
	"reflect"
	"strings"

	"shopbot/bot/botapitest/calls"
	"shopbot/bot/botapitest/schema"
	"shopbot/bot/botapitest/types"
)

// chatState is the message store of one chat. Stored messages are never
// changed in place: an edit stores a new copy, so copies handed out stay valid.
type chatState struct {
	lastID int
	msgs   map[int]*types.Message
	order  []int
	byBot  map[int]bool
}

func (s *Server) chatLocked(id int64) *chatState {
	cs := s.chats[id]
	if cs == nil {
		cs = &chatState{msgs: map[int]*types.Message{}, byBot: map[int]bool{}}
		s.chats[id] = cs
	}
	return cs
}

func (cs *chatState) add(m *types.Message, byBot bool) {
	cs.msgs[m.MessageID] = m
	cs.order = append(cs.order, m.MessageID)
	cs.byBot[m.MessageID] = byBot
}

func (cs *chatState) nextID() int {
	cs.lastID++
	return cs.lastID
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// SetUser sets the profile of the buyer who writes in a chat: the user in
// updates from that chat and the private chat's names. A zero ID means the
// chat id; IsBot is forced false.
func (s *Server) SetUser(chatID int64, u types.User) {
	if u.ID == 0 {
		u.ID = abs64(chatID)
	}
	u.IsBot = false
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[chatID] = u
}

// User returns the buyer profile of a chat: the one SetUser set, or the
// default {ID: chatID, FirstName: "Buyer", Username: "buyer<id>",
// LanguageCode: "en"}.
func (s *Server) User(chatID int64) types.User {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.userLocked(chatID)
}

func (s *Server) userLocked(chatID int64) types.User {
	if u, ok := s.users[chatID]; ok {
		return u
	}
	id := abs64(chatID)
	return types.User{ID: id, FirstName: "Buyer", Username: fmt.Sprintf("buyer%d", id), LanguageCode: "en"}
}

func (s *Server) chatObjLocked(id int64) types.Chat {
	switch {
	case id > 0:
		u := s.userLocked(id)
		return types.Chat{ID: id, Type: "private", FirstName: u.FirstName, LastName: u.LastName, Username: u.Username}
	case id < -1_000_000_000_000:
		return types.Chat{ID: id, Type: "supergroup", Title: "Test Supergroup"}
	}
	return types.Chat{ID: id, Type: "group", Title: "Test Group"}
}

// resolveChatLocked turns chat_id (an integer or "@username" of a buyer
// profile) into a chat id.
func (s *Server) resolveChatLocked(c *calls.Call) (int64, *APIError) {
	switch v := c.Params["chat_id"].(type) {
	case int64:
		if v != 0 {
			return v, nil
		}
	case string:
		name := strings.TrimPrefix(v, "@")
		for id, u := range s.users {
			if strings.EqualFold(u.Username, name) {
				return id, nil
			}
		}
	}
	return 0, badRequest("chat not found")
}

// MessagesIn returns the bot's messages in a chat that are not deleted, in
// the order they were sent, each as last edited.
func (s *Server) MessagesIn(chatID int64) []types.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.chats[chatID]
	if cs == nil {
		return nil
	}
	var out []types.Message
	for _, id := range cs.order {
		if m := cs.msgs[id]; m != nil && cs.byBot[id] {
			out = append(out, *m)
		}
	}
	return out
}

// LastMessage returns the bot's most recent message in a chat that is not
// deleted.
func (s *Server) LastMessage(chatID int64) (types.Message, bool) {
	msgs := s.MessagesIn(chatID)
	if len(msgs) == 0 {
		return types.Message{}, false
	}
	return msgs[len(msgs)-1], true
}

// Message returns any message of a chat (the bot's or the buyer's) by id.
func (s *Server) Message(chatID int64, messageID int) (types.Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cs := s.chats[chatID]; cs != nil {
		if m := cs.msgs[messageID]; m != nil {
			return *m, true
		}
	}
	return types.Message{}, false
}

// render returns a text and its entities as Telegram stores them: HTML is
// parsed; otherwise the text is kept and explicit entities are used.
func render(c *calls.Call, textField, entitiesField, mode string) (string, []types.MessageEntity) {
	text := c.String(textField)
	if mode == "HTML" {
		if plain, ents, err := schema.ParseHTML(text); err == nil {
			return plain, ents
		}
	}
	var ents []types.MessageEntity
	if c.Has(entitiesField) {
		_ = c.JSON(entitiesField, &ents)
	}
	return text, ents
}

// markupOf splits a call's reply_markup into the inline keyboard Telegram
// echoes and any other keyboard.
func markupOf(c *calls.Call) (*types.InlineKeyboardMarkup, json.RawMessage) {
	raw, ok := c.Raw["reply_markup"]
	if !ok {
		return nil, nil
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &probe); err != nil {
		return nil, nil
	}
	if _, ok := probe["inline_keyboard"]; !ok {
		return nil, json.RawMessage(raw)
	}
	var mk types.InlineKeyboardMarkup
	if err := json.Unmarshal([]byte(raw), &mk); err != nil {
		return nil, nil
	}
	for _, row := range mk.InlineKeyboard {
		for i := range row {
			if row[i].CopyText != nil && row[i].CopyText.Text == "" {
				row[i].CopyText = nil // go-telegram/bot's empty copy_text: Telegram drops it
			}
		}
	}
	if len(mk.InlineKeyboard) == 0 {
		return nil, nil
	}
	return &mk, nil
}

func (s *Server) nextSeqLocked() int64 {
	s.seq++
	return s.seq
}

func (s *Server) fileIDsLocked(prefix string) (string, string) {
	n := s.nextSeqLocked()
	return fmt.Sprintf("%sTEST%08d", prefix, n), fmt.Sprintf("AgADTEST%08d", n)
}

func mimeOf(name string, data []byte) string {
	t := mime.TypeByExtension(filepath.Ext(name))
	if t == "" {
		t = http.DetectContentType(data)
	}
	t, _, _ = strings.Cut(t, ";")
	return t
}

// send simulates the send* methods.
func (s *Server) send(method string, c *calls.Call) (any, *APIError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	chatID, apiErr := s.resolveChatLocked(c)
	if apiErr != nil {
		return nil, apiErr
	}
	bot := s.bot
	cs := s.chatLocked(chatID)
	msg := &types.Message{
		MessageID: cs.nextID(),
		From:      &bot,
		Date:      s.now().Unix(),
		Chat:      s.chatObjLocked(chatID),
		Method:    method,
		ParseMode: c.String("parse_mode"),
	}
	switch method {
	case "sendMessage":
		msg.Text, msg.Entities = render(c, "text", "entities", msg.ParseMode)
		msg.RawText = c.String("text")
	case "sendDocument":
		msg.Document = s.documentLocked(c, "document")
		if f, ok := c.Files["document"]; ok {
			msg.FileData = f.Data
		}
	case "sendVideo":
		v, apiErr := s.videoRefLocked(c)
		if apiErr != nil {
			cs.lastID-- // nothing was sent
			return nil, apiErr
		}
		msg.Video = v
	case "sendPhoto":
		if f, ok := c.Files["photo"]; ok {
			msg.Photo = s.photoSizesLocked(f.Data)
			msg.FileData = f.Data
			msg.PhotoName = s.namePhotoLocked(msg.Photo, f.Name)
		} else {
			sizes, data, apiErr := s.photoRefLocked(c.String("photo"))
			if apiErr != nil {
				cs.lastID-- // nothing was sent
				return nil, apiErr
			}
			msg.Photo, msg.FileData, msg.PhotoName = sizes, data, s.photoName[sizes[0].FileID]
		}
	case "sendInvoice":
		var prices []struct {
			Amount int64 `json:"amount"`
		}
		_ = c.JSON("prices", &prices)
		var total int64
		for _, p := range prices {
			total += p.Amount
		}
		msg.Invoice = &types.Invoice{
			Title:          c.String("title"),
			Description:    c.String("description"),
			StartParameter: c.String("start_parameter"),
			Currency:       c.String("currency"),
			TotalAmount:    total,
		}
		msg.InvoicePayload = c.String("payload")
	}
	if c.Has("caption") {
		msg.Caption, msg.CaptionEntities = render(c, "caption", "caption_entities", msg.ParseMode)
		msg.RawText = c.String("caption")
	}
	msg.ReplyMarkup, msg.ReplyKeyboard = markupOf(c)
	cs.add(msg, true)
	return *msg, nil
}

func (s *Server) documentLocked(c *calls.Call, field string) *types.Document {
	id, uid := s.fileIDsLocked("BQACAgIAAxkBAAI")
	d := &types.Document{FileID: id, FileUniqueID: uid}
	if f, ok := c.Files[field]; ok {
		d.FileName = f.Name
		d.MimeType = mimeOf(f.Name, f.Data)
		d.FileSize = int64(len(f.Data))
		s.storeFileLocked(id, uid, "documents", extFor(f.Name, f.Data), f.Data)
		return d
	}
	ref := c.String(field)
	if strings.HasPrefix(ref, "http://") || strings.HasPrefix(ref, "https://") {
		d.FileName = path.Base(ref)
		d.MimeType = mimeOf(d.FileName, nil)
		return d
	}
	if known, ok := s.docs[ref]; ok { // a document a user sent, sent again
		return &known
	}
	d.FileID = ref // a file_id the bot reuses
	return d
}

func (s *Server) photoLocked() []types.PhotoSize {
	id1, uid1 := s.fileIDsLocked("AgACAgIAAxkBAAI")
	id2, uid2 := s.fileIDsLocked("AgACAgIAAxkBAAI")
	sizes := []types.PhotoSize{
		{FileID: id1, FileUniqueID: uid1, Width: 90, Height: 90},
		{FileID: id2, FileUniqueID: uid2, Width: 800, Height: 800},
	}
	s.rememberPhotoLocked(sizes)
	return sizes
}

// The error descriptions Telegram gives for edits.
const (
	errEditNotFound    = "message to edit not found"
	errNotModified     = "message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message"
	errCantEdit        = "message can't be edited"
	errNoTextToEdit    = "there is no text in the message to edit"
	errNoCaptionToEdit = "there is no caption in the message to edit"
	errDeleteNotFound  = "message to delete not found"
)

// edit simulates editMessageText, editMessageCaption, editMessageMedia
// with a photo (media.go) and editMessageReplyMarkup; other edits only
// replace the keyboard. As in
// Telegram, an edit without reply_markup removes the message's inline
// keyboard.
func (s *Server) edit(method string, c *calls.Call) (any, *APIError) {
	if c.Has("inline_message_id") {
		return true, nil // inline messages are not tracked
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	chatID, apiErr := s.resolveChatLocked(c)
	if apiErr != nil {
		return nil, apiErr
	}
	cs := s.chatLocked(chatID)
	id := int(c.Int("message_id"))
	old := cs.msgs[id]
	if old == nil {
		return nil, badRequest(errEditNotFound)
	}
	if !cs.byBot[id] {
		return nil, badRequest(errCantEdit)
	}
	nm := *old
	mode := c.String("parse_mode")
	checked := method != "editMessageMedia" // not modified: the same content
	switch method {
	case "editMessageText":
		if old.Text == "" {
			return nil, badRequest(errNoTextToEdit)
		}
		nm.Text, nm.Entities = render(c, "text", "entities", mode)
		nm.RawText, nm.ParseMode = c.String("text"), mode
	case "editMessageCaption":
		if old.Document == nil && old.Photo == nil {
			return nil, badRequest(errNoCaptionToEdit)
		}
		nm.Caption, nm.CaptionEntities = render(c, "caption", "caption_entities", mode)
		nm.RawText, nm.ParseMode = c.String("caption"), mode
	case "editMessageMedia":
		var apiErr *APIError
		if checked, apiErr = s.editMediaLocked(c, old, &nm); apiErr != nil {
			return nil, apiErr
		}
	}
	nm.ReplyMarkup, _ = markupOf(c)
	switch method {
	case "editMessageText", "editMessageCaption", "editMessageReplyMarkup", "editMessageMedia":
		if checked && sameContent(old, &nm) {
			return nil, badRequest(errNotModified)
		}
	}
	nm.EditDate = s.now().Unix()
	cs.msgs[id] = &nm
	return nm, nil
}

func sameContent(a, b *types.Message) bool {
	if a.Text != b.Text || a.Caption != b.Caption || largestPhoto(a) != largestPhoto(b) {
		return false
	}
	if len(a.Entities)+len(b.Entities) > 0 && !reflect.DeepEqual(a.Entities, b.Entities) {
		return false
	}
	if len(a.CaptionEntities)+len(b.CaptionEntities) > 0 && !reflect.DeepEqual(a.CaptionEntities, b.CaptionEntities) {
		return false
	}
	ma, _ := json.Marshal(a.ReplyMarkup)
	mb, _ := json.Marshal(b.ReplyMarkup)
	return bytes.Equal(ma, mb)
}

func (s *Server) deleteMessage(c *calls.Call) (any, *APIError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	chatID, apiErr := s.resolveChatLocked(c)
	if apiErr != nil {
		return nil, apiErr
	}
	cs := s.chatLocked(chatID)
	id := int(c.Int("message_id"))
	if cs.msgs[id] == nil {
		return nil, badRequest(errDeleteNotFound)
	}
	delete(cs.msgs, id)
	return true, nil
}

// userMessageLocked creates a message from the chat's buyer.
func (s *Server) userMessageLocked(chatID int64) *types.Message {
	cs := s.chatLocked(chatID)
	u := s.userLocked(chatID)
	m := &types.Message{
		MessageID: cs.nextID(),
		From:      &u,
		Date:      s.now().Unix(),
		Chat:      s.chatObjLocked(chatID),
	}
	cs.add(m, false)
	return m
}
