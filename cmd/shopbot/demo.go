package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"shopbot/state/redisstore"
	"shopbot/state/redisstore/intake"
	"shopbot/state/redisstore/records"

	"github.com/shopspring/decimal"
	"golang.org/x/term"

	"shopbot/bot/botapitest"
	"shopbot/bot/botapitest/types"
	"shopbot/bot/fulfil"
	"shopbot/bot/webapp"
	"shopbot/bot/webapp/initdata"
	"shopbot/locales"
	"shopbot/reseller/resellersim"
	"shopbot/state"
)

// The demo runs the whole shop in one process, with nothing outside the
// machine: the embedded Redis, the upstream simulator on loopback, the fake
// Bot API server, and the real bot wired as `serve` wires it. The user
// chats with the bot in the terminal (terminal.go).

const (
	// demoUserID is the demo user's Telegram id and chat id; the user is
	// also the shop's only admin.
	demoUserID int64 = 100200300
	// demoToken is the token the fake Bot API server accepts. It is not a
	// real token, and the demo never talks to Telegram.
	demoToken = "100200:DEMO-fake-bot-api-token-not-real"
	// demoKey is the key the upstream simulator accepts.
	demoKey = "demo-upstream-key"
	// demoWalletUSD is what the demo puts in the demo user's shop wallet,
	// so paying from the wallet can be tried too.
	demoWalletUSD = "25"
	// demoPromo is a promo code the demo creates (10% off, once per
	// buyer), so the order summary's "🏷 Promo code" can be tried.
	demoPromo = "DEMO10"
	// demoSettleMax bounds the wait for the bot to handle a piped line.
	demoSettleMax = 15 * time.Second
	// demoDrainMax bounds the wait, at the end of piped input, for orders
	// still on their way to the chat (a delivery takes a few seconds, and
	// with --slow about 4).
	demoDrainMax = 30 * time.Second
	// demoOrdersScanned is how many of the newest orders the end of piped
	// input looks at: far more than a demo makes.
	demoOrdersScanned = 100
)

// demoParts are the running pieces of a demo; tests receive them through
// a hook in the context (demoHookKey) to check what the simulator did.
type demoParts struct {
	sim  *resellersim.Sim
	fake *botapitest.Server
}

// demoHookKey keys a func(demoParts) in the demo's context, called once
// everything runs.
type demoHookKey struct{}

// demoFulfilKey keys a fulfil.Config in the demo's context that replaces
// the fulfilment worker's defaults: the tests' shorter ticks, polls and
// code settle, so a purchase does not wait seconds for its codes.
type demoFulfilKey struct{}

// demoOptions are the demo's command-line flags.
type demoOptions struct {
	lang    locales.Lang
	slow    bool
	logPath string
	appAddr string // where the Mini App is served ("off": not at all)
}

