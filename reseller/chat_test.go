package reseller

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestChat(t *testing.T) {
	env := setup(t)
	env.serveFixture("GET /orders/{number}/chat", "chat.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "GET")
		if r.PathValue("number") != "1004" {
			t.Errorf("number = %s", r.PathValue("number"))
		}
	})
	got, err := env.client.Chat(t.Context(), 1004)
	if err != nil {
		t.Fatal(err)
	}
	if got.Object != "chat" || got.ChatFrozen || !got.ChatOpened || got.ChatReadOnly {
		t.Errorf("chat flags = %+v", got)
	}
	type want struct {
		text, id, author, image string
		at                      string // RFC 3339, "" for none
		op, opKnown             bool
	}
	wants := []want{
		{text: "Hello, please send the account e-mail", id: "1", at: "2024-05-01T10:05:00Z", op: true, opKnown: true},
		{text: "x@y.example", id: "m2", at: "2024-05-01T10:06:00Z", op: false, opKnown: true},
		{text: "nested", author: "Support", at: "2024-05-01T10:07:00.123Z", op: true, opKnown: true},
		{text: "date only", author: "client", at: "2024-05-01T00:00:00Z", op: false, opKnown: true},
		{text: "a bare string message"},
		{text: "Upper-case field", author: "operator", image: "https://img.example/a.png", at: "2024-05-01T10:08:00Z", op: true, opKnown: true},
		{image: "https://img.example/b.png", at: "2024-05-01T10:09:00.5Z"},
		{},
		{},
		{text: "42"},
		{},
	}
	if len(got.Messages) != len(wants) {
		t.Fatalf("messages = %d, want %d", len(got.Messages), len(wants))
	}
	for i, w := range wants {
		m := &got.Messages[i]
		if m.Text() != w.text || m.ID() != w.id || m.Author() != w.author || m.Image() != w.image {
			t.Errorf("message %d: text %q id %q author %q image %q; want %+v", i, m.Text(), m.ID(), m.Author(), m.Image(), w)
		}
		at, ok := m.Time()
		if ok != (w.at != "") || (ok && !at.Equal(ts(w.at))) {
			t.Errorf("message %d: Time() = %v, %v; want %q", i, at, ok, w.at)
		}
		if op, known := m.FromOperator(); op != w.op || known != w.opKnown {
			t.Errorf("message %d: FromOperator() = %v, %v; want %v, %v", i, op, known, w.op, w.opKnown)
		}
	}
	// Messages marshal back as received.
	b, err := json.Marshal(got.Messages[1])
	if err != nil || !jsonEqual(b, []byte(`{"id": "m2", "body": "x@y.example", "at": 1714557960, "from_me": true}`)) {
		t.Errorf("Marshal = %s, %v", b, err)
	}
}

func TestChat_messagesNotAnArray(t *testing.T) {
	var ch Chat
	if err := json.Unmarshal([]byte(`{"object":"chat","messages":{"text":"solo"}}`), &ch); err != nil {
		t.Fatal(err)
	}
	if len(ch.Messages) != 1 || ch.Messages[0].Text() != "solo" {
		t.Errorf("messages = %+v", ch.Messages)
	}
	ch = Chat{}
	if err := json.Unmarshal([]byte(`{"object":"chat","messages":null}`), &ch); err != nil || ch.Messages != nil {
		t.Errorf("null messages: %v %v", ch.Messages, err)
	}
}

// readChatForm parses the multipart request and returns body, image bytes,
// file name and part content type.
func readChatForm(t *testing.T, r *http.Request) (body string, img []byte, name, ct string) {
	t.Helper()
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data; boundary=") {
		t.Errorf("Content-Type = %q", r.Header.Get("Content-Type"))
	}
	if err := r.ParseMultipartForm(1 << 20); err != nil {
		t.Fatalf("ParseMultipartForm: %v", err)
	}
	body = r.FormValue("body")
	if f, h, err := r.FormFile("image"); err == nil {
		img, _ = io.ReadAll(f)
		f.Close()
		name, ct = h.Filename, h.Header.Get("Content-Type")
	}
	return body, img, name, ct
}

