package resellersim

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/reseller/resellersim/chat"
	"shopbot/reseller/resellersim/faults"
	"shopbot/reseller/resellersim/simcatalog"
)

// Config configures a Sim. The zero value is usable: every field has a default.
type Config struct {
	// APIKey is the bearer key the simulator accepts (default "test-key").
	APIKey string
	// Balance is the starting balance in USD (default 1000.0000), recorded as
	// one DEPOSIT transaction. Use Sim.SetBalance for a zero balance.
	Balance decimal.Decimal
	// Now is the clock that drives order progress and timestamps (default time.Now).
	Now func() time.Time
	// Seed makes the delivered codes and keys deterministic.
	Seed int64
	// RateLimit is the number of requests allowed per RateWindow; 0 turns the limit off.
	RateLimit int
	// RateWindow is the fixed rate-limit window (default one minute).
	RateWindow time.Duration
	// Catalog is the product catalog; nil means simcatalog.Default(). It is copied.
	Catalog *simcatalog.Catalog
	// Nickname is the account nickname (default "demo-reseller").
	Nickname string
	// Email is the account email (default "reseller@example.com").
	Email string
	// Slow gives orders realistic delays (processing after 1s, final after 4s)
	// instead of completing at once; behaviors set with SetBehavior still win.
	Slow bool
	// ClockOffset is how far the upstream's clock is from Now: every time the
	// service stamps (an order's created_at, status_history and deadline_at,
	// transactions, chat messages, X-RateLimit-Reset) reads Now()+ClockOffset.
	// For example -10*time.Minute is an upstream clock ten minutes behind.
	// Order progress is unchanged (it is measured on the same shifted clock).
	// See also SetClockOffset.
	ClockOffset time.Duration
}

// Mode is how an order ends.
type Mode int

const (
	// Complete ends the order as completed, with codes or keys where the line has them.
	Complete Mode = iota
	// Fail ends the order as failed and credits the charge back to the balance.
	Fail
	// Refund ends the order in the refund status and credits the charge back.
	Refund
	// Stay leaves the order in processing until CompleteOrder, FailOrder or RefundOrder.
	Stay
)

// String returns the mode's name.
func (m Mode) String() string {
	switch m {
	case Complete:
		return "complete"
	case Fail:
		return "fail"
	case Refund:
		return "refund"
	case Stay:
		return "stay"
	}
	return "unknown"
}

// Behavior describes how orders progress: created, then processing at
// created+ProcessingAfter, then the final state of Mode at
// created+CompleteAfter (never before processing).
type Behavior struct {
	Mode            Mode
	ProcessingAfter time.Duration
	CompleteAfter   time.Duration
	// Reason is the status_reason of a failed or refunded order; empty gives a default.
	Reason string
	// CompleteOnRead, when above 0, ends the order (as Mode says) at its
	// CompleteOnRead-th read by number (GET /orders/{number}) instead of
	// at CompleteAfter: an upstream whose orders are done when the client
	// looks the second time, however soon (it passes through processing).
	CompleteOnRead int
}

// Account statuses.
const (
	StatusActive  = "ACTIVE"
	StatusBlocked = "BLOCKED"
)

const (
	firstOrderNumber = 1001
	defaultAPIKey    = "test-key"
)

// Sim is an in-memory, concurrency-safe simulator of the reseller service.
// It implements http.Handler for every endpoint under the path prefix /api/v1.
type Sim struct {
	apiKey     string
	now        func() time.Time
	seed       int64
	rateLimit  int
	rateWindow time.Duration
	nickname   string
	email      string
	defaultBeh Behavior
	offset     atomic.Int64 // ClockOffset in nanoseconds

	mu            sync.Mutex
	cat           *simcatalog.Store // catalog.go
	status        string
	balance       decimal.Decimal
	totalOrders   int
	totalSpent    decimal.Decimal
	accountSince  time.Time
	txs           []*txn // every account's transactions, number order
	nextTx        int
	orders        []*order // number order
	ordersByNum   map[int]*order
	nextOrder     int
	behaviors     map[string]Behavior
	nextMessageID int
	files         map[int]chat.File
	script        func(orderNumber int, buyerMsg string) []string
	faults        faults.Plan // injected failures and the rate limit
	onRequest     func(r *http.Request, body []byte)
	onCreated     func(o OrderSnapshot)
	creates       int                   // order-creating requests seen
	lateCreates   int                   // creates executed after a gateway answered (faults.GatewayThenCreated)
	imageFaults   map[string]ImageFault // images.go
	imageHits     map[string]int
}