func parseDemoFlags(args []string, stderr io.Writer) (demoOptions, error) {
	fs := flag.NewFlagSet("shopbot demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	lang := fs.String("lang", "en", "the demo user's Telegram language: en, ru or uk")
	slow := fs.Bool("slow", false, "the upstream delivers after realistic delays (processing after 1 s, done after 4 s)")
	logPath := fs.String("log", "", "file the shop's logs go to (default: a new file in "+os.TempDir()+")")
	appAddr := fs.String("app", "127.0.0.1:0", "address the Mini App is served on for a browser on this machine (default: a free port; off: none)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: shopbot demo [--lang en|ru|uk] [--slow] [--log FILE] [--app ADDR|off]\n\nRuns the whole shop on this machine and lets you chat with it here, and in the Mini App in a browser.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return demoOptions{}, err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "shopbot demo: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return demoOptions{}, errors.New("unexpected argument")
	}
	l, ok := locales.Parse(*lang)
	if !ok {
		fmt.Fprintf(stderr, "shopbot demo: --lang %q: use en, ru or uk\n", *lang)
		return demoOptions{}, errors.New("bad --lang")
	}
	return demoOptions{lang: l, slow: *slow, logPath: *logPath, appAddr: *appAddr}, nil
}

// demo runs the shop locally and chats with it on stdin and stdout until
// /quit, end of input or ctx ends; all three exit 0.
func demo(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, err := parseDemoFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2
	}
	logFile, err := openDemoLog(opts.logPath)
	if err != nil {
		fmt.Fprintf(stderr, "shopbot demo: log file: %v\n", err)
		return 1
	}
	defer logFile.Close()
	opts.logPath = logFile.Name()

	inTTY, outTTY := isTerminal(stdin), isTerminal(stdout)
	tc := newTermChat(stdout, demoUserID, outTTY && getenv("NO_COLOR") == "", !inTTY)

	// The upstream simulator, served on loopback.
	sim := resellersim.New(resellersim.Config{APIKey: demoKey, Seed: 1, Slow: opts.slow})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintf(stderr, "shopbot demo: upstream simulator: %v\n", err)
		return 1
	}
	upstream := &http.Server{Handler: sim, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = upstream.Serve(ln) }()
	defer upstream.Close()
	upstreamURL := "http://" + ln.Addr().String() + "/api/v1"

	// The fake Bot API server; a request that breaks the Bot API schema is
	// a bug in the bot, so it is shown in the chat as well as logged.
	level := new(slog.LevelVar) // set from LOG_LEVEL once the configuration is read
	log := slog.New(slog.NewJSONHandler(logFile, &slog.HandlerOptions{Level: level}))
	fake, err := botapitest.New(
		botapitest.WithToken(demoToken),
		botapitest.WithBotUser(types.User{FirstName: "Demo Shop", Username: "demo_shop_bot"}),
		botapitest.OnViolation(func(err error) {
			log.Error("Bot API schema violation", "err", err)
			tc.note("Bot API schema violation (a bug in the bot): %v", err)
		}),
	)
	if err != nil {
		fmt.Fprintf(stderr, "shopbot demo: fake Bot API server: %v\n", err)
		return 1
	}
	defer fake.Close()
	fake.SetUser(demoUserID, types.User{FirstName: "Demo", Username: "demo_buyer", LanguageCode: string(opts.lang)})

	// The shop's configuration: the environment may tune pricing, payment
	// methods and the like, but the connections are the demo's own, and
	// Redis is always the embedded one (the demo must not write into a
	// real shop's store).
	fixed := map[string]string{
		"TELEGRAM_TOKEN": demoToken, "TELEGRAM_API_URL": fake.URL(),
		"RESELLER_BASE_URL": upstreamURL, "RESELLER_API_KEY": demoKey,
		"REDIS_URL": "", "ADMIN_IDS": strconv.FormatInt(demoUserID, 10),
		"WEBHOOK_URL": "", "WEBHOOK_SECRET": "", "HTTP_ADDR": "",
		"LANGUAGES": "en,ru,uk", "DEFAULT_LANGUAGE": "en",
	}
	cfg, err := LoadConfig(func(k string) string {
		if v, ok := fixed[k]; ok {
			return v
		}
		if k == "PAYMENT_METHODS" && getenv(k) == "" {
			return "stars,wallet" // both, unless the environment says otherwise
		}
		if k == "REFERRAL_PERCENT" && getenv(k) == "" {
			return "5" // /referrals shows an invite link, unless the environment says otherwise
		}
		return getenv(k)
	}, true)
	if err != nil {
		fmt.Fprintf(stderr, "shopbot demo: %v\n", err)
		return 2
	}
	cfg.HTTPAddr = "" // no /healthz or /metrics listener: nothing to collide with
	cfg.MetricsAddr = ""
	// The demo's Telegram and upstream are made anew each run and reuse
	// their charge ids and order numbers: a journal on disk would hold
	// another run's.
	cfg.JournalDir = ""
	_ = level.UnmarshalText([]byte(cfg.LogLevel))

	conn, err := redisstore.Open(ctx, "")
	if err != nil {
		fmt.Fprintf(stderr, "shopbot demo: embedded redis: %v\n", err)
		return 1
	}
	defer conn.Close()
	// The Mini App, on loopback: an ordinary browser opens it as the demo
	// buyer, with an initData the demo signs with the fake's token.
	var extra shopExtras
	appURL := ""
	if opts.appAddr != "off" {
		appLn, err := net.Listen("tcp", opts.appAddr)
		if err != nil {
			fmt.Fprintf(stderr, "shopbot demo: Mini App listener: %v\n", err)
			return 1
		}
		extra = shopExtras{httpListener: appLn, webAppPath: webapp.DefaultPath}
		appURL = demoAppURL("http://"+appLn.Addr().String()+webapp.DefaultPath, opts.lang, time.Now())
	}
	if fc, ok := ctx.Value(demoFulfilKey{}).(fulfil.Config); ok {
		extra.fulfil = fc
	}
	shop, err := newShop(cfg, conn, log, extra)
	if err != nil {
		fmt.Fprintf(stderr, "shopbot demo: %v\n", err)
		return 1
	}
	wallet := decimal.Zero
	if cfg.PayWallet {
		wallet = decimal.RequireFromString(demoWalletUSD)
		if _, _, err := records.NewWallets(conn.Client, redisstore.DefaultPrefix).Credit(ctx, demoUserID, wallet, "demo:welcome", "demo credit", "demo"); err != nil {
			fmt.Fprintf(stderr, "shopbot demo: credit the demo wallet: %v\n", err)
			return 1
		}
	}

	if err := records.NewPromos(conn.Client, redisstore.DefaultPrefix).Add(ctx, &state.Promo{
		Code: demoPromo, Percent: decimal.NewFromInt(10), PerBuyer: true, Created: time.Now().UTC(),
	}); err != nil {
		fmt.Fprintf(stderr, "shopbot demo: create the demo promo code: %v\n", err)
		return 1
	}

	calls, unsubscribe := fake.Subscribe()
	printed := make(chan struct{})
	go func() {
		defer close(printed)
		for c := range calls {
			tc.show(c)
		}
	}()
	runCtx, stopBot := context.WithCancel(ctx)
	defer stopBot()
	botDone := make(chan error, 1)
	go func() { botDone <- shop.Run(runCtx) }()

	// Input: an interactive terminal gets a line editor (x/term), which
	// prints arriving messages above the prompt and the unfinished line;
	// anything else is read line by line.
	br := bufio.NewReader(stdin)
	readLine := func() (string, error) {
		s, err := br.ReadString('\n')
		if s != "" {
			return strings.TrimRight(s, "\r\n"), nil
		}
		return "", err
	}
	if inTTY && outTTY {
		if next, restore, err := lineEditor(stdin.(*os.File), stdout.(*os.File), tc); err == nil {
			defer restore()
			readLine = next
		}
	}

	tc.setQueryChat(fake.CallbackChat)
	d := &demoSession{fake: fake, queue: shop.Queue, tc: tc, paced: !inTTY,
		orders: records.NewOrders(conn.Client, redisstore.DefaultPrefix)}
	if cfg.ReferralPercent.IsPositive() && cfg.PayWallet {
		d.referrals = records.NewReferrals(conn.Client, redisstore.DefaultPrefix)
	}
	tc.print(demoBanner(fake.URL(), upstreamURL, sim.Balance(), wallet, opts, cfg.PayStars, cfg.PayWallet, appURL))
	if hook, ok := ctx.Value(demoHookKey{}).(func(demoParts)); ok {
		hook(demoParts{sim: sim, fake: fake})
	}

	lines := make(chan string)
	inputDone := make(chan struct{})
	defer close(inputDone)
	go readLines(readLine, lines, inputDone)

	code := 0
	tc.print(youMark + "/start\n")
	fake.SendText(demoUserID, "/start")
	d.settle(ctx)
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case err := <-botDone:
			botDone <- err
			if err != nil {
				tc.note("The shop stopped: %v", err)
				code = 1
			}
			break loop
		case line, ok := <-lines:
			if !ok { // end of input
				d.drain(ctx)
				break loop
			}
			tc.typed(line)
			if d.handle(ctx, line) {
				d.drain(ctx)
				break loop
			}
			d.settle(ctx)
		}
	}

	tc.end()
	stopBot()
	select {
	case err := <-botDone:
		if err != nil && code == 0 {
			log.Error("shop stopped", "err", err)
		}
	case <-time.After(15 * time.Second):
		log.Warn("the shop did not stop within 15 s")
	}
	unsubscribe()
	<-printed
	tc.print(fmt.Sprintf("Demo ended. The shop's logs are in %s.\n", opts.logPath))
	return code
}