func TestSendChatMessage(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	tests := []struct {
		name     string
		in       ChatMessageInput
		wantBody string
		wantImg  []byte
		wantName string
		wantCT   string
	}{
		{"text", ChatMessageInput{Body: "Done, thanks"}, "Done, thanks", nil, "", ""},
		{"image", ChatMessageInput{Image: bytes.NewReader(png), ImageName: `shot"1".png`}, "", png, `shot"1".png`, "image/png"},
		{"both", ChatMessageInput{Body: "see attached", Image: bytes.NewReader([]byte("GIF89a...")), ImageContentType: "image/gif"},
			"see attached", []byte("GIF89a..."), "image", "image/gif"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := setup(t)
			env.mux.HandleFunc("POST /orders/{number}/chat", func(w http.ResponseWriter, r *http.Request) {
				if r.PathValue("number") != "1004" {
					t.Errorf("number = %s", r.PathValue("number"))
				}
				body, img, name, ct := readChatForm(t, r)
				if body != tt.wantBody || !bytes.Equal(img, tt.wantImg) || name != tt.wantName || ct != tt.wantCT {
					t.Errorf("form: body %q image %q name %q ct %q", body, img, name, ct)
				}
				writeJSON(w, http.StatusOK, fixture(t, "chat_message.json"))
			})
			got, err := env.client.SendChatMessage(t.Context(), 1004, &tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(got.Raw, fixture(t, "chat_message.json")) || got.Text() != "Done, thanks" || got.ID() != "99" {
				t.Errorf("message = %s", got.Raw)
			}
			if op, known := got.FromOperator(); op || !known {
				t.Errorf("FromOperator = %v, %v", op, known)
			}
		})
	}
}

func TestSendChatMessage_emptyAnswer(t *testing.T) {
	env := setup(t)
	env.mux.HandleFunc("POST /orders/{number}/chat", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
	})
	got, err := env.client.SendChatMessage(t.Context(), 1004, &ChatMessageInput{Body: "hi"})
	if err != nil || got == nil || got.Raw != nil {
		t.Errorf("SendChatMessage = %+v, %v", got, err)
	}
}

func TestSendChatMessage_notRetriedOn5xx(t *testing.T) {
	env := setup(t)
	env.mux.HandleFunc("POST /orders/{number}/chat", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusInternalServerError, []byte(`{"error":{"type":"server_error","message":"boom"}}`))
	})
	_, err := env.client.SendChatMessage(t.Context(), 1004, &ChatMessageInput{Body: "hi"})
	var e *Error
	if !errors.As(err, &e) || e.Status != 500 || IsOutcomeUnknown(err) {
		t.Errorf("err = %v", err)
	}
	if n := env.requests.Load(); n != 1 {
		t.Errorf("requests = %d, want 1", n)
	}
}

func TestSendChatMessage_retriedOn429(t *testing.T) {
	env := setup(t)
	calls := 0
	env.mux.HandleFunc("POST /orders/{number}/chat", func(w http.ResponseWriter, r *http.Request) {
		body, _, _, _ := readChatForm(t, r)
		if body != "hi" {
			t.Errorf("attempt %d body = %q", calls+1, body)
		}
		if calls++; calls == 1 {
			w.Header().Set("Retry-After", "1")
			writeJSON(w, http.StatusTooManyRequests, []byte(`{"error":{"type":"rate_limited","message":"slow"}}`))
			return
		}
		writeJSON(w, http.StatusOK, []byte(`{"id":1}`))
	})
	if _, err := env.client.SendChatMessage(t.Context(), 1004, &ChatMessageInput{Body: "hi"}); err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Errorf("requests = %d, want 2", calls)
	}
}

