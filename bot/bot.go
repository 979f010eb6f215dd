package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"shopbot/state/redisstore"
	"shopbot/state/redisstore/intake"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/work"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"shopbot/bot/images"
	"shopbot/bot/metrics"
	"shopbot/flows"
	"shopbot/locales"
)

// Options configure a Bot: the Telegram adapter's own settings. The
// features' options are the whole shop's (package storefront).
type Options struct {
	Token         string
	APIURL        string // Bot API server base URL
	WebhookURL    string // webhook mode when set
	WebhookSecret string
	HTTPAddr      string // serves /healthz and the webhook; "" for none
	// HTTPListener, when set, is used instead of listening on HTTPAddr.
	HTTPListener net.Listener
	// HTTPLimits bound the webhook listener's connections and bodies.
	HTTPLimits HTTPLimits
	// MetricsAddr serves /metrics on its own listener; "" for none.
	MetricsAddr string
	// MetricsListener, when set, is used instead of listening on MetricsAddr.
	MetricsListener net.Listener
	Admins          []int64       // the owners (ADMIN_IDS); what each role may do: flows.Staff
	SupportAgents   []int64       // the support agents (SUPPORT_IDS)
	Accountants     []int64       // the accountants (ACCOUNTANT_IDS)
	Workers         int           // concurrent chats; default 16
	PollTimeout     time.Duration // getUpdates long-poll timeout; default 25s
	Prefix          string        // Redis key prefix; default redisstore.DefaultPrefix
	Logger          *slog.Logger
	Metrics         *metrics.Metrics
	Now             func() time.Time
	HTTPClient      *http.Client
	ShutdownGrace   time.Duration // how long in-flight updates may take on shutdown; default 8s
	IdlePoll        time.Duration // how often idle workers look for work from other processes; default 100ms
	// CommandsRetry is how soon a failed setMyCommands at start is tried
	// again (doubling up to ten minutes); default 30s.
	CommandsRetry time.Duration
	// Notify, when set, is called after the shop changed what a test waits
	// for: an update handled, an order moved to a new status. Tests wait on
	// it (bottest) instead of sleeping; nil in production.
	Notify func()

	// Durable, when set, makes an acknowledged update survive a failover
	// (intake.Queue.Durable); the shop shares it with every money write.
	Durable *redisstore.Durability
	// ScreenImages shows the catalog's images on the screens that have
	// one (package images, screen.go); nil: every screen is text.
	ScreenImages *images.Images
	// WebAppURL is the public https address of the shop's Mini App
	// (WEBAPP_URL): at start the bot makes its menu button open it. "":
	// the menu button is left as it is.
	WebAppURL string
}

// Bot is one shop process: intake, workers and the HTTP endpoints. Several
// may share one Redis.
type Bot struct {
	opts     Options
	rdb      redisstore.Client
	Queue    *intake.Queue
	Users    *records.Users
	API      *API
	Engine   *flows.Engine
	log      *slog.Logger
	metrics  *metrics.Metrics
	staff    flows.Staff // who has which roles (Options.Staff)
	wake     chan struct{}
	floods   chan struct{} // closed once this replica hears others' flood waits
	ready    chan int64    // chats this process just stored updates for
	lanes    chan int64    // pre-checkout lanes this process just stored queries in
	features Features      // what the adapter hands events to (given to Run)
	// username is the bot's username (getMe at start), for invite links.
	username    atomic.Pointer[string]
	boundLogged atomic.Int64 // when overBound last logged (Unix ns)
	// handleHook lets tests interpose on every update (for example to panic).
	handleHook func(u *models.Update)

	images *images.Images // nil: every screen is text (package images)
	// mounts are handlers served on the HTTP listener beside /healthz and
	// the webhook (the Mini App), set by Mount before Run.
	mounts []mount
	skew   skew    // what is left for a replica of a newer build (skew.go)
	seen   seenLog // the buyer profiles this process wrote today (profiles.go)
}