// demoAppURL is the address that opens the Mini App at base as the demo
// buyer: Telegram's launch parameters in the fragment, as Telegram passes
// them (the initData signed with the fake's token, issued at, and a light
// theme).
func demoAppURL(base string, lang locales.Lang, at time.Time) string {
	data := initdata.SignUser(demoToken, initdata.User{ID: demoUserID, FirstName: "Demo", Username: "demo_buyer", LanguageCode: string(lang)}, at)
	theme := `{"bg_color":"#ffffff","text_color":"#222222","hint_color":"#8e8e93","link_color":"#2481cc","button_color":"#2481cc","button_text_color":"#ffffff","secondary_bg_color":"#f1f1f4"}`
	return base + "#tgWebAppData=" + url.QueryEscape(data) + "&tgWebAppVersion=8.0&tgWebAppThemeParams=" + url.QueryEscape(theme)
}

// demoBanner says what runs where and how to chat.
func demoBanner(botURL, upstreamURL string, balance, walletUSD decimal.Decimal, opts demoOptions, stars, wallet bool, appURL string) string {
	var b strings.Builder
	b.WriteString("shopbot demo: the whole shop runs on this machine; nothing leaves it.\n")
	fmt.Fprintf(&b, "  Telegram  fake Bot API server at %s\n", botURL)
	fmt.Fprintf(&b, "  You       \"Demo\", user %d, language %s, also the shop's admin\n", demoUserID, opts.lang)
	fmt.Fprintf(&b, "  Supplier  upstream simulator at %s\n", upstreamURL)
	speed := "codes arrive a few seconds after payment (--slow: with delays)"
	if opts.slow {
		speed = "orders processing after 1 s, codes 4 to 5 s after payment"
	}
	fmt.Fprintf(&b, "            balance %s USD; %s\n", locales.Decimal(locales.En, balance, 2), speed)
	b.WriteString("  Redis     embedded, in memory (gone when the demo ends)\n")
	fmt.Fprintf(&b, "  Logs      %s\n", opts.logPath)
	var pay []string
	if stars {
		pay = append(pay, "Telegram Stars")
	}
	if wallet {
		pay = append(pay, fmt.Sprintf("the shop wallet (yours holds %s)", locales.Money(locales.En, walletUSD)))
	}
	fmt.Fprintf(&b, "  Payments  %s\n", strings.Join(pay, ", or "))
	if appURL != "" {
		fmt.Fprintf(&b, "  Mini App  open in a browser on this machine, as the demo buyer (valid %d hours;\n", int(initdata.DefaultMaxAge.Hours()))
		b.WriteString("            its Pay asks here, like an invoice in the chat):\n")
		fmt.Fprintf(&b, "            %s\n", appURL)
	}
	b.WriteString("\n")
	b.WriteString("Chat as in Telegram: /start, /giftcards, /orders, /help.\n")
	b.WriteString("You are the admin too: /balance, /stats, /broadcast.\n")
	b.WriteString("Type a button's number to press it; '5 sends \"5\" as a message.\n")
	b.WriteString("An invoice asks yes/no (/pay pays it later). /quit, Ctrl-C or Ctrl-D ends it;\n")
	b.WriteString("piped input waits for each answer, and at its end for the orders still on their way.\n")
	b.WriteString("/friend: a friend opens the shop through your invite link and buys (referrals).\n\n")
	return b.String()
}

