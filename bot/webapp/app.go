package webapp

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"log/slog"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/webapp/initdata"
	"shopbot/flows"
	"shopbot/flows/shop"
	"shopbot/state"
)

// DefaultPath is where the Mini App is served when Options.Path is empty.
const DefaultPath = "/app/"

// Options configure the Mini App.
type Options struct {
	// Path is where the page and its API are served on the shop's HTTP
	// listener: WEBAPP_URL's path, ending in "/" (default DefaultPath).
	Path string
	// MaxAge is how long after Telegram issued it an initData is accepted
	// (default initdata.DefaultMaxAge, 24 hours).
	MaxAge time.Duration
	// Limit API requests per buyer per Window (default 120 a minute): the
	// page's browsing and its polling of an order. Quotes, searches and
	// invoices count against the chat's own limits besides.
	Limit  int
	Window time.Duration
}

// WithDefaults returns o with the defaults filled in.
func (o Options) WithDefaults() Options {
	if o.Path == "" {
		o.Path = DefaultPath
	}
	if !strings.HasPrefix(o.Path, "/") {
		o.Path = "/" + o.Path
	}
	if !strings.HasSuffix(o.Path, "/") {
		o.Path += "/"
	}
	if o.MaxAge <= 0 {
		o.MaxAge = initdata.DefaultMaxAge
	}
	if o.Limit <= 0 {
		o.Limit = 120
	}
	if o.Window <= 0 {
		o.Window = time.Minute
	}
	return o
}

// Payments is what the Mini App needs of checkout (checkout.Checkout
// implements it): the Stars invoice link of a quote, or why there is none.
type Payments interface {
	InvoiceLink(ctx context.Context, env *flows.Env, quoteID string) (link, refusal string, err error)
}

// Wallet is what the Mini App needs of checkout's shop wallet
// (checkout.Checkout implements it): the chat's wallet payment, statement
// and top-up, each the chat's own path.
type Wallet interface {
	PayFromWallet(ctx context.Context, env *flows.Env, quoteID string) (o *state.Order, refusal string, err error)
	WalletStatement(ctx context.Context, env *flows.Env, offset, count int) (decimal.Decimal, []state.StatementLine, error)
	TopupRange(ctx context.Context, env *flows.Env) (lo, hi decimal.Decimal, amounts []decimal.Decimal, on bool, err error)
	TopupStars(usd decimal.Decimal) int64
	TopupLink(ctx context.Context, env *flows.Env, usd decimal.Decimal) (link, refusal string, err error)
}

// Orders is what the Mini App reads of the shop's orders
// (records.Orders implements it).
type Orders interface {
	Get(ctx context.Context, id int64) (*state.Order, error)
	ByQuote(ctx context.Context, quoteID string) (*state.Order, error)
	ListByUser(ctx context.Context, userID int64, offset, count int) ([]*state.Order, error)
	CountByUser(ctx context.Context, userID int64) (int64, error)
}

// Images serves the catalog's images through the shop (bot/images
// implements it): the page shows an image by its key, from the shop's own
// address, never the upstream's URL.
type Images interface {
	// Names returns the key of each URL ("" for none), recorded so that
	// any replica finds it.
	Names(ctx context.Context, urls []string) []string
	// Image returns the image of a key the app listed: its content, type
	// and ETag; an error when there is none to show.
	Image(ctx context.Context, key string) (data []byte, typ, etag string, err error)
}

// Limiter counts a buyer's API requests in windows (redisstore.Limiter).
type Limiter interface {
	Allow(ctx context.Context, key string) (bool, time.Duration, error)
}

// Deps are what the Mini App runs on.
type Deps struct {
	// Token is the bot's token, which signs every initData.
	Token string
	// Shop is the product lines' shop (catalog, pricing, quotes, the
	// rate limit on costly actions), the one lines.Register gave the chat.
	Shop *shop.Shop
	// Engine gives the shop's languages.
	Engine *flows.Engine
	// Payments makes invoice links; nil: payments are off.
	Payments Payments
	// Wallet pays from and tops up the shop wallet; nil: the wallet is
	// off.
	Wallet Wallet
	Orders Orders
	// Images shows the catalog's images; nil: placeholders only
	// (SHOW_IMAGES=false).
	Images Images
	// Support is the shop's support and terms; nil: the app has no
	// support page (tests).
	Support Support
	// Referrals is the referral program; nil: referrals are off.
	Referrals Referrals
	// Limiter counts each buyer's API requests (Options.Limit per
	// Options.Window); nil: no limit (tests).
	Limiter Limiter
	// BotName gives the bot's username, for links to the chat ("" until
	// known).
	BotName func() string
	Log     *slog.Logger
	Now     func() time.Time
}

// App is the Mini App: its page and its API.
type App struct {
	opts   Options
	d      Deps
	verify *initdata.Verifier
	files  map[string]*asset // the page's files by name
	log    *slog.Logger
}

// New returns the Mini App configured by opts over d.
func New(opts Options, d Deps) *App {
	opts = opts.WithDefaults()
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.BotName == nil {
		d.BotName = func() string { return "" }
	}
	v := initdata.NewVerifier(d.Token)
	v.MaxAge, v.Now = opts.MaxAge, d.Now
	return &App{opts: opts, d: d, verify: v, files: loadAssets(), log: d.Log}
}

// Path is where the app is served (ending in "/").
func (a *App) Path() string { return a.opts.Path }

