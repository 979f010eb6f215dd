package botapitest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"shopbot/bot/botapitest/calls"
	"shopbot/bot/botapitest/schema"
	"shopbot/bot/botapitest/types"
)

// DefaultToken is the bot token a Server accepts unless WithToken says otherwise.
const DefaultToken = "123456:TEST-token"

// Option configures a Server.
type Option func(*config)

type config struct {
	token       string
	bot         *types.User
	onViolation []func(error)
	now         func() time.Time
	starBalance int64
	callbackTTL time.Duration
	schema      *schema.Schema
	addr        string
}

// WithToken sets the bot token the server accepts (default DefaultToken).
// The bot's user id is the number before the colon unless WithBotUser sets it.
func WithToken(token string) Option { return func(c *config) { c.token = token } }

// WithBotUser sets the user getMe returns and messages come from; IsBot is
// always true. Zero fields keep their defaults (id from the token, first
// name "Shop Bot", username "shopbot_test_bot").
func WithBotUser(u types.User) Option { return func(c *config) { c.bot = &u } }

// OnViolation registers a function called with every *Violation (schema or
// value rule broken by a request, or by an update a test pushed). It may be
// called from several goroutines at once.
func OnViolation(fn func(error)) Option {
	return func(c *config) { c.onViolation = append(c.onViolation, fn) }
}

// WithClock sets the clock used for message dates, transaction dates and
// query expiry (default time.Now). Long-poll timeouts use real time.
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// WithStarBalance sets the bot's initial Telegram Star balance.
func WithStarBalance(stars int64) Option { return func(c *config) { c.starBalance = stars } }

// WithCallbackQueryTTL sets how long a callback query can be answered
// (default 15s); later answers get "query is too old".
func WithCallbackQueryTTL(d time.Duration) Option { return func(c *config) { c.callbackTTL = d } }

// WithSchema checks requests against the given schema instead of the
// embedded one (schema.Embedded).
func WithSchema(s *schema.Schema) Option { return func(c *config) { c.schema = s } }

// WithAddr makes the server listen on addr (e.g. "127.0.0.1:8081") instead
// of a random local port, for a demo that prints a fixed URL.
func WithAddr(addr string) Option { return func(c *config) { c.addr = addr } }

// APIError is an error answer of the Bot API: {"ok":false,"error_code":Code,
// "description":Description,"parameters":{...}}.
type APIError struct {
	// Code is the HTTP status and error_code, e.g. 400, 403, 429.
	Code int
	// Description is Telegram's text, e.g. "Forbidden: bot was blocked by the user".
	Description string
	// RetryAfter is parameters.retry_after in seconds (429 answers).
	RetryAfter int
	// MigrateToChatID is parameters.migrate_to_chat_id.
	MigrateToChatID int64
}

// Error returns the code and description.
func (e *APIError) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Description) }

func badRequest(desc string) *APIError {
	return &APIError{Code: http.StatusBadRequest, Description: "Bad Request: " + desc}
}

// StubFunc answers a method call in place of the server's own simulation. A
// returned *APIError becomes that error answer; any other error becomes a 400.
type StubFunc func(calls.Call) (result any, err error)

// Server is a fake Telegram Bot API server. It checks every request against
// the Bot API schema, records it, and simulates chats, updates, payments and
// faults. All methods are safe for concurrent use.
type Server struct {
	cfg    config
	schema *schema.Schema
	http   *httptest.Server
	bot    types.User

	done      chan struct{}
	closeOnce sync.Once

	log *calls.Log // the recorded calls (record.go)

	mu         sync.Mutex
	closed     bool
	violations []error

	chats map[int64]*chatState
	users map[int64]types.User

	updates        []queuedUpdate
	nextUpdateID   int64
	updatesChanged chan struct{}
	pollGen        int64
	polling        int           // getUpdates requests waiting for an update
	pollingChanged chan struct{} // closed when polling changes
	allowedUpdates []string

	seq          int64
	chargeRun    int64 // this server's part of its charge ids (chargeIDLocked)
	callbacks    map[string]*callbackState
	preCheckouts map[string]*preCheckoutState
	inline       map[string]*inlineState    // inline queries pushed (inline.go)
	prepared     map[string]PreparedMessage // prepared inline messages, by id

	commands map[CommandScope][]types.BotCommand
	webhook  types.WebhookInfo

	starBalance int64
	// affiliates are the buyers an affiliate of the bot's own affiliate
	// program brought (SetAffiliate): their payments carry its commission.
	affiliates   map[int64]affiliateOf
	transactions []types.StarTransaction
	charges      map[string]*charge
	links        []InvoiceLink // createInvoiceLink's invoices, oldest first

	files     map[string]*storedFile       // file_id -> content
	photos    map[string][]types.PhotoSize // file_id of any size -> the photo's sizes
	photoName map[string]string            // file_id of any size -> the name it was uploaded under
	videos    map[string]types.Video       // file_id -> a video a user sent or the bot uploaded (media.go)
	docs      map[string]types.Document    // file_id -> a document a user sent (media.go)
	filePaths map[string]string            // file_path -> file_id
	downloads []string

	failures []*failure
	blocked  map[int64]bool
	flood    floodLimit
	floods   map[int64]*chatFlood
	latency  time.Duration
	stubs    map[string]StubFunc
}