// New builds a bot over rdb with the flow engine. Run serves it with the
// shop's features (package storefront assembles them over the Bot).
func New(opts Options, rdb redisstore.Client, engine *flows.Engine) (*Bot, error) {
	if opts.Token == "" {
		return nil, errors.New("bot token is empty")
	}
	opts = opts.WithDefaults()
	tg, err := tgbot.New(opts.Token,
		tgbot.WithServerURL(opts.APIURL),
		tgbot.WithSkipGetMe(),
		tgbot.WithHTTPClient(opts.PollTimeout, opts.HTTPClient),
		tgbot.WithErrorsHandler(func(err error) { opts.Logger.Warn("bot api client", "err", scrub(err.Error(), opts.Token)) }),
	)
	if err != nil {
		return nil, fmt.Errorf("create bot api client: %s", scrub(err.Error(), opts.Token))
	}
	b := &Bot{
		opts: opts, rdb: rdb, Engine: engine, log: opts.Logger, metrics: opts.Metrics,
		Queue: intake.NewQueue(rdb, opts.Prefix), Users: records.NewUsers(rdb, opts.Prefix),
		staff: opts.Staff(), wake: make(chan struct{}, 1), floods: make(chan struct{}), ready: make(chan int64, 1024),
		lanes: make(chan int64, 256),
	}
	b.API = NewAPI(tg, opts.Metrics, opts.Logger, opts.HTTPClient, opts.APIURL, opts.Token)
	b.API.Floods = work.NewFloods(rdb, opts.Prefix)
	b.images = opts.ScreenImages
	b.skew.replicas = redisstore.NewReplicas(rdb, opts.Prefix)
	b.Queue.Stored = b.stored
	b.Queue.Dropped = b.overBound
	b.Queue.Durable = opts.Durable // an acknowledged update survives a failover
	b.API.OnBlocked = func(ctx context.Context, chatID int64) {
		if err := b.Users.SetBlocked(ctx, chatID, true, b.opts.Now()); err != nil {
			b.log.Error("record blocked buyer", "chat", chatID, "err", err)
		}
	}
	return b, nil
}

