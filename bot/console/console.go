package console

import (
	"context"
	"embed"
	"io/fs"
	"log/slog"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/fulfil"
	"shopbot/bot/webapp/initdata"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/work"
)

// Options configure the console.
type Options struct {
	// MaxAge is how long after Telegram issued it an initData is accepted
	// (default initdata.DefaultMaxAge).
	MaxAge time.Duration
	// LinkTTL is how long a signed CSV download link works (default 5
	// minutes); it works once within it.
	LinkTTL time.Duration
	// LowBalance is the upstream balance below which the books show it as
	// low (the watch's LOW_BALANCE_USD; zero: never low).
	LowBalance decimal.Decimal
	// StarsUSDRate values an order's Stars for its margin (STARS_USD_RATE).
	StarsUSDRate decimal.Decimal
}

// Fulfilment is the fulfilment worker's admin operations on one order
// (fulfil.Fulfiller implements it): the same calls as the chat's /order N.
type Fulfilment interface {
	Resend(ctx context.Context, by state.Actor, o *state.Order) error
	RunNow(ctx context.Context, by state.Actor, id int64) (running bool, err error)
	Refund(ctx context.Context, by state.Actor, id int64, tag, from string) error
	PlaceAgain(ctx context.Context, by state.Actor, id int64, tag string) error
	// CheckAdoptNumber and AdoptNumber are /order N's adoption of an
	// upstream order for an order in review: the number checked (and
	// shown to confirm), then checked again and adopted.
	CheckAdoptNumber(ctx context.Context, o *state.Order, n int64) (*fulfil.AdoptCandidate, error)
	AdoptNumber(ctx context.Context, by state.Actor, o *state.Order, tag string, n int64) error
}

// Support is the helpdesk (support.Support implements it).
type Support interface {
	Inbox(ctx context.Context, limit int) ([]work.Ticket, error)
	Thread(ctx context.Context, buyer int64) (work.Ticket, []work.TicketMsg, error)
	Answer(ctx context.Context, by state.Actor, buyer int64, text string) error
	// AnswerPhoto answers with an uploaded photo (a checked JPEG or PNG)
	// and a caption; ThreadPhoto is a photo of a thread, by its key.
	AnswerPhoto(ctx context.Context, by state.Actor, buyer int64, caption, name string, data []byte) error
	ThreadPhoto(ctx context.Context, buyer int64, key string, limit int64) ([]byte, error)
	CloseTicket(ctx context.Context, by state.Actor, buyer int64) (bool, error)
}

// Books are the money reports (books.Books implements it).
type Books interface {
	Figures(ctx context.Context, from, now time.Time) (*state.Figures, error)
	Referrals(ctx context.Context, from time.Time) (state.ReferralFigures, error)
	UpstreamBalance(ctx context.Context) (decimal.Decimal, error)
	BalanceText(ctx context.Context, lang locales.Lang) (string, error)
	ReconcileText(ctx context.Context, lang locales.Lang, window string) (text, refusal string, err error)
	ExportCSV(ctx context.Context, lang locales.Lang, arg string) (name string, data []byte, refusal string, err error)
	Credit(ctx context.Context, by state.Actor, user int64, amount decimal.Decimal, ref string) (bal decimal.Decimal, dup bool, told string, err error)
	NewCreditRef(admin int64) string
	CreditLimit() decimal.Decimal
	// ChargesPage, ChargesWaiting, RefundsCharges, ResolveCharge and
	// ChargeOutcomeText are /charges': a page of the Star charges listed
	// for review, their count, whether the shop refunds Stars, an owner's
	// decision about one (refund or settle, once however many decide at
	// once; audited) and what came of it in words.
	ChargesPage(ctx context.Context, page, per int) (*state.ChargesPage, error)
	ChargesWaiting(ctx context.Context) (int64, error)
	RefundsCharges() bool
	ResolveCharge(ctx context.Context, by state.Actor, chargeID, status string) (*state.ChargeOutcome, error)
	ChargeOutcomeText(lang locales.Lang, out *state.ChargeOutcome) string
}

// Growth is the admin side's promo codes and broadcasts (admin.Admin
// implements it).
type Growth interface {
	AddPromo(ctx context.Context, by state.Actor, lang locales.Lang, spec string) (*state.Promo, string, error)
	DisablePromo(ctx context.Context, by state.Actor, code string) (bool, error)
	StartBroadcast(ctx context.Context, by state.Actor, lang locales.Lang, text string) (string, error)
	StopBroadcast(ctx context.Context, by state.Actor, id string) (bool, error)
	Broadcast(ctx context.Context, id string) (*work.BroadcastJob, error)
	ActiveBroadcasts(ctx context.Context) ([]string, error)
	BuyersCount(ctx context.Context) (int64, error)
}