// demoSession turns the user's lines into what a Telegram user does.
type demoSession struct {
	fake  *botapitest.Server
	queue *intake.Queue // the bot's update intake, to see it has handled everything
	tc    *termChat
	paced bool // piped input: wait for the bot to settle after each line
	// referrals is the referral store when referrals are on (/friend).
	referrals  *records.Referrals
	friendDone bool
	// orders is the shop's order store: the end of piped input waits for
	// the orders still owed to the chat.
	orders *records.Orders
}

// handle acts on one line; it returns true when the demo should end.
func (d *demoSession) handle(ctx context.Context, line string) bool {
	line = strings.TrimSpace(line)
	inv, asking := d.tc.pendingInvoice()
	switch {
	case line == "":
		return false
	case line == "/quit" || line == "/exit":
		return true
	case asking && isAnswer(line, "y", "yes", "д", "да", "т", "так"):
		d.pay(ctx, inv)
	case asking && isAnswer(line, "n", "no", "н", "нет", "ні"):
		d.tc.stopAsking()
		d.tc.note("Not paid. The invoice stays in the chat: /pay pays it later.")
	case line == "/friend":
		d.friend(ctx)
	case line == "/pay":
		if inv == nil {
			d.tc.note("There is no invoice to pay yet: choose a product and press Pay first.")
			return false
		}
		d.pay(ctx, inv)
	case isButtonNumber(line):
		d.press(line)
	case strings.HasPrefix(line, "'") && len(line) > 1:
		d.tc.stopAsking()
		d.fake.SendText(demoUserID, line[1:])
	default:
		d.tc.stopAsking()
		d.fake.SendText(demoUserID, line)
	}
	return false
}