// WithDefaults returns opts with the defaults filled in: the options a Bot
// built from opts runs with. The shop (package storefront) builds its stores
// and features with the same prefix, logger, clock and metrics.
func (opts Options) WithDefaults() Options {
	if opts.APIURL == "" {
		opts.APIURL = "https://api.telegram.org"
	}
	opts.APIURL = strings.TrimRight(opts.APIURL, "/")
	if opts.Workers <= 0 {
		opts.Workers = 16
	}
	if opts.PollTimeout <= 0 {
		opts.PollTimeout = 25 * time.Second
	}
	if opts.Prefix == "" {
		opts.Prefix = redisstore.DefaultPrefix
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Metrics == nil {
		opts.Metrics = NewMetrics()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.HTTPClient == nil {
		// Replies go out from every worker at once: keep a connection per
		// worker alive instead of the default two.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 256, max(32, 2*opts.Workers)
		opts.HTTPClient = &http.Client{Timeout: opts.PollTimeout + 15*time.Second, Transport: tr}
	}
	if opts.ShutdownGrace <= 0 {
		opts.ShutdownGrace = 8 * time.Second
	}
	opts.HTTPLimits = opts.HTTPLimits.withDefaults()
	if opts.CommandsRetry <= 0 {
		opts.CommandsRetry = 30 * time.Second
	}
	if opts.IdlePoll <= 0 {
		opts.IdlePoll = 100 * time.Millisecond
	}
	return opts
}

// Staff returns the shop's staff: the owners, support agents and
// accountants of the options.
func (o Options) Staff() flows.Staff { return flows.NewStaff(o.Admins, o.SupportAgents, o.Accountants) }

// Log returns the bot's logger.
func (b *Bot) Log() *slog.Logger { return b.log }

// Run serves until ctx is cancelled: the HTTP endpoints, the intake (long
// polling, or the webhook when configured) and the workers, which hand
// events to f and run its background work. On cancel it stops taking
// updates, lets in-flight ones finish within ShutdownGrace, and returns
// nil. Call it once.
func (b *Bot) Run(ctx context.Context, f Features) error {
	b.features = f // before anything that reads it starts
	errc := make(chan error, 2)
	stopHTTP, err := b.serveAll(errc)
	if err != nil {
		return err
	}
	if err := b.setup(ctx); err != nil {
		stopHTTP()
		if ctx.Err() != nil {
			return nil // stopped while starting
		}
		return err
	}
	b.API.setLife(ctx)
	intakeCtx, stopIntake := context.WithCancel(ctx)
	var wg sync.WaitGroup
	b.runFeatures(intakeCtx, &wg)
	wg.Add(1)
	go func() { defer wg.Done(); b.listenFloods(intakeCtx) }()
	if b.opts.WebhookURL == "" {
		wg.Add(1)
		go func() { defer wg.Done(); b.poll(intakeCtx) }()
	}
	// Workers finish what they hold after ctx is cancelled, up to the grace.
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	workersDone := make(chan struct{})
	lanesDone := make(chan struct{})
	go func() { b.workLanes(ctx, workCtx); close(lanesDone) }()
	go func() { b.work(ctx, workCtx); <-lanesDone; close(workersDone) }()

	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errc:
	}
	b.log.Info("shutting down: no new updates; finishing those in flight")
	stopIntake()
	stopHTTP()
	wg.Wait()
	select {
	case <-workersDone:
	case <-time.After(b.opts.ShutdownGrace):
		b.log.Warn("shutdown grace over; unfinished updates stay queued for the next start")
		stopWork()
		<-workersDone
	}
	return runErr
}

// setup checks the token and registers the intake mode and the commands.
func (b *Bot) setup(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	me, err := b.API.TG.GetMe(cctx)
	if err != nil {
		return fmt.Errorf("check bot token with getMe: %s", scrub(err.Error(), b.opts.Token))
	}
	b.log.Info("bot identity", "username", me.Username, "id", me.ID)
	b.username.Store(&me.Username)
	if b.opts.WebhookURL != "" {
		_, err = b.API.TG.SetWebhook(cctx, &tgbot.SetWebhookParams{
			URL: b.opts.WebhookURL, SecretToken: b.opts.WebhookSecret, AllowedUpdates: allowedUpdates,
		})
		if err != nil {
			return fmt.Errorf("setWebhook: %s", scrub(err.Error(), b.opts.Token))
		}
	} else if _, err = b.API.TG.DeleteWebhook(cctx, &tgbot.DeleteWebhookParams{}); err != nil {
		return fmt.Errorf("deleteWebhook before long polling: %s", scrub(err.Error(), b.opts.Token))
	}
	if err := b.registerCommands(cctx); err != nil {
		// The command menu is a convenience: the shop works without it.
		b.log.Warn("set the command menu; retrying in the background", "err", scrub(err.Error(), b.opts.Token))
		go b.retryCommands(ctx)
	}
	if b.opts.WebAppURL != "" {
		if err := b.setMenuButton(cctx); err != nil {
			// Like the command menu, a convenience: the app also opens
			// from its link, and the next start tries again.
			b.log.Warn("set the menu button to the Mini App", "err", scrub(err.Error(), b.opts.Token))
		}
	}
	return nil
}

// setMenuButton makes the bot's menu button (every private chat's default)
// open the Mini App at WebAppURL, labelled in the shop's default language.
func (b *Bot) setMenuButton(ctx context.Context) error {
	_, err := b.API.TG.SetChatMenuButton(ctx, &tgbot.SetChatMenuButtonParams{MenuButton: &models.MenuButtonWebApp{
		Type: models.MenuButtonTypeWebApp, Text: locales.T(b.Engine.DefaultLang, "webapp.menu_button"),
		WebApp: models.WebAppInfo{URL: b.opts.WebAppURL},
	}})
	return err
}

// retryCommands tries setMyCommands again, backing off from CommandsRetry
// to ten minutes, until it succeeds or ctx ends.
func (b *Bot) retryCommands(ctx context.Context) {
	wait := b.opts.CommandsRetry
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		err := b.registerCommands(cctx)
		cancel()
		if err == nil {
			b.log.Info("command menu set")
			return
		}
		b.log.Warn("set the command menu", "err", scrub(err.Error(), b.opts.Token), "retry_in", wait)
		wait = min(2*wait, 10*time.Minute)
	}
}

// buyerCommands are shown in Telegram's command menu, in this order.
var buyerCommands = []string{"start", "giftcards", "keys", "games", "stars", "premium", "topup", "gifts", "services", "orders", "language", "settings", "help", "support", "paysupport", "terms", "cancel"}

// buyerCommandList is the buyers' command menu: /wallet joins it when the
// wallet is enabled, and /referrals with it when referrals are on.
func (b *Bot) buyerCommandList() []string {
	if b.features.Checkout == nil || !b.features.Checkout.WalletEnabled() {
		return buyerCommands
	}
	var out []string
	for _, c := range buyerCommands {
		if c == "language" {
			out = append(out, "wallet")
			if b.features.Referral != nil {
				out = append(out, "referrals")
			}
		}
		out = append(out, c)
	}
	return out
}

// menuCommand is one command of a command menu and the locale key of its
// description.
type menuCommand struct{ name, desc string }