// Deps are what the console runs on.
type Deps struct {
	// Token is the bot's token, which signs every initData (and, through
	// a key of its own, the console's download links).
	Token string
	// Engine holds the staff gate, where the console registers its
	// endpoints; it gives the shop's languages.
	Engine *flows.Engine
	// Staff are the configured staff: the roles of a verified user id.
	Staff  flows.Staff
	Orders *records.Orders
	// Users is the buyer registry: the buyers' @usernames, for the order
	// search and pages (nil: none).
	Users  *records.Users
	Promos *records.Promos // nil: no promo codes
	Audit  *records.AuditLog
	// Links remembers the used download links, so each works once
	// across replicas; nil: a link works until it expires.
	Links   *work.Links
	Fulfil  Fulfilment // nil: no actions on orders
	Support Support
	Books   Books
	Growth  Growth
	Log     *slog.Logger
	Now     func() time.Time
}

// Console is the admin console: its page and its API.
type Console struct {
	opts   Options
	d      Deps
	verify *initdata.Verifier
	log    *slog.Logger
	eps    []endpoint
	files  map[string][]byte
}

// endpoint is one API endpoint: "METHOD route" under api/, the perm it
// needs, its description's locale key, its handler.
type endpoint struct {
	method, route string
	perm          flows.Perm
	desc          string
	h             func(*request) (any, *apiError)
	link          bool // reached by a signed link, not initData (a download)
}

func (e endpoint) name() string { return e.method + " " + e.route }