// New starts a fake Bot API server on a local port. Close it when done.
func New(opts ...Option) (*Server, error) {
	cfg := config{token: DefaultToken, now: time.Now, callbackTTL: 15 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.token == "" || strings.ContainsAny(cfg.token, "/ ") {
		return nil, fmt.Errorf("botapitest: invalid token %q", cfg.token)
	}
	sch := cfg.schema
	if sch == nil {
		var err error
		if sch, err = schema.Embedded(); err != nil {
			return nil, fmt.Errorf("botapitest: %w", err)
		}
	}
	s := &Server{
		cfg:            cfg,
		schema:         sch,
		done:           make(chan struct{}),
		log:            calls.NewLog(),
		pollingChanged: make(chan struct{}),
		chats:          map[int64]*chatState{},
		users:          map[int64]types.User{},
		nextUpdateID:   1000,
		updatesChanged: make(chan struct{}),
		callbacks:      map[string]*callbackState{},
		preCheckouts:   map[string]*preCheckoutState{},
		commands:       map[CommandScope][]types.BotCommand{},
		starBalance:    cfg.starBalance,
		charges:        map[string]*charge{},
		blocked:        map[int64]bool{},
		stubs:          map[string]StubFunc{},
	}
	s.bot = s.defaultBot()
	s.http = httptest.NewUnstartedServer(http.HandlerFunc(s.serveHTTP))
	if cfg.addr != "" {
		l, err := net.Listen("tcp", cfg.addr)
		if err != nil {
			return nil, fmt.Errorf("botapitest: listen on %s: %w", cfg.addr, err)
		}
		_ = s.http.Listener.Close()
		s.http.Listener = l
	}
	s.http.Start()
	return s, nil
}

func (s *Server) defaultBot() types.User {
	u := types.User{FirstName: "Shop Bot", Username: "shopbot_test_bot"}
	if s.cfg.bot != nil {
		u = *s.cfg.bot
		if u.FirstName == "" {
			u.FirstName = "Shop Bot"
		}
		if u.Username == "" {
			u.Username = "shopbot_test_bot"
		}
	}
	u.IsBot = true
	if u.ID == 0 {
		idPart, _, _ := strings.Cut(s.cfg.token, ":")
		u.ID, _ = strconv.ParseInt(idPart, 10, 64)
	}
	return u
}

// NewT starts a server for a test and closes it when the test ends. Every
// violation fails the test with t.Errorf naming the method, field and problem.
func NewT(t testing.TB, opts ...Option) *Server {
	t.Helper()
	var s *Server
	report := func(err error) {
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if !closed {
			t.Errorf("botapitest: %v", err)
		}
	}
	s, err := New(append(opts, OnViolation(report))...)
	if err != nil {
		t.Fatalf("botapitest: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// Close stops the server: pending long polls return, subscriptions end and
// later requests fail to connect. It is safe to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		close(s.done)
		s.log.Close()
		s.http.CloseClientConnections()
		s.http.Close()
	})
}

// URL returns the base URL to give the bot as its server URL
// (bot.WithServerURL); requests go to URL()+"/bot"+Token()+"/<method>".
func (s *Server) URL() string { return s.http.URL }

// Token returns the bot token the server accepts.
func (s *Server) Token() string { return s.cfg.token }

// Bot returns the bot's own user, as getMe returns it.
func (s *Server) Bot() types.User { return s.bot }

// Schema returns the schema requests are checked against.
func (s *Server) Schema() *schema.Schema { return s.schema }

// Violations returns every violation seen so far, oldest first.
func (s *Server) Violations() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.violations...)
}

