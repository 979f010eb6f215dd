package resellersim

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"shopbot/reseller/resellersim/chat"
	"shopbot/reseller/resellersim/simcatalog"
	"strings"
	"testing"
)

var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00")

// postMessage sends a chat message as multipart/form-data.
func (e *env) postMessage(n int, text string, image []byte) response {
	e.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if text != "" {
		mw.WriteField("body", text)
	}
	if image != nil {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="image"; filename="shot.png"`)
		h.Set("Content-Type", "application/octet-stream")
		w, _ := mw.CreatePart(h)
		w.Write(image)
	}
	mw.Close()
	req, _ := http.NewRequestWithContext(e.t.Context(), http.MethodPost, e.base+path("/orders/%d/chat", n), &buf)
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return e.do(req)
}

func (e *env) manualOrder(service, product string, fields obj) int {
	e.t.Helper()
	return num(e.t, e.post("/manual-services/order", obj{"service_id": service, "product_id": product, "fields": fields})["number"])
}

func messages(t *testing.T, chat obj) []obj {
	t.Helper()
	var out []obj
	for _, m := range list(t, chat["messages"]) {
		out = append(out, m.(obj))
	}
	return out
}

func TestChatDefaultScript(t *testing.T) {
	e := newEnv(t, Config{})
	n := e.manualOrder(simcatalog.DemoManualService, simcatalog.DemoManualOffer, obj{"login": "a@b.c", "password": "pw"})
	c := e.get(path("/orders/%d/chat", n))
	eq(t, "object", c["object"], any("chat"))
	eq(t, "opened", c["chat_opened"], any(true))
	eq(t, "frozen", c["chat_frozen"], any(false))
	eq(t, "read only", c["chat_read_only"], any(false))
	ms := messages(t, c)
	eq(t, "greeting", len(ms), 1)
	eq(t, "greeting author", ms[0]["author"], any("operator"))
	eq(t, "greeting object", ms[0]["object"], any("chat_message"))
	if !strings.Contains(ms[0]["text"].(string), path("#%d", n)) {
		t.Fatalf("greeting %v", ms[0]["text"])
	}
	eq(t, "greeting image", ms[0]["image"], nil)

	r := e.postMessage(n, "my 2FA code is 123456", nil)
	eq(t, "status", r.status, http.StatusOK)
	eq(t, "sent author", r.body["author"], any("client"))
	eq(t, "sent text", r.body["text"], any("my 2FA code is 123456"))
	eq(t, "sent image", r.body["image"], nil)
	num(t, r.body["id"])

	r = e.postMessage(n, "", pngBytes)
	eq(t, "image status", r.status, http.StatusOK)
	eq(t, "image text", r.body["text"], nil)
	url, _ := r.body["image"].(string)
	if !strings.HasPrefix(url, e.base+"/chat-files/") {
		t.Fatalf("image url %q", url)
	}
	resp, err := e.srv.Client().Get(url)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	eq(t, "image bytes", string(got), string(pngBytes))
	eq(t, "image type", resp.Header.Get("Content-Type"), "image/png")

	ms = messages(t, e.get(path("/orders/%d/chat", n)))
	var texts []string
	for _, m := range ms {
		texts = append(texts, m["author"].(string)+":"+strings.Split(stringOr(m["text"], "<image>"), " ")[0])
	}
	eq(t, "conversation", strings.Join(texts, ","), "operator:Hello!,client:my,operator:Got,client:<image>,operator:Thanks,")
	eq(t, "echo", ms[2]["text"], any("Got it: my 2FA code is 123456"))
	eq(t, "image ack", ms[4]["text"], any("Thanks, image received"))
	eq(t, "hook view", len(e.sim.ChatMessages(n)), 5)
}

func stringOr(v any, def string) string {
	if s, ok := v.(string); ok {
		return s
	}
	return def
}

func TestChatScriptAndOperator(t *testing.T) {
	e := newEnv(t, Config{})
	var got []string
	e.sim.SetOperatorScript(func(n int, msg string) []string {
		got = append(got, msg)
		e.sim.Balance() // the script may call the Sim
		if msg == "ping" {
			return []string{"pong", "anything else?"}
		}
		return nil
	})
	n := e.manualOrder(simcatalog.DemoManualService, simcatalog.DemoManualOffer, obj{"login": "a", "password": "b"})
	e.postMessage(n, "ping", nil)
	e.postMessage(n, "thanks", nil)
	if err := e.sim.OperatorSays(n, "Done, please check your wallet"); err != nil {
		t.Fatal(err)
	}
	ms := messages(t, e.get(path("/orders/%d/chat", n)))
	var texts []string
	for _, m := range ms[1:] {
		texts = append(texts, m["text"].(string))
	}
	eq(t, "messages", strings.Join(texts, "|"), "ping|pong|anything else?|thanks|Done, please check your wallet")
	eq(t, "script saw", strings.Join(got, "|"), "ping|thanks")
	for i := 1; i < len(ms); i++ {
		if num(t, ms[i]["id"]) <= num(t, ms[i-1]["id"]) {
			t.Fatal("message ids do not increase")
		}
	}
	if err := e.sim.OperatorSays(99999, "x"); err == nil {
		t.Fatal("OperatorSays on an unknown order succeeded")
	}
}

func TestChatFrozenAndReadOnly(t *testing.T) {
	e := newEnv(t, Config{})
	n := e.manualOrder(simcatalog.DemoManualService, simcatalog.DemoManualOffer, obj{"login": "a", "password": "b"})
	if err := e.sim.SetChatReadOnly(n, true); err != nil {
		t.Fatal(err)
	}
	eq(t, "read only", e.get(path("/orders/%d/chat", n))["chat_read_only"], any(true))
	e.wantError(e.postMessage(n, "hi", nil), http.StatusBadRequest, "invalid_request")
	e.sim.SetChatReadOnly(n, false)
	eq(t, "writable again", e.postMessage(n, "hi", nil).status, http.StatusOK)
	if err := e.sim.FreezeChat(n); err != nil {
		t.Fatal(err)
	}
	eq(t, "frozen", e.get(path("/orders/%d/chat", n))["chat_frozen"], any(true))
	e.wantError(e.postMessage(n, "hi", nil), http.StatusBadRequest, "invalid_request")
}

func TestChatErrors(t *testing.T) {
	e := newEnv(t, Config{})
	n := e.manualOrder(simcatalog.DemoManualService, simcatalog.DemoManualOffer, obj{"login": "a", "password": "b"})
	e.wantError(e.postMessage(n, "", nil), http.StatusBadRequest, "invalid_request")
	e.wantError(e.send(e.key, http.MethodPost, path("/orders/%d/chat", n), obj{"body": "json"}), http.StatusBadRequest, "invalid_request")
	e.wantError(e.postMessage(n, strings.Repeat("x", chat.MaxText+1), nil), http.StatusBadRequest, "invalid_request")

	gift := e.buyGiftCard(simcatalog.DemoGiftCard, 1)
	e.wantError(e.send(e.key, http.MethodGet, path("/orders/%d/chat", gift), nil), http.StatusBadRequest, "invalid_request")
	e.wantError(e.postMessage(gift, "hi", nil), http.StatusBadRequest, "invalid_request")
	if err := e.sim.FreezeChat(gift); err == nil {
		t.Fatal("FreezeChat on a gift-card order succeeded")
	}
	for _, p := range []string{"/orders/424242/chat", "/orders/abc/chat"} {
		e.wantError(e.send(e.key, http.MethodGet, p, nil), http.StatusNotFound, "not_found")
	}
	e.wantError(e.postMessage(424242, "hi", nil), http.StatusNotFound, "not_found")
	e.wantError(e.send(e.key, http.MethodGet, "/chat-files/77", nil), http.StatusNotFound, "not_found")

	// A manual service without chat: the chat exists but is not opened.
	quiet := e.manualOrder(simcatalog.DemoManualServiceNoChat, simcatalog.DemoManualOfferNoChat, obj{"trade_url": "https://example.com/t"})
	c := e.get(path("/orders/%d/chat", quiet))
	eq(t, "opened", c["chat_opened"], any(false))
	eq(t, "messages", len(list(t, c["messages"])), 0)
	e.wantError(e.postMessage(quiet, "hi", nil), http.StatusBadRequest, "invalid_request")
	o := e.get(path("/orders/%d", quiet))
	eq(t, "chat_required", o["chat_required"], any(false))
	// The operator may still open it.
	e.sim.OperatorSays(quiet, "Please accept the trade")
	eq(t, "opened by operator", e.get(path("/orders/%d/chat", quiet))["chat_opened"], any(true))
	eq(t, "buyer may answer", e.postMessage(quiet, "ok", nil).status, http.StatusOK)
}

func TestChatOperatorSendsImage(t *testing.T) {
	e := newEnv(t, Config{})
	n := e.manualOrder(simcatalog.DemoManualService, simcatalog.DemoManualOffer, obj{"login": "a", "password": "b"})
	if err := e.sim.OperatorSendsImage(n, "here is the receipt", "", pngBytes); err != nil {
		t.Fatal(err)
	}
	ms := messages(t, e.get(path("/orders/%d/chat", n)))
	last := ms[len(ms)-1]
	eq(t, "author", last["author"], any("operator"))
	eq(t, "text", last["text"], any("here is the receipt"))
	url, _ := last["image"].(string)
	resp, err := e.srv.Client().Get(url)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	eq(t, "image bytes", string(got), string(pngBytes))
	eq(t, "image type", resp.Header.Get("Content-Type"), "image/png")
	hook := e.sim.ChatMessages(n)
	data, ok := e.sim.ChatImage(hook[len(hook)-1].Image)
	eq(t, "ChatImage", ok && bytes.Equal(data, pngBytes), true)
	if err := e.sim.OperatorSendsImage(n, "", "", nil); err == nil {
		t.Fatal("an empty image was accepted")
	}
}
