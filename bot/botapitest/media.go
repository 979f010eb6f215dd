package botapitest

import (
	"strings"

	"shopbot/bot/botapitest/calls"
	"shopbot/bot/botapitest/schema"
	"shopbot/bot/botapitest/types"
)

// Photos the bot sends by file_id and edits with editMessageMedia. As in
// Telegram, a photo has one file_id per size; any of them sends the photo
// again (the answer carries the same sizes), and a file_id the server never
// gave out is refused.

// errWrongFileID is Telegram's answer to a file_id it does not know (or
// an unusable HTTP URL).
const errWrongFileID = "wrong file identifier/HTTP URL specified"

// rememberPhotoLocked records a photo's sizes under each size's file_id.
func (s *Server) rememberPhotoLocked(sizes []types.PhotoSize) {
	if s.photos == nil {
		s.photos = map[string][]types.PhotoSize{}
	}
	for _, p := range sizes {
		s.photos[p.FileID] = sizes
	}
}

// namePhotoLocked records the file name a photo was uploaded under and
// returns it.
func (s *Server) namePhotoLocked(sizes []types.PhotoSize, name string) string {
	if s.photoName == nil {
		s.photoName = map[string]string{}
	}
	for _, p := range sizes {
		s.photoName[p.FileID] = name
	}
	return name
}

// photoRefLocked resolves a photo given as a String: an HTTP URL makes a new
// photo (its content unknown); a file_id the server gave out is that photo
// again, with its content when known; anything else is refused.
func (s *Server) photoRefLocked(ref string) ([]types.PhotoSize, []byte, *APIError) {
	switch {
	case ref == "":
		return nil, nil, badRequest("there is no photo in the request")
	case strings.HasPrefix(ref, "http://") || strings.HasPrefix(ref, "https://"):
		return s.photoLocked(), nil, nil
	}
	sizes, ok := s.photos[ref]
	if !ok {
		return nil, nil, badRequest(errWrongFileID)
	}
	var data []byte
	if f := s.files[sizes[len(sizes)-1].FileID]; f != nil {
		data = f.data
	}
	return append([]types.PhotoSize(nil), sizes...), data, nil
}

// ForgetFile makes the server refuse a file_id it gave out, as Telegram
// does for a file_id of another bot or one it no longer accepts: sending
// or editing with it is "wrong file identifier". Every size of a photo is
// forgotten with any one of them.
func (s *Server) ForgetFile(fileID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.photos[fileID] {
		delete(s.photos, p.FileID)
		delete(s.files, p.FileID)
		delete(s.photoName, p.FileID)
	}
	delete(s.files, fileID)
}

// inputMedia is the media parameter of editMessageMedia.
type inputMedia struct {
	Type            string                `json:"type"`
	Media           string                `json:"media"`
	Caption         string                `json:"caption"`
	ParseMode       string                `json:"parse_mode"`
	CaptionEntities []types.MessageEntity `json:"caption_entities"`
}

// editMediaLocked applies editMessageMedia's media to nm, a copy of old: a
// photo (uploaded with attach://, by file_id or by URL) with its caption.
// As the schema allows, a text message becomes a photo message. Other
// media are not simulated (only the keyboard changes): it reports false.
func (s *Server) editMediaLocked(c *calls.Call, old *types.Message, nm *types.Message) (bool, *APIError) {
	var m inputMedia
	if err := c.JSON("media", &m); err != nil {
		return false, badRequest("can't parse InputMedia: " + err.Error())
	}
	if m.Type != "photo" {
		return false, nil
	}
	if old.Invoice != nil {
		return false, badRequest(errCantEdit)
	}
	var sizes []types.PhotoSize
	var data []byte
	if name, ok := cutAttach(m.Media); ok {
		f, found := c.Files[name]
		if !found {
			return false, badRequest("wrong file attachment " + name)
		}
		data = f.Data
		sizes = s.photoSizesLocked(append([]byte(nil), data...))
		nm.PhotoName = s.namePhotoLocked(sizes, f.Name)
	} else {
		var apiErr *APIError
		if sizes, data, apiErr = s.photoRefLocked(m.Media); apiErr != nil {
			return false, apiErr
		}
		nm.PhotoName = s.photoName[sizes[0].FileID]
	}
	nm.Text, nm.Entities, nm.Document = "", nil, nil
	nm.Photo, nm.FileData = sizes, data
	nm.Caption, nm.CaptionEntities = m.Caption, m.CaptionEntities
	if m.ParseMode == "HTML" {
		if plain, ents, err := schema.ParseHTML(m.Caption); err == nil {
			nm.Caption, nm.CaptionEntities = plain, ents
		}
	}
	nm.RawText, nm.ParseMode = m.Caption, m.ParseMode
	return true, nil
}

func cutAttach(s string) (string, bool) {
	name, ok := strings.CutPrefix(s, "attach://")
	return name, ok && name != ""
}

// largestPhoto is the file_unique_id of a message's largest photo size, or
// "".
func largestPhoto(m *types.Message) string {
	if len(m.Photo) == 0 {
		return ""
	}
	return m.Photo[len(m.Photo)-1].FileUniqueID
}

// Videos and documents users send: the bot may send them again by their
// file_id (a broadcast of what an admin sent). A video file_id the server
// never gave out is refused, as Telegram refuses it.

// SendVideo pushes a video with a caption from the chat's user and returns
// the update; its file_id is one the bot may send again.
func (s *Server) SendVideo(chatID int64, caption string) types.Update {
	s.mu.Lock()
	m := s.userMessageLocked(chatID)
	id, uid := s.fileIDsLocked("BAACAgIAAxkBAAI")
	v := types.Video{FileID: id, FileUniqueID: uid, Width: 1280, Height: 720, Duration: 12}
	if s.videos == nil {
		s.videos = map[string]types.Video{}
	}
	s.videos[id] = v
	m.Video, m.Caption = &v, caption
	u, vs := s.pushLocked(types.Update{Message: m})
	s.mu.Unlock()
	s.report(vs)
	return u
}

// SendDocumentFile pushes a document named name with a caption from the
// chat's user and returns the update; its file_id is one the bot may send
// again.
func (s *Server) SendDocumentFile(chatID int64, name, caption string) types.Update {
	s.mu.Lock()
	m := s.userMessageLocked(chatID)
	id, uid := s.fileIDsLocked("BQACAgIAAxkBAAI")
	d := types.Document{FileID: id, FileUniqueID: uid, FileName: name, MimeType: mimeOf(name, nil), FileSize: 2048}
	if s.docs == nil {
		s.docs = map[string]types.Document{}
	}
	s.docs[id] = d
	m.Document, m.Caption = &d, caption
	u, vs := s.pushLocked(types.Update{Message: m})
	s.mu.Unlock()
	s.report(vs)
	return u
}

// videoRefLocked is sendVideo's video: an upload or an HTTP URL makes a
// new one; a file_id must be one the server gave out.
func (s *Server) videoRefLocked(c *calls.Call) (*types.Video, *APIError) {
	if _, ok := c.Files["video"]; ok || strings.HasPrefix(c.String("video"), "http://") || strings.HasPrefix(c.String("video"), "https://") {
		id, uid := s.fileIDsLocked("BAACAgIAAxkBAAI")
		v := types.Video{FileID: id, FileUniqueID: uid, Width: 1280, Height: 720, Duration: 1}
		if s.videos == nil {
			s.videos = map[string]types.Video{}
		}
		s.videos[id] = v
		return &v, nil
	}
	v, ok := s.videos[c.String("video")]
	if !ok {
		return nil, badRequest(errWrongFileID)
	}
	return &v, nil
}
