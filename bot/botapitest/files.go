package botapitest

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"net/http"
	"shopbot/bot/botapitest/calls"
	"shopbot/bot/botapitest/types"
	"strconv"
	"strings"
	"time"
)

// Telegram's limits on files: getFile serves files up to 20 MB, and a
// file_path link is valid for at least an hour after getFile.
const (
	MaxDownloadSize = 20 << 20
	FileLinkTTL     = time.Hour
)

// FileInfo is the result of getFile (Bot API File).
type FileInfo struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	FileSize     int64  `json:"file_size,omitempty"`
	FilePath     string `json:"file_path,omitempty"`
}

// storedFile is the content of a file the server knows by file_id.
type storedFile struct {
	uniqueID string
	dir      string // photos, documents
	ext      string // ".jpg", ".txt" ...
	data     []byte
	path     string    // assigned by the first getFile
	expires  time.Time // when the path stops working
}

// storeFileLocked remembers the content of a file, under its file_id.
func (s *Server) storeFileLocked(fileID, uniqueID, dir, ext string, data []byte) {
	if s.files == nil {
		s.files = map[string]*storedFile{}
	}
	s.files[fileID] = &storedFile{uniqueID: uniqueID, dir: dir, ext: ext, data: data}
}

// extFor is the file name extension Telegram gives a stored file.
func extFor(name string, data []byte) string {
	if i := strings.LastIndexByte(name, '.'); i >= 0 && i < len(name)-1 && !strings.ContainsAny(name[i:], "/ ") {
		return strings.ToLower(name[i:])
	}
	switch http.DetectContentType(data) {
	case "image/jpeg":
		return ".jpg"
	case "image/png":
		return ".png"
	case "image/gif":
		return ".gif"
	case "image/webp":
		return ".webp"
	}
	return ""
}

// TestJPEG returns a small JPEG image of size w x h in one colour, the
// content of photos a buyer sends with SendPhoto.
func TestJPEG(w, h int, c color.RGBA) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetRGBA(x, y, c)
		}
	}
	var buf bytes.Buffer
	_ = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 80}) // an in-memory image always encodes
	return buf.Bytes()
}

// photoSizesLocked makes the sizes of a photo whose largest size has
// content big (a 90x90 thumbnail is generated), and stores their content.
func (s *Server) photoSizesLocked(big []byte) []types.PhotoSize {
	sizes := s.photoLocked()
	thumb := TestJPEG(sizes[0].Width, sizes[0].Height, color.RGBA{R: 40, G: 120, B: 200, A: 255})
	for i, data := range [][]byte{thumb, big} {
		sizes[i].FileSize = int64(len(data))
		s.storeFileLocked(sizes[i].FileID, sizes[i].FileUniqueID, "photos", ".jpg", data)
	}
	return sizes
}

// SendPhotoData pushes a photo message from the buyer of chatID whose
// largest size has content data (a JPEG, as Telegram stores photos), with a
// caption. The bot can fetch every size with getFile and the file link.
func (s *Server) SendPhotoData(chatID int64, caption string, data []byte) types.Update {
	s.mu.Lock()
	m := s.userMessageLocked(chatID)
	m.Photo = s.photoSizesLocked(append([]byte(nil), data...))
	m.Caption = caption
	u, vs := s.pushLocked(types.Update{Message: m})
	s.mu.Unlock()
	s.report(vs)
	return u
}

// FileData returns the content of a file the server knows by file_id: a
// photo a buyer sent, or a file the bot uploaded.
func (s *Server) FileData(fileID string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.files[fileID]
	if !ok {
		return nil, false
	}
	return append([]byte(nil), f.data...), true
}

// Downloads returns the file paths downloaded from the file link
// (<url>/file/bot<token>/<file_path>), oldest first, failed ones included.
func (s *Server) Downloads() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.downloads...)
}

// getFile simulates getFile: a known file_id gets a file_path valid for
// FileLinkTTL; an unknown one is "invalid file_id", and a file over 20 MB
// is "file is too big", as in Telegram.
func (s *Server) getFile(c *calls.Call) (any, *APIError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := c.String("file_id")
	f, ok := s.files[id]
	if !ok {
		return nil, badRequest("invalid file_id")
	}
	if len(f.data) > MaxDownloadSize {
		return nil, badRequest("file is too big")
	}
	if f.path == "" {
		f.path = fmt.Sprintf("%s/file_%d%s", f.dir, s.nextSeqLocked(), f.ext)
		if s.filePaths == nil {
			s.filePaths = map[string]string{}
		}
		s.filePaths[f.path] = id
	}
	f.expires = s.now().Add(FileLinkTTL)
	return FileInfo{FileID: id, FileUniqueID: f.uniqueID, FileSize: int64(len(f.data)), FilePath: f.path}, nil
}

// serveFile answers GET /file/bot<token>/<file_path>: the content of a file
// whose path getFile gave out less than FileLinkTTL ago. Anything else is
// 404, a wrong token 401, as Telegram answers.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, rest string) {
	token, path, _ := strings.Cut(rest, "/")
	s.mu.Lock()
	s.downloads = append(s.downloads, path)
	var data []byte
	found := false
	if id, ok := s.filePaths[path]; ok && token == s.cfg.token {
		if f := s.files[id]; f != nil && s.now().Before(f.expires) {
			data, found = f.data, true
		}
	}
	s.mu.Unlock()
	switch {
	case token != s.cfg.token:
		writeError(w, &APIError{Code: http.StatusUnauthorized, Description: "Unauthorized"})
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		writeError(w, &APIError{Code: http.StatusNotImplemented, Description: "Not Implemented"})
	case !found:
		writeError(w, &APIError{Code: http.StatusNotFound, Description: "Not Found"})
	default:
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			_, _ = w.Write(data)
		}
	}
}
