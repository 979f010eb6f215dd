package botapitest

import (
	"bytes"
	"image/color"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
)

// download GETs url and returns the status and body.
func download(t *testing.T, url string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data
}

func TestBuyerPhotoCanBeFetchedWithGetFile(t *testing.T) {
	s := NewT(t)
	b := newBot(t, s)
	want := TestJPEG(320, 200, color.RGBA{G: 255, A: 255})
	u := s.SendPhotoData(7, "my receipt", want)
	sizes := u.Message.Photo
	if len(sizes) != 2 || sizes[1].FileSize != int64(len(want)) {
		t.Fatalf("photo sizes %+v", sizes)
	}
	f, err := b.GetFile(t.Context(), &bot.GetFileParams{FileID: sizes[1].FileID})
	if err != nil {
		t.Fatal(err)
	}
	if f.FileID != sizes[1].FileID || f.FileUniqueID != sizes[1].FileUniqueID || f.FileSize != int64(len(want)) ||
		!strings.HasPrefix(f.FilePath, "photos/") || !strings.HasSuffix(f.FilePath, ".jpg") {
		t.Fatalf("getFile = %+v", f)
	}
	status, got := download(t, b.FileDownloadLink(f))
	if status != http.StatusOK || !bytes.Equal(got, want) {
		t.Fatalf("download: status %d, %d bytes (want %d)", status, len(got), len(want))
	}
	// The thumbnail is a real, smaller JPEG.
	thumb, err := b.GetFile(t.Context(), &bot.GetFileParams{FileID: sizes[0].FileID})
	if err != nil {
		t.Fatal(err)
	}
	if status, data := download(t, b.FileDownloadLink(thumb)); status != http.StatusOK || http.DetectContentType(data) != "image/jpeg" {
		t.Fatalf("thumbnail: status %d, type %s", status, http.DetectContentType(data))
	}
	// SendPhoto (without data) sends a generated JPEG.
	u = s.SendPhoto(7, "")
	data, ok := s.FileData(u.Message.Photo[1].FileID)
	if !ok || http.DetectContentType(data) != "image/jpeg" {
		t.Fatalf("SendPhoto content: %v, %d bytes", ok, len(data))
	}
	if paths := s.Downloads(); len(paths) != 2 || paths[0] != f.FilePath {
		t.Fatalf("downloads %v", paths)
	}
	if v := s.Violations(); len(v) != 0 {
		t.Fatalf("violations: %v", v)
	}
}

func TestUploadedFilesCanBeFetchedWithGetFile(t *testing.T) {
	s := NewT(t)
	b := newBot(t, s)
	doc, err := b.SendDocument(t.Context(), &bot.SendDocumentParams{ChatID: 7,
		Document: &models.InputFileUpload{Filename: "codes.txt", Data: strings.NewReader("AAA\nBBB\n")}})
	if err != nil {
		t.Fatal(err)
	}
	f, err := b.GetFile(t.Context(), &bot.GetFileParams{FileID: doc.Document.FileID})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(f.FilePath, "documents/") || !strings.HasSuffix(f.FilePath, ".txt") {
		t.Fatalf("file path %q", f.FilePath)
	}
	if status, data := download(t, b.FileDownloadLink(f)); status != http.StatusOK || string(data) != "AAA\nBBB\n" {
		t.Fatalf("download: %d %q", status, data)
	}
	img := TestJPEG(64, 64, color.RGBA{B: 255, A: 255})
	ph, err := b.SendPhoto(t.Context(), &bot.SendPhotoParams{ChatID: 7,
		Photo: &models.InputFileUpload{Filename: "p.jpg", Data: bytes.NewReader(img)}})
	if err != nil {
		t.Fatal(err)
	}
	f, err = b.GetFile(t.Context(), &bot.GetFileParams{FileID: ph.Photo[len(ph.Photo)-1].FileID})
	if err != nil {
		t.Fatal(err)
	}
	if status, data := download(t, b.FileDownloadLink(f)); status != http.StatusOK || !bytes.Equal(data, img) {
		t.Fatalf("photo download: %d, %d bytes", status, len(data))
	}
}

func TestGetFileErrorsAndFileLinks(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := NewT(t, WithClock(clock))
	b := newBot(t, s)

	if _, err := b.GetFile(t.Context(), &bot.GetFileParams{FileID: "AgACAgIAAxkBAAINOPE"}); err == nil ||
		!strings.Contains(err.Error(), "invalid file_id") {
		t.Fatalf("unknown file_id: %v", err)
	}
	big := make([]byte, MaxDownloadSize+1)
	u := s.SendPhotoData(7, "", big)
	if _, err := b.GetFile(t.Context(), &bot.GetFileParams{FileID: u.Message.Photo[1].FileID}); err == nil ||
		!strings.Contains(err.Error(), "file is too big") {
		t.Fatalf("a file over 20 MB: %v", err)
	}

	u = s.SendPhotoData(7, "", TestJPEG(10, 10, color.RGBA{A: 255}))
	f, err := b.GetFile(t.Context(), &bot.GetFileParams{FileID: u.Message.Photo[1].FileID})
	if err != nil {
		t.Fatal(err)
	}
	link := b.FileDownloadLink(f)
	if status, _ := download(t, strings.Replace(link, s.Token(), "999:wrong", 1)); status != http.StatusUnauthorized {
		t.Fatalf("wrong token: status %d", status)
	}
	if status, _ := download(t, s.URL()+"/file/bot"+s.Token()+"/photos/file_999.jpg"); status != http.StatusNotFound {
		t.Fatalf("unknown path: status %d", status)
	}
	// The link lasts an hour after getFile; getFile again renews it.
	mu.Lock()
	now = now.Add(FileLinkTTL + time.Second)
	mu.Unlock()
	if status, _ := download(t, link); status != http.StatusNotFound {
		t.Fatalf("expired link: status %d", status)
	}
	f2, err := b.GetFile(t.Context(), &bot.GetFileParams{FileID: f.FileID})
	if err != nil || f2.FilePath != f.FilePath {
		t.Fatalf("getFile again: %+v %v", f2, err)
	}
	if status, _ := download(t, link); status != http.StatusOK {
		t.Fatalf("renewed link: status %d", status)
	}
	if v := s.Violations(); len(v) != 0 {
		t.Fatalf("violations: %v", v)
	}
}

func TestGetFileIsCheckedAgainstTheSchema(t *testing.T) {
	rec := &recordingTB{TB: t}
	s := NewT(rec)
	status, a := postJSON(t, s, "getFile", map[string]any{})
	if status != http.StatusBadRequest || !strings.Contains(a.Description, "file_id") {
		t.Fatalf("getFile without file_id: %d %q", status, a.Description)
	}
	errs := rec.errors()
	if len(errs) != 1 || !strings.Contains(errs[0], "getFile: file_id: missing required field") {
		t.Fatalf("violations reported: %v", errs)
	}
}