// press presses the numbered button of the latest keyboard; with no
// buttons on screen the number is sent as a message.
func (d *demoSession) press(line string) {
	n, _ := strconv.Atoi(line)
	btn, msgID, count, ok := d.tc.button(n)
	switch {
	case count == 0:
		d.tc.stopAsking()
		d.fake.SendText(demoUserID, line)
		return
	case !ok:
		d.tc.note("There is no button %d: the latest buttons are 1-%d. To send %d as a message, type '%d.", n, count, n, n)
		return
	}
	d.tc.stopAsking()
	switch {
	case btn.url != "":
		d.tc.note("[%s] opens %s in the browser.", btn.text, btn.url)
	case btn.copy != "":
		d.tc.note("[%s] copies to the clipboard: %s", btn.text, btn.copy)
	case btn.data != "":
		if isButtonNumber(btn.text) && btn.text != line {
			d.tc.note("pressed [%s] (button %d; to send %s as a message, type '%s)", btn.text, n, line, line)
		} else {
			d.tc.note("pressed [%s]", btn.text)
		}
		d.fake.Press(demoUserID, msgID, btn.data)
	default:
		d.tc.note("[%s] does nothing in the demo.", btn.text)
	}
}

// pay pays an invoice as Telegram does: the pre-checkout query first, then,
// if the bot agrees, the charge and the successful_payment message.
func (d *demoSession) pay(ctx context.Context, inv *types.Message) {
	d.tc.stopAsking()
	var res botapitest.PayResult
	var err error
	if link := d.tc.invoiceLink(); inv.MessageID == 0 && link != "" {
		res, err = d.fake.PayLink(ctx, demoUserID, link, botapitest.PayOptions{})
	} else {
		res, err = d.fake.Pay(ctx, demoUserID, inv.MessageID, botapitest.PayOptions{})
	}
	switch {
	case err != nil:
		d.tc.note("The payment did not go through: %v", err)
	case res.Declined:
		d.tc.note("The shop declined the payment: %s", res.ErrorMessage)
	default:
		d.tc.note("You paid %s; Telegram confirmed it to the shop (charge %s).", starsText(res.TotalAmount), res.ChargeID)
	}
}

// settle waits, for piped input only, until the bot has dealt with what
// the user did: no update left for it to fetch or to handle (at most
// demoSettleMax), so a script's next line answers what the bot showed.
// Work the bot does later on its own (a delivery) is not waited for.
func (d *demoSession) settle(ctx context.Context) {
	if !d.paced {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, demoSettleMax)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	idle := 0
	for idle < 2 { // twice in a row: the bot may be between fetching and storing
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		n, err := d.queue.Pending(ctx)
		if err == nil && n == 0 && d.fake.PendingUpdates() == 0 {
			idle++
		} else {
			idle = 0
		}
	}
}