// commandMenu is the command menu of someone with roles: the buyers'
// commands, then the staff commands the roles allow, in the order of the
// engine's admin registry (by perm). A staff command that stands in for a
// buyers' one of the same name (/orders) is listed with the staff commands,
// with its own description. A buyer's menu is the buyers' commands.
func (b *Bot) commandMenu(roles flows.Roles) []menuCommand {
	var staff []menuCommand
	for _, en := range b.Engine.AdminEntries() {
		if en.Kind == flows.KindCommand && roles.Can(en.Perm) {
			staff = append(staff, menuCommand{en.Name, en.Desc})
		}
	}
	var out []menuCommand
	for _, c := range b.buyerCommandList() {
		if !slices.ContainsFunc(staff, func(s menuCommand) bool { return s.name == c }) {
			out = append(out, menuCommand{c, "cmd." + c})
		}
	}
	return append(out, staff...)
}

// registerCommands sets the command menu for buyers (default scope) and,
// in each staff member's chat scope, the menu of their roles
// (commandMenu): once without a language (the default language) and once
// per language.
func (b *Bot) registerCommands(ctx context.Context) error {
	set := func(lang locales.Lang, code string, menu []menuCommand, scope models.BotCommandScope) error {
		cmds := make([]models.BotCommand, len(menu))
		for i, c := range menu {
			cmds[i] = models.BotCommand{Command: c.name, Description: locales.T(lang, c.desc)}
		}
		return b.API.Do(ctx, "setMyCommands", 0, func(ctx context.Context) error {
			_, err := b.API.TG.SetMyCommands(ctx, &tgbot.SetMyCommandsParams{Commands: cmds, Scope: scope, LanguageCode: code})
			return err
		})
	}
	for i, l := range append([]locales.Lang{""}, b.Engine.Langs...) {
		lang := l
		if i == 0 {
			lang = b.Engine.DefaultLang
		}
		if err := set(lang, string(l), b.commandMenu(0), nil); err != nil {
			return fmt.Errorf("setMyCommands %q: %w", l, err)
		}
		for _, id := range b.staff.IDs() {
			err := set(lang, string(l), b.commandMenu(b.staff.Roles(id)), &models.BotCommandScopeChat{ChatID: id})
			if err != nil {
				return fmt.Errorf("setMyCommands for staff %d %q: %w", id, l, err)
			}
		}
	}
	return nil
}

var allowedUpdates = []string{"message", "callback_query", "pre_checkout_query", "my_chat_member", "inline_query", "chosen_inline_result"}

func scrub(s, secret string) string {
	if secret == "" {
		return s
	}
	return strings.ReplaceAll(s, secret, "<token>")
}

// listenFloods applies the flood waits other replicas met, resubscribing
// after a Redis error.
func (b *Bot) listenFloods(ctx context.Context) {
	ready := b.floods
	for ctx.Err() == nil {
		err := b.API.Floods.Listen(ctx, ready, b.API.Flooded)
		select {
		case <-ready:
			ready = nil // closed: subscribed once
		default:
		}
		if err != nil && ctx.Err() == nil {
			b.log.Warn("flood waits of other replicas", "err", err)
			_ = sleepCtx(ctx, time.Second)
		}
	}
}

// FloodsReady is closed once the bot hears the flood waits other replicas
// share.
func (b *Bot) FloodsReady() <-chan struct{} { return b.floods }

// stored tells the workers which chats just got updates: claiming a known
// chat is one round trip, looking through every shard two. A hint dropped
// because the workers lag is no loss: the shard scan finds the chat.
func (b *Bot) stored(chats []int64) {
	for _, c := range chats {
		if laneUser(c) != 0 {
			select {
			case b.lanes <- c:
				continue
			default: // the lanes lag: a worker takes it
			}
		}
		select {
		case b.ready <- c:
		default:
			b.wakeWorkers()
			return
		}
	}
}

// overBound counts an update dropped because its chat's queue was full
// (intake.Queue.MaxQueue) and logs it, at most once a second per process:
// a flood of them is one flood.
func (b *Bot) overBound(chat int64) {
	b.metrics.Updates.WithLabelValues("any", "over_bound").Inc()
	now := time.Now().UnixNano()
	last := b.boundLogged.Load()
	if now-last >= int64(time.Second) && b.boundLogged.CompareAndSwap(last, now) {
		b.log.Warn("a chat's update queue is full: dropping its new updates but payments", "chat", chat, "bound", b.Queue.MaxQueue)
	}
}

// wakeWorkers tells an idle worker that updates are queued.
func (b *Bot) wakeWorkers() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}