// Stub makes the server answer method with fn instead of its own simulation
// (or its generic answer for methods it does not simulate). Requests are
// still checked and recorded. A nil fn removes the stub.
func (s *Server) Stub(method string, fn StubFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.schema.Method(method); m != nil {
		method = m.Name
	}
	if fn == nil {
		delete(s.stubs, method)
		return
	}
	s.stubs[method] = fn
}

func (s *Server) now() time.Time { return s.cfg.now() }

// report records violations and passes them to the OnViolation functions.
// It must be called without s.mu held.
func (s *Server) report(vs []*schema.Violation) {
	if len(vs) == 0 {
		return
	}
	s.mu.Lock()
	for _, v := range vs {
		s.violations = append(s.violations, v)
	}
	s.mu.Unlock()
	for _, v := range vs {
		for _, fn := range s.cfg.onViolation {
			fn(v)
		}
	}
}

// checkOutgoing checks JSON the server itself produces (results, updates)
// against the schema; a mismatch is a bug in the fake (or in a pushed update).
func (s *Server) checkOutgoing(what string, v any, exprs []string) []*schema.Violation {
	data, err := json.Marshal(v)
	if err != nil {
		return []*schema.Violation{{Method: what, Problem: "cannot encode: " + err.Error()}}
	}
	vs, err := s.schema.CheckJSON(what, data, exprs...)
	if err != nil {
		return []*schema.Violation{{Method: what, Problem: "cannot decode: " + err.Error()}}
	}
	return vs
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func writeError(w http.ResponseWriter, e *APIError) {
	body := map[string]any{"ok": false, "error_code": e.Code, "description": e.Description}
	params := map[string]any{}
	if e.RetryAfter > 0 {
		params["retry_after"] = e.RetryAfter
	}
	if e.MigrateToChatID != 0 {
		params["migrate_to_chat_id"] = e.MigrateToChatID
	}
	if len(params) > 0 {
		body["parameters"] = params
	}
	writeJSON(w, e.Code, body)
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if rest, ok := strings.CutPrefix(r.URL.Path, "/file/bot"); ok {
		s.serveFile(w, r, rest)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, methodName, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 {
		writeError(w, &APIError{Code: http.StatusNotFound, Description: "Not Found"})
		return
	}
	if token != s.cfg.token {
		writeError(w, &APIError{Code: http.StatusUnauthorized, Description: "Unauthorized"})
		return
	}
	if !s.sleepLatency(r.Context()) {
		return
	}

	call := calls.Call{Method: methodName, At: s.now()}
	params, files, err := calls.Read(r)
	m := s.schema.Method(methodName)
	if m != nil {
		call.Method = m.Name
	}
	if err != nil && (r.Context().Err() != nil || errors.Is(err, io.ErrUnexpectedEOF)) {
		// The client went away mid-request (a bot shutting down cancels its
		// calls): Telegram sees a dropped connection, not a bad request.
		return
	}
	if err != nil {
		v := &schema.Violation{Method: call.Method, Problem: "malformed request: " + err.Error()}
		s.finish(w, call, nil, badRequest("schema: "+v.Error()), []*schema.Violation{v})
		return
	}
	call.Files = files
	call.Raw = make(map[string]string, len(params))
	for k, wv := range params {
		if wv.Kind != schema.Upload {
			call.Raw[k] = wv.Text
		}
	}
	if m == nil {
		call.Params = map[string]any{}
		for k, wv := range params {
			if wv.Kind != schema.Upload {
				call.Params[k] = wv.Value()
			}
		}
		v := &schema.Violation{Method: methodName, Problem: "unknown method (not in " + s.schema.Version + ")"}
		s.finish(w, call, nil, &APIError{Code: http.StatusNotFound, Description: "Not Found"}, []*schema.Violation{v})
		return
	}

	uploads := make(map[string]bool, len(files))
	for name := range files {
		uploads[name] = true
	}
	decoded, bad := s.schema.CheckCall(m, params, uploads)
	call.Params = decoded
	if len(bad) > 0 {
		s.finish(w, call, nil, badRequest("schema: "+bad[0].Error()), bad)
		return
	}

	result, apiErr := s.dispatch(r.Context(), m, &call)
	var vs []*schema.Violation
	if apiErr == nil {
		vs = s.checkOutgoing(m.Name+" result (fake server output)", result, m.Returns)
	}
	s.finish(w, call, result, apiErr, vs)
}

// finish records the call, reports violations and writes the answer.
func (s *Server) finish(w http.ResponseWriter, call calls.Call, result any, apiErr *APIError, vs []*schema.Violation) {
	if apiErr != nil {
		call.ErrorCode, call.Description = apiErr.Code, apiErr.Description
	} else {
		call.Result = result
	}
	s.record(call)
	s.report(vs)
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "result": result})
}