// drain waits, for piped input only, until the bot has answered the last
// line and no order owes the chat anything (its codes, a refund notice),
// at most demoDrainMax: a script's /quit or end of input must not cut off
// the codes it paid for. An order waiting for an admin (needs review) is
// not waited for.
func (d *demoSession) drain(ctx context.Context) {
	if !d.paced {
		return
	}
	d.settle(ctx)
	ctx, cancel := context.WithTimeout(ctx, demoDrainMax)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		n, err := d.owed(ctx)
		if err == nil && n == 0 {
			d.settle(ctx)
			return
		}
		select {
		case <-ctx.Done():
			if n > 0 {
				d.tc.note("Stopped waiting after %s: %d order(s) still on the way (see /orders next time).", demoDrainMax, n)
			}
			return
		case <-tick.C:
		}
	}
}

// owed counts the orders that still owe their buyer a message.
func (d *demoSession) owed(ctx context.Context) (int, error) {
	orders, err := d.orders.List(ctx, 0, demoOrdersScanned, state.OrderFilter{})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, o := range orders {
		if orderOwed(o) {
			n++
		}
	}
	return n, nil
}

// orderOwed reports whether an order's buyer is still to hear how it ended:
// it is on its way, delivered but not yet sent, or refunded but not yet
// told. An order waiting for an admin is not owed anything the demo can
// wait for.
func orderOwed(o *state.Order) bool {
	switch o.Status {
	case state.OrderNeedsReview:
		return false
	case state.OrderDelivered:
		return o.DeliveredAt.IsZero()
	case state.OrderRefunded:
		return o.NotifiedStatus != state.OrderRefunded
	}
	return true
}

// openDemoLog opens the demo's log file: the one named, or a new file in
// the temp directory, so two demos on one machine never share a log.
func openDemoLog(path string) (*os.File, error) {
	if path == "" {
		return os.CreateTemp("", "shopbot-demo-*.log")
	}
	return os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
}

// readLines sends the lines next reads to out, and closes out at the end
// of input (or on any other read error).
func readLines(next func() (string, error), out chan<- string, done <-chan struct{}) {
	defer close(out)
	for {
		s, err := next()
		if err != nil {
			return
		}
		select {
		case out <- s:
		case <-done:
			return
		}
	}
}

// lineEditor puts the terminal in raw mode and returns a line reader with
// editing and history, the chat printing through it. Ctrl-C and Ctrl-D end
// the input there (raw mode sends no SIGINT). restore puts the terminal
// back.
func lineEditor(in, out *os.File, tc *termChat) (next func() (string, error), restore func(), err error) {
	old, err := term.MakeRaw(int(in.Fd()))
	if err != nil {
		return nil, nil, err
	}
	tt := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{in, out}, youMark)
	tc.mu.Lock()
	tc.out = tt
	tc.setPrompt = tt.SetPrompt
	tc.width = func() int {
		w, h, err := term.GetSize(int(out.Fd()))
		if err != nil {
			return 0
		}
		_ = tt.SetSize(w, h) // follow a resized window
		return w - 1         // writing the last column makes some terminals wrap early
	}
	tc.mu.Unlock()
	next = func() (string, error) {
		line, err := tt.ReadLine()
		if errors.Is(err, term.ErrPasteIndicator) {
			err = nil // a pasted line is a line like any other
		}
		return line, err
	}
	return next, func() { _ = term.Restore(int(in.Fd()), old) }, nil
}

// isButtonNumber reports whether line is a button number (1 to 3 digits).
func isButtonNumber(line string) bool {
	if len(line) == 0 || len(line) > 3 {
		return false
	}
	for _, r := range line {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func isAnswer(line string, words ...string) bool {
	l := strings.ToLower(line)
	for _, w := range words {
		if l == w {
			return true
		}
	}
	return false
}

func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