// New returns the console over d and registers its endpoints with the
// staff gate (d.Engine).
func New(opts Options, d Deps) *Console {
	if opts.MaxAge <= 0 {
		opts.MaxAge = initdata.DefaultMaxAge
	}
	if opts.LinkTTL <= 0 {
		opts.LinkTTL = 5 * time.Minute
	}
	if !opts.StarsUSDRate.IsPositive() {
		opts.StarsUSDRate = decimal.RequireFromString("0.013")
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	v := initdata.NewVerifier(d.Token)
	v.MaxAge, v.Now = opts.MaxAge, d.Now
	c := &Console{opts: opts, d: d, verify: v, log: d.Log, files: loadFiles()}
	c.eps = c.endpoints()
	for _, e := range c.eps {
		d.Engine.ConsoleEndpoint(e.name(), e.perm, e.desc)
	}
	return c
}

// endpoints is the console's API: every endpoint with the perm it needs.
func (c *Console) endpoints() []endpoint {
	return []endpoint{
		// Every role may read orders: the console opens for each.
		{method: "GET", route: "session", perm: flows.PermOrdersRead, desc: "console.ep.session", h: c.session},
		{method: "GET", route: "live", perm: flows.PermOrdersRead, desc: "console.ep.live", h: c.live},
		{method: "GET", route: "audit", perm: flows.PermOrdersRead, desc: "console.ep.audit", h: c.audit},
		{method: "GET", route: "orders", perm: flows.PermOrdersRead, desc: "console.ep.orders", h: c.searchOrders},
		{method: "GET", route: "orders/{ref}", perm: flows.PermOrdersRead, desc: "console.ep.order", h: c.order},
		{method: "GET", route: "orders/{ref}/codes", perm: flows.PermOrdersResend, desc: "staff.act.codes", h: c.codes},
		{method: "POST", route: "orders/{ref}/resend", perm: flows.PermOrdersResend, desc: "staff.act.resend", h: c.resend},
		{method: "POST", route: "orders/{ref}/run", perm: flows.PermOrdersResend, desc: "staff.act.run", h: c.run},
		{method: "POST", route: "orders/{ref}/refund", perm: flows.PermOrdersRefund, desc: "staff.act.refund", h: c.refund},
		{method: "POST", route: "orders/{ref}/retry", perm: flows.PermOrdersRetry, desc: "staff.act.replace", h: c.retry},
		{method: "GET", route: "orders/{ref}/adopt", perm: flows.PermOrdersRetry, desc: "console.ep.adopt_check", h: c.adoptCheck},
		{method: "POST", route: "orders/{ref}/adopt", perm: flows.PermOrdersRetry, desc: "staff.act.adopt", h: c.adopt},
		{method: "GET", route: "tickets", perm: flows.PermTickets, desc: "console.ep.tickets", h: c.tickets},
		{method: "GET", route: "tickets/{buyer}", perm: flows.PermTickets, desc: "console.ep.ticket", h: c.thread},
		{method: "POST", route: "tickets/{buyer}/reply", perm: flows.PermTickets, desc: "staff.btn.ticket_reply", h: c.reply},
		{method: "POST", route: "tickets/{buyer}/close", perm: flows.PermTickets, desc: "console.ep.ticket_close", h: c.closeTicket},
		{method: "GET", route: "tickets/{buyer}/photos/{key}", perm: flows.PermTickets, desc: "console.ep.ticket_photo", h: c.ticketPhoto},
		{method: "GET", route: "books/balance", perm: flows.PermBooksRead, desc: "cmd.balance", h: c.balance},
		{method: "GET", route: "books/figures", perm: flows.PermBooksRead, desc: "cmd.stats", h: c.figures},
		{method: "GET", route: "books/reconcile", perm: flows.PermBooksRead, desc: "cmd.reconcile", h: c.reconcile},
		// The Star charges for review: /charges' perms, read by whoever
		// reads the books, refunded and settled by owners.
		{method: "GET", route: "charges", perm: flows.PermBooksRead, desc: "console.ep.charges", h: c.charges},
		{method: "POST", route: "charges/{charge}/refund", perm: flows.PermOrdersRefund, desc: "chg.perm.refund", h: c.refundCharge},
		{method: "POST", route: "charges/{charge}/settle", perm: flows.PermOrdersRetry, desc: "chg.perm.settle", h: c.settleCharge},
		{method: "POST", route: "books/export", perm: flows.PermExport, desc: "console.ep.export", h: c.exportLink},
		{method: "GET", route: "download/{token}", perm: flows.PermExport, desc: "console.ep.download", h: c.download, link: true},
		{method: "POST", route: "credit", perm: flows.PermCredit, desc: "console.ep.credit", h: c.credit},
		{method: "GET", route: "promos", perm: flows.PermPromo, desc: "console.ep.promos", h: c.promos},
		{method: "POST", route: "promos", perm: flows.PermPromo, desc: "console.ep.promo_add", h: c.addPromo},
		{method: "POST", route: "promos/{code}/disable", perm: flows.PermPromo, desc: "console.ep.promo_disable", h: c.disablePromo},
		{method: "GET", route: "referrals", perm: flows.PermBooksRead, desc: "console.ep.referrals", h: c.referrals},
		{method: "GET", route: "broadcasts", perm: flows.PermBroadcast, desc: "console.ep.broadcasts", h: c.broadcasts},
		{method: "POST", route: "broadcasts", perm: flows.PermBroadcast, desc: "cmd.broadcast", h: c.startBroadcast},
		{method: "POST", route: "broadcasts/{id}/stop", perm: flows.PermBroadcast, desc: "staff.btn.bc_stop", h: c.stopBroadcast},
	}
}

// Endpoints are the console's endpoints as the gate knows them ("METHOD
// route"), for the tests that walk them.
func (c *Console) Endpoints() []string {
	out := make([]string, len(c.eps))
	for i, e := range c.eps {
		out[i] = e.name()
	}
	return out
}

// Handler serves the page and its API under base (the Mini App's path +
// "admin/"); mount it at base on the shop's HTTP listener.
func (c *Console) Handler(base string) http.Handler {
	mux := http.NewServeMux()
	for _, e := range c.eps {
		mux.Handle(e.method+" "+base+"api/"+e.route, c.gated(e))
	}
	mux.Handle(base+"api/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, errNotFound.said(c.langOf(r, "")))
	}))
	mux.HandleFunc("GET "+base+"{file}", c.static)
	mux.HandleFunc("GET "+base+"{$}", c.static)
	return securityHeaders(mux)
}

// csp is the page's Content-Security-Policy, the Mini App's: its own
// scripts and styles and Telegram's script, its own API, no inline code;
// images also from blob: (a ticket's photo, fetched from the API with the
// page's initData).
const csp = "default-src 'none'; script-src 'self' https://telegram.org; style-src 'self'; img-src 'self' data: blob:; " +
	"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; " +
	"frame-ancestors 'self' https://web.telegram.org"

func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", csp)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.ServeHTTP(w, r)
	})
}

//go:embed static
var staticFS embed.FS

func loadFiles() map[string][]byte {
	out := map[string][]byte{}
	sub, _ := fs.Sub(staticFS, "static") // cannot fail: the directory is embedded
	entries, _ := fs.ReadDir(sub, ".")
	for _, e := range entries {
		if b, err := fs.ReadFile(sub, e.Name()); err == nil {
			out[e.Name()] = b
		}
	}
	return out
}

// static serves the page's files; the page itself at the base path.
func (c *Console) static(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	if name == "" {
		name = "index.html"
	}
	body, ok := c.files[name]
	if !ok || strings.Contains(name, "/") {
		http.NotFound(w, r)
		return
	}
	typ := mime.TypeByExtension(path.Ext(name))
	if typ == "" {
		typ = "application/octet-stream"
	}
	w.Header().Set("Content-Type", typ)
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(body)
}
