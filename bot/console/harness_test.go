package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/bottest"
	"shopbot/bot/bottest/shoptest"
	"shopbot/bot/catalog"
	"shopbot/bot/checkout"
	"shopbot/bot/console"
	"shopbot/bot/fulfil"
	"shopbot/bot/storefront"
	"shopbot/bot/webapp"
	"shopbot/bot/webapp/initdata"
	"shopbot/flows/lines"
	"shopbot/flows/shop"
	"shopbot/reseller"
	"shopbot/reseller/resellersim/simcatalog"
	"shopbot/state"
	"shopbot/state/redisstore"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/work"
)

// The staff of the console's tests: the harness's admin is the owner.
const (
	owner      = bottest.Admin
	agent      = int64(9100) // SUPPORT_IDS
	accountant = int64(9200) // ACCOUNTANT_IDS
	buyer      = bottest.Chat
)

// consoleShop is the whole shop (with the upstream simulator, the
// fulfilment worker, Stars and wallet payments) serving the Mini App and
// its console on a local listener.
type consoleShop struct {
	*shoptest.Shop
	b    *storefront.Shop
	con  *console.Console
	base string // the console's address: http://127.0.0.1:port/app/admin/
}

func newConsoleShop(t *testing.T, cfg func(*fulfil.Config)) *consoleShop {
	t.Helper()
	s := &consoleShop{Shop: shoptest.New(t)}
	if cfg != nil {
		cfg(&s.Cfg)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.b = s.NewBot(func(o *storefront.Options) {
		o.Reseller, o.Fulfil = s.Client, s.Cfg
		o.Admins, o.SupportAgents, o.Accountants = []int64{owner}, []int64{agent}, []int64{accountant}
		o.Checkout = &checkout.Options{Stars: true, Wallet: true, Upstream: s.Client}
		o.HTTPListener = ln
	})
	rdb, prefix := s.Rdb.Client, s.Rdb.Prefix
	sh := &shop.Shop{
		Catalog: catalog.New(s.Client, work.NewCache(rdb, prefix), time.Minute),
		Pricing: shop.Pricing{Markup: shop.Markup{Percent: decimal.NewFromInt(10)}, StarsUSDRate: decimal.RequireFromString("0.013"), ShowStars: true},
		Quotes:  catalog.Quotes{Store: records.NewQuotes(rdb, prefix)},
		Promos:  catalog.Promos{Store: s.b.Promos},
		Limiter: redisstore.NewLimiter(rdb, prefix, 10, time.Minute),
	}
	lines.Register(s.b.Engine, sh)
	app, err := s.b.ServeWebApp(webapp.Options{}, sh)
	if err != nil {
		t.Fatal(err)
	}
	s.con = s.b.Console()
	s.Run(s.b)
	s.Listening()
	s.base = "http://" + ln.Addr().String() + app.Path() + "admin/"
	return s
}

// initData is what Telegram gives the page of user now.
func (s *consoleShop) initData(user int64) string { return s.initDataIn(user, "en") }

// initDataIn is initData of a user whose Telegram is in language lang.
func (s *consoleShop) initDataIn(user int64, lang string) string {
	return initdata.SignUser(s.Fake.Token(), initdata.User{ID: user, FirstName: "Staff", Username: "staff", LanguageCode: lang}, time.Now())
}

// answer is one API answer.
type answer struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func (a answer) str(key string) string {
	v, _ := a.body[key].(string)
	return v
}

// call makes an API request as user (0: no initData).
func (s *consoleShop) call(user int64, method, path string, body any) answer {
	s.T.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			s.T.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.base+"api/"+strings.TrimPrefix(path, "/"), rd)
	if err != nil {
		s.T.Fatal(err)
	}
	if user != 0 {
		req.Header.Set(console.InitDataHeader, s.initData(user))
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return s.do(req)
}

func (s *consoleShop) do(req *http.Request) answer {
	s.T.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.T.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	a := answer{status: res.StatusCode, header: res.Header, raw: string(raw)}
	_ = json.Unmarshal(raw, &a.body)
	return a
}

func (a answer) ok(t *testing.T) answer {
	t.Helper()
	if a.status != http.StatusOK {
		t.Fatalf("status %d: %s", a.status, a.raw)
	}
	return a
}

// inReview makes an order that goes to needs_review, as an admin meets it
// after a Redis that lost the order's records: two look-alike upstream
// orders someone else placed moments ago, then the order's own create
// whose answer was cut (the upstream made it). It returns the order and
// the upstream order its create made.
func (s *consoleShop) inReview() (*state.Order, int64) {
	s.T.Helper()
	ctx := context.Background()
	req := &reseller.GiftCardOrderRequest{CategoryID: simcatalog.DemoGiftCategory, CardID: simcatalog.DemoGiftCard, Quantity: 1}
	var nums []string
	for range 2 {
		up, err := s.Client.CreateGiftCardOrder(ctx, req)
		if err != nil {
			s.T.Fatal(err)
		}
		s.Foreign[int(up.Number)] = true
		s.External = s.External.Add(up.ChargedUSD.Decimal)
		nums = append(nums, strconv.FormatInt(up.Number, 10))
	}
	all := s.Sim.Orders()
	if err := s.Orders.NoteUpstream(ctx, int64(all[len(all)-1].Number)); err != nil {
		s.T.Fatal(err)
	}
	o := s.PaidUnscheduled(shoptest.GiftCards(1), state.PayStars)
	s.Sim.CutAfterCreate(1)
	if _, err := s.Client.CreateGiftCardOrder(ctx, req); err == nil {
		s.T.Fatal("the cut let the create's answer through")
	}
	all = s.Sim.Orders()
	ours := int64(all[len(all)-1].Number)
	nums = append(nums, strconv.FormatInt(ours, 10))
	raw, _ := json.Marshal(map[string]any{"type": reseller.OrderTypeGiftCard,
		"params": map[string]string{"category_id": req.CategoryID, "card_id": req.CardID, "quantity": "1"}})
	o, err := s.Orders.Transition(ctx, o.ID, []string{state.OrderPaid}, state.OrderPlacing, func(n *state.Order) error {
		n.AttemptID, n.Request, n.Attempts, n.PlacingAt = "0123456789abcdef", raw, 1, n.CreatedAt
		return nil
	}, "attempt 0123456789abcdef")
	if err != nil {
		s.T.Fatal(err)
	}
	why := "upstream orders that may be this order's, unprovable: " + strings.Join(nums, ", ")
	o, err = s.Orders.Transition(ctx, o.ID, []string{state.OrderPlacing}, state.OrderNeedsReview, func(n *state.Order) error {
		n.Reason = why
		return nil
	}, why)
	if err != nil {
		s.T.Fatal(err)
	}
	return o, ours
}

// upload posts a multipart/form-data body (fields, and a file named name
// under field "photo" when data is not nil) to the API as user.
func (s *consoleShop) upload(user int64, path string, fields map[string]string, name string, data []byte) answer {
	s.T.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	if data != nil {
		fw, err := mw.CreateFormFile("photo", name)
		if err != nil {
			s.T.Fatal(err)
		}
		_, _ = fw.Write(data)
	}
	_ = mw.Close()
	req, err := http.NewRequest("POST", s.base+"api/"+path, &body)
	if err != nil {
		s.T.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if user != 0 {
		req.Header.Set(console.InitDataHeader, s.initData(user))
	}
	return s.do(req)
}

// openTicket has the buyer write to support and waits until the agent has it.
func (s *consoleShop) openTicket(text string) {
	s.T.Helper()
	s.Command(s.b, buyer, "support", "")
	s.SayIn(s.b, buyer, text)
	s.WaitText(agent, text)
}

// sweepDone waits for the shop's start-up Stars sweep and runs one more
// (after the one under way, if any), so the test's charges for review are
// listed only as the test lists them (listCharge).
func (s *consoleShop) sweepDone() {
	s.T.Helper()
	s.Wait("getStarTransactions", 1)
	var err error
	if !s.Until(func() bool {
		_, err = s.b.Checkout.Sweep(context.Background())
		return !errors.Is(err, checkout.ErrSweepBusy)
	}) {
		s.T.Fatal("the sweep stayed busy")
	}
	if err != nil {
		s.T.Fatal(err)
	}
}

// chargeReviews is the shop's review list of Star charges.
func (s *consoleShop) chargeReviews() *records.ChargeReviews {
	return records.NewChargeReviews(s.Rdb.Client, s.Rdb.Prefix)
}

// listCharge makes a Star charge of buyer in Telegram's list, paid at,
// and lists it for review as the payment sweep does for a charge older
// than the store; item names what its quote bought, still stored ("":
// the quote is gone).
func (s *consoleShop) listCharge(id string, buyer, stars int64, at time.Time, reason, item string) {
	s.T.Helper()
	ctx := context.Background()
	payload := "q:lost-" + id
	s.Fake.AddStarPayment(buyer, payload, stars, at, id)
	if item != "" {
		q := &state.Quote{ID: "lost-" + id, Line: "giftcards", Item: "gc-1", ItemName: item, Quantity: 1,
			UpstreamUSD: decimal.RequireFromString("10.35"), ShopUSD: decimal.RequireFromString("12.50"), Stars: stars,
			ChatID: buyer, UserID: buyer, Created: time.Now(), Expires: time.Now().Add(time.Hour)}
		if err := records.NewQuotes(s.Rdb.Client, s.Rdb.Prefix).Save(ctx, q); err != nil {
			s.T.Fatal(err)
		}
	}
	if _, err := s.chargeReviews().Add(ctx, state.ChargeReview{
		ChargeID: id, UserID: buyer, Stars: stars, Payload: payload, PaidAt: at, Reason: reason,
	}); err != nil {
		s.T.Fatal(err)
	}
}

// refundTexts are the bot's messages to a buyer saying a payment was
// given back.
func (s *consoleShop) refundTexts(to int64) []string {
	var out []string
	for _, m := range s.BotMessages(to) {
		if strings.Contains(m.RawText, "has been refunded") {
			out = append(out, m.RawText)
		}
	}
	return out
}

// audited are the audit log's entries of action.
func (s *consoleShop) audited(action string) []state.AuditEntry {
	s.T.Helper()
	all, err := records.NewAuditLog(s.Rdb.Client, s.Rdb.Prefix).Recent(context.Background(), 100)
	if err != nil {
		s.T.Fatal(err)
	}
	var out []state.AuditEntry
	for _, e := range all {
		if e.Action == action {
			out = append(out, e)
		}
	}
	return out
}