func (s *Server) sleepLatency(ctx context.Context) bool {
	s.mu.Lock()
	d := s.latency
	s.mu.Unlock()
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-s.done:
	}
	return false
}

// dispatch runs the simulation of one checked call.
func (s *Server) dispatch(ctx context.Context, m *schema.Method, c *calls.Call) (any, *APIError) {
	s.mu.Lock()
	stub := s.stubs[m.Name]
	fault := s.takeFaultLocked(m.Name, c)
	s.mu.Unlock()
	if fault != nil {
		return nil, fault
	}
	if stub != nil {
		res, err := stub(*c)
		if err != nil {
			var ae *APIError
			if errors.As(err, &ae) {
				return nil, ae
			}
			return nil, badRequest(err.Error())
		}
		return res, nil
	}
	switch m.Name {
	case "getMe":
		return botUser{User: s.bot}, nil
	case "getUpdates":
		return s.getUpdates(ctx, c)
	case "setWebhook", "deleteWebhook", "getWebhookInfo":
		return s.webhookMethod(m.Name, c)
	case "sendMessage", "sendDocument", "sendPhoto", "sendVideo", "sendInvoice":
		return s.send(m.Name, c)
	case "editMessageText", "editMessageCaption", "editMessageReplyMarkup", "editMessageMedia":
		return s.edit(m.Name, c)
	case "deleteMessage":
		return s.deleteMessage(c)
	case "getFile":
		return s.getFile(c)
	case "answerCallbackQuery":
		return s.answerCallbackQuery(c)
	case "answerPreCheckoutQuery":
		return s.answerPreCheckoutQuery(c)
	case "answerInlineQuery":
		return s.answerInlineQuery(c)
	case "savePreparedInlineMessage":
		return s.savePreparedInlineMessage(c)
	case "setMyCommands", "getMyCommands", "deleteMyCommands":
		return s.commandsMethod(m.Name, c)
	case "getMyStarBalance", "getStarTransactions", "refundStarPayment":
		return s.starsMethod(m.Name, c)
	case "createInvoiceLink":
		return s.createInvoiceLink(c)
	}
	return s.generic(m, c)
}

// generic answers a method the server does not simulate: true for methods
// returning Boolean, a plain message for other send methods, the edited
// message for other edits, a new message id for copyMessage, a link for
// methods returning a String, an empty list for lists; anything else is a
// 400 asking for a Stub.
func (s *Server) generic(m *schema.Method, c *calls.Call) (any, *APIError) {
	returns := map[string]bool{}
	for _, r := range m.Returns {
		returns[r] = true
	}
	switch {
	case returns["Message"] && strings.HasPrefix(m.Name, "send"):
		return s.send(m.Name, c)
	case returns["Message"] && (strings.HasPrefix(m.Name, "edit") || strings.HasPrefix(m.Name, "stop")):
		return s.edit(m.Name, c)
	case returns["MessageId"]:
		msg, apiErr := s.send(m.Name, c)
		if apiErr != nil {
			return nil, apiErr
		}
		return map[string]int{"message_id": msg.(types.Message).MessageID}, nil
	case returns["Boolean"]:
		return true, nil
	case returns["String"]:
		s.mu.Lock()
		n := s.nextSeqLocked()
		s.mu.Unlock()
		return fmt.Sprintf("https://t.me/+TEST%d", n), nil
	}
	for _, r := range m.Returns {
		if strings.HasPrefix(r, "Array of ") {
			return []any{}, nil
		}
	}
	return nil, badRequest("botapitest does not simulate " + m.Name + "; use Server.Stub")
}