// Handler serves the page and its API under Path; mount it at Path on the
// shop's HTTP listener.
func (a *App) Handler() http.Handler {
	p := a.opts.Path
	mux := http.NewServeMux()
	api := func(method, route string, h func(*request) (any, *apiError)) {
		mux.Handle(method+" "+p+"api/"+route, a.authed(h))
	}
	api("GET", "session", a.session)
	api("GET", "lines/{line}", a.categories)
	api("GET", "lines/{line}/categories/{category}", a.offers)
	api("POST", "check", a.check)
	api("POST", "quote", a.quote)
	api("POST", "pay", a.pay)
	api("GET", "quotes/{quote}/order", a.quoteOrder)
	api("GET", "orders/{ref}", a.order)
	api("GET", "orders", a.orders)
	api("GET", "search", a.search)
	api("POST", "quotes/{quote}/promo", a.promo)
	api("GET", "wallet", a.wallet)
	api("POST", "wallet/topup", a.topup)
	api("GET", "referral", a.referral)
	api("POST", "referral/share", a.referralShare)
	api("GET", "terms", a.terms)
	api("GET", "support", a.support)
	api("POST", "support", a.supportWrite)
	api("POST", "support/close", a.supportClose)
	mux.Handle(p+"api/", a.authed(func(*request) (any, *apiError) { return nil, errNotFound })) // anything else under api/
	mux.HandleFunc("GET "+p+"img/{key}", a.image)
	mux.HandleFunc("GET "+p+"{file}", a.static)
	mux.HandleFunc("GET "+p+"{$}", a.static)
	return securityHeaders(mux)
}

// csp is the page's Content-Security-Policy: its own scripts and styles
// and Telegram's Mini App script, its own API, no inline code, images only
// from itself, and framed only by Telegram's web clients.
const csp = "default-src 'none'; script-src 'self' https://telegram.org; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; " +
	"frame-ancestors 'self' https://web.telegram.org"

// securityHeaders sets the headers every answer carries.
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

// asset is one file of the page, read and compressed once.
type asset struct {
	name       string
	body, gzip []byte
	etag       string
	typ        string
}

// loadAssets reads the embedded page and gzips each file once.
func loadAssets() map[string]*asset {
	out := map[string]*asset{}
	sub, _ := fs.Sub(staticFS, "static") // cannot fail: the directory is embedded
	entries, _ := fs.ReadDir(sub, ".")
	for _, e := range entries {
		body, err := fs.ReadFile(sub, e.Name())
		if err != nil {
			continue
		}
		var zb bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&zb, gzip.BestCompression)
		_, _ = zw.Write(body)
		_ = zw.Close()
		sum := sha256.Sum256(body)
		typ := mime.TypeByExtension(path.Ext(e.Name()))
		if typ == "" {
			typ = "application/octet-stream"
		}
		out[e.Name()] = &asset{name: e.Name(), body: body, gzip: zb.Bytes(), etag: `"` + hex.EncodeToString(sum[:8]) + `"`, typ: typ}
	}
	return out
}

// static serves the page's files; the page itself at Path.
func (a *App) static(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	if name == "" {
		name = "index.html"
	}
	f := a.files[name]
	if f == nil {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", f.typ)
	h.Set("ETag", f.etag)
	h.Set("Vary", "Accept-Encoding")
	// The page is small and changes with the binary: the browser asks
	// again each time and gets 304 while it is the same.
	h.Set("Cache-Control", "no-cache")
	if match := r.Header.Get("If-None-Match"); match == f.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := f.body
	if acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		body = f.gzip
	}
	_, _ = w.Write(body)
}

// imageMaxAge is how long a browser keeps an image (its key names the
// URL; the content behind a URL rarely changes, and its ETag tells);
// noImageMaxAge how long it keeps the answer that there is none (the
// broken period's order of magnitude).
const (
	imageMaxAge   = 24 * time.Hour
	noImageMaxAge = 5 * time.Minute
)

// image serves a catalog image by its key (img/<key>): no initData, as an
// <img> sends none; only an image the app listed (Images.Names) is
// fetched, through the shop, with the chat's guards. None: 404, and the
// page shows its placeholder.
func (a *App) image(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	if a.d.Images == nil {
		http.NotFound(w, r)
		return
	}
	data, typ, etag, err := a.d.Images.Image(r.Context(), r.PathValue("key"))
	if err != nil {
		h.Set("Cache-Control", "public, max-age="+strconv.Itoa(int(noImageMaxAge/time.Second)))
		http.NotFound(w, r)
		return
	}
	h.Set("Content-Type", typ)
	h.Set("ETag", etag)
	h.Set("Cache-Control", "public, max-age="+strconv.Itoa(int(imageMaxAge/time.Second)))
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(data)))
	_, _ = w.Write(data)
}

// imagePaths are the page's addresses of the catalog's images urls
// ("img/<key>", relative to the page; "" where there is none).
func (a *App) imagePaths(ctx context.Context, urls []string) []string {
	if a.d.Images == nil {
		return make([]string, len(urls))
	}
	keys := a.d.Images.Names(ctx, urls)
	for i, k := range keys {
		if k != "" {
			keys[i] = "img/" + k
		}
	}
	return keys
}

// acceptsGzip reports whether the request takes a gzipped answer.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}

// PageSize reports the page's first load in bytes as served gzipped: its
// HTML, stylesheet and script (Telegram's own script aside).
func (a *App) PageSize() (raw, gzipped int) {
	for _, f := range a.files {
		raw += len(f.body)
		gzipped += len(f.gzip)
	}
	return raw, gzipped
}