func TestDownloadChatImage(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	var auth []string
	var mu sync.Mutex
	handler := func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		switch r.URL.Path {
		case "/api/v1/chat-files/7", "/elsewhere/pic.png":
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(png)
		case "/api/v1/chat-files/big":
			w.Write(make([]byte, MaxChatImageSize+1))
		default:
			http.Error(w, `{"error":{"type":"not_found","message":"file not found"}}`, http.StatusNotFound)
		}
	}
	api := httptest.NewServer(http.HandlerFunc(handler))
	t.Cleanup(api.Close)
	other := httptest.NewServer(http.HandlerFunc(handler))
	t.Cleanup(other.Close)
	otherURL, _ := url.Parse(other.URL)
	c, err := New(api.URL+"/api/v1", testKey, WithMediaHosts(otherURL.Host))
	if err != nil {
		t.Fatal(err)
	}
	// The other server is a declared media host but, like every test server,
	// on loopback: this test lets loopback through to check the key stays home.
	c.tr.AllowAddr = func(netip.Addr) bool { return true }
	for _, ref := range []string{api.URL + "/api/v1/chat-files/7", "chat-files/7", "/api/v1/chat-files/7"} {
		img, err := c.DownloadChatImage(t.Context(), ref)
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		if !bytes.Equal(img.Data, png) || img.ContentType != "image/png" || img.Name != "7" {
			t.Fatalf("%s: got %d bytes, %q, %q", ref, len(img.Data), img.ContentType, img.Name)
		}
	}
	if _, err := c.DownloadChatImage(t.Context(), other.URL+"/elsewhere/pic.png"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(auth) != 4 || auth[0] != "Bearer "+testKey || auth[2] != "Bearer "+testKey || auth[3] != "" {
		t.Fatalf("Authorization headers %q: the key must go to the API host only", auth)
	}
	mu.Unlock()

	_, err = c.DownloadChatImage(t.Context(), "chat-files/404")
	var apiErr *Error
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound || strings.Contains(err.Error(), testKey) {
		t.Fatalf("missing file: %v", err)
	}
	var ve *ValidationError
	if _, err := c.DownloadChatImage(t.Context(), "chat-files/big"); !errors.As(err, &ve) {
		t.Fatalf("an image over the limit: %v", err)
	}
	for _, bad := range []string{"", "ftp://x/y.png", "mailto:a@b"} {
		if _, err := c.DownloadChatImage(t.Context(), bad); !errors.As(err, &ve) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// TestDownloadChatImage_refusesInternalAddresses is the SSRF fix: an image
// URL at another port of the loopback host (the metrics listener), at the
// cloud metadata address, on an undeclared host, or redirected to any of
// those is refused as ErrImageRefused without a request reaching it, while
// the API's own host and port still serve images.
func TestDownloadChatImage_refusesInternalAddresses(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	var hits sync.Map
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Store(r.URL.Path, true)
		w.Write([]byte("# HELP secret_metrics\n"))
	}))
	t.Cleanup(internal.Close)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/chat-files/1":
			w.Write(png)
		case "/api/v1/chat-files/redirect-internal":
			http.Redirect(w, r, internal.URL+"/metrics", http.StatusFound)
		case "/api/v1/chat-files/redirect-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/api/v1/chat-files/redirect-loop":
			http.Redirect(w, r, "/api/v1/chat-files/redirect-loop", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(api.Close)
	internalURL, _ := url.Parse(internal.URL)
	// The metadata host is even declared as a media host: the address check
	// refuses it anyway, after resolution.
	c, err := New(api.URL+"/api/v1", testKey, WithMediaHosts("169.254.169.254", "localhost", "metadata.google.internal"), WithImageTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if img, err := c.DownloadChatImage(t.Context(), "chat-files/1"); err != nil || !bytes.Equal(img.Data, png) {
		t.Fatalf("the API's own image: %v", err)
	}
	for _, ref := range []string{
		"http://127.0.0.1:" + internalURL.Port() + "/metrics",         // the API host, another port
		"http://localhost:" + internalURL.Port() + "/metrics",         // a declared host resolving to loopback
		"http://169.254.169.254/latest/meta-data/",                    // cloud metadata
		"http://[::ffff:169.254.169.254]/latest/meta-data/",           // the same, IPv4-mapped
		"http://example.com/x.png",                                    // an undeclared host
		"http://user:pw@127.0.0.1:" + internalURL.Port() + "/metrics", // credentials in the URL
		"chat-files/redirect-internal",                                // redirected to loopback
		"chat-files/redirect-metadata",                                // redirected to metadata
		"chat-files/redirect-loop",                                    // too many redirects
	} {
		_, err := c.DownloadChatImage(t.Context(), ref)
		var ve *ValidationError
		if !errors.As(err, &ve) || !errors.Is(err, ErrImageRefused) {
			t.Errorf("%s: got %v, want a refusal", ref, err)
		} else if strings.Contains(err.Error(), testKey) {
			t.Errorf("%s: the error shows the key: %v", ref, err)
		}
	}
	hits.Range(func(k, _ any) bool {
		t.Errorf("the internal server was reached at %v", k)
		return true
	})
}