// New returns a simulator configured by cfg.
func New(cfg Config) *Sim {
	s := &Sim{
		apiKey:        cfg.APIKey,
		now:           cfg.Now,
		seed:          cfg.Seed,
		rateLimit:     cfg.RateLimit,
		rateWindow:    cfg.RateWindow,
		nickname:      cfg.Nickname,
		email:         cfg.Email,
		status:        StatusActive,
		nextTx:        1,
		nextOrder:     firstOrderNumber,
		behaviors:     map[string]Behavior{},
		ordersByNum:   map[int]*order{},
		files:         map[int]chat.File{},
		nextMessageID: 1,
	}
	s.offset.Store(int64(cfg.ClockOffset))
	if s.apiKey == "" {
		s.apiKey = defaultAPIKey
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.rateWindow <= 0 {
		s.rateWindow = time.Minute
	}
	if s.nickname == "" {
		s.nickname = "demo-reseller"
	}
	if s.email == "" {
		s.email = "reseller@example.com"
	}
	if cfg.Slow {
		s.defaultBeh = Behavior{Mode: Complete, ProcessingAfter: time.Second, CompleteAfter: 4 * time.Second}
	}
	cat := cfg.Catalog
	if cat == nil {
		cat = simcatalog.Default()
	}
	now := s.clock()
	s.cat = simcatalog.NewStore(cat, now)
	s.accountSince = now.Add(-120 * 24 * time.Hour)
	start := cfg.Balance
	if start.IsZero() {
		start = decimal.RequireFromString("1000")
	}
	s.seedTransactions(now, start)
	return s
}

// clock returns the upstream's current time in UTC: Now plus the clock
// offset.
func (s *Sim) clock() time.Time {
	return s.now().UTC().Add(time.Duration(s.offset.Load()))
}

// SetClockOffset sets how far the upstream's clock is from Config.Now (see
// Config.ClockOffset): a negative d is an upstream clock behind, a positive
// one ahead. It takes effect at once, like a clock jump on the upstream:
// timestamps stamped from now on are shifted by d, earlier ones stay as
// they are, and orders in flight reach their next state when the shifted
// clock says so (a jump forward completes them sooner).
func (s *Sim) SetClockOffset(d time.Duration) {
	s.offset.Store(int64(d))
}

// ClockOffset returns the upstream clock offset set by Config.ClockOffset or
// SetClockOffset.
func (s *Sim) ClockOffset() time.Duration {
	return time.Duration(s.offset.Load())
}

// seedTransactions records the starting deposit and a few transactions of
// another account, which must never be visible through the API.
func (s *Sim) seedTransactions(now time.Time, start decimal.Decimal) {
	other := decimal.RequireFromString("500")
	spent := decimal.RequireFromString("25.5")
	s.record(otherAccount, "CREDIT", "DEPOSIT", "COMPLETED", other, other, "Crypto deposit", now.Add(-72*time.Hour))
	s.balance = start
	s.record(selfAccount, "CREDIT", "DEPOSIT", "COMPLETED", start, start, "Crypto deposit", now.Add(-48*time.Hour))
	s.record(otherAccount, "DEBIT", "ORDER", "COMPLETED", spent, other.Sub(spent), "Order #900 (gift_card)", now.Add(-24*time.Hour))
	s.record(otherAccount, "CREDIT", "ADJUSTMENT", "PENDING", spent, other, "Manual correction", now.Add(-12*time.Hour))
}

// SetBehavior sets how new orders progress. key is a product line in its
// lowercase type form ("gift_card", "game_key", "game_topup", "manual_service",
// "store_gift", "store_topup", "messenger_stars", "messenger_premium"; "stars"
// and "premium" also name the messenger lines) or an item id (card_id,
// category_id, key_id, game_id, top-up offer_id or category_id, manual
// product_id or service_id, store sub_id or app_id as a string). An item
// behavior wins over its line's, which wins over the default. The behavior is
// fixed on an order when it is created.
func (s *Sim) SetBehavior(key string, b Behavior) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.behaviors[key] = b
}

// ClearBehavior removes a behavior set with SetBehavior.
func (s *Sim) ClearBehavior(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.behaviors, key)
}

// Advance applies every order transition that is due at the current clock
// time. Requests do this on their own; Advance lets a test with a fake clock
// observe the effects (balance, transactions) without a request.
func (s *Sim) Advance() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked(s.clock())
}

// SetBalance sets the account balance, recording the difference as an
// ADJUSTMENT transaction (nothing is recorded when the balance is unchanged).
func (s *Sim) SetBalance(d decimal.Decimal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delta := d.Sub(s.balance)
	if delta.IsZero() {
		return
	}
	dir := "CREDIT"
	if delta.IsNegative() {
		dir = "DEBIT"
	}
	s.balance = d
	s.record(selfAccount, dir, "ADJUSTMENT", "COMPLETED", delta.Abs(), d, "Balance adjustment", s.clock())
}

// Balance returns the account balance, after applying due order transitions.
func (s *Sim) Balance() decimal.Decimal {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked(s.clock())
	return s.balance
}

// SetAccountStatus sets the account status, StatusActive or StatusBlocked.
// A blocked account receives 403 on the endpoints that list 403.
func (s *Sim) SetAccountStatus(status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status = status
}

// SetOperatorScript replaces the operator's answers to buyer chat messages.
// buyerMsg is the message text ("" for an image without text); each returned
// string becomes one operator message. nil restores the default script.
func (s *Sim) SetOperatorScript(f func(orderNumber int, buyerMsg string) []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = f
}
