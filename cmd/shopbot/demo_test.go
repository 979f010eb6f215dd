package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"shopbot/bot/botapitest/calls"
	"shopbot/bot/botapitest/types"
	"shopbot/bot/fulfil"
	"shopbot/bot/webapp"
	"shopbot/locales"
	"shopbot/reseller/resellersim"
	"shopbot/reseller/resellersim/simcatalog"
)

// demoRun is one `shopbot demo` driven through its stdin and stdout, as a
// user at a terminal (or a script piping into it) would.
type demoRun struct {
	t      *testing.T
	in     *io.PipeWriter
	out    *syncBuffer
	parts  demoParts
	done   chan int
	cancel context.CancelFunc
	seen   int // output before this offset has been matched already
}

// demoTestFulfil are the fulfilment worker's timings in the demos the
// tests drive: a purchase's codes come within a fraction of a second of
// the upstream's, not after the default 3 s code settle and 2 s polls.
var demoTestFulfil = fulfil.Config{
	Tick: 20 * time.Millisecond, PollMin: 50 * time.Millisecond, PollMax: 250 * time.Millisecond, CodeSettle: 50 * time.Millisecond,
}

// startDemo runs the demo with args after "demo" and waits for the main
// menu it opens with.
func startDemo(t *testing.T, args ...string) *demoRun {
	t.Helper()
	pr, pw := io.Pipe()
	d := &demoRun{t: t, in: pw, out: &syncBuffer{}, done: make(chan int, 1)}
	parts := make(chan demoParts, 1)
	ctx := context.WithValue(context.Background(), demoHookKey{}, func(p demoParts) { parts <- p })
	ctx = context.WithValue(ctx, demoFulfilKey{}, demoTestFulfil)
	ctx, cancel := context.WithCancel(ctx)
	d.cancel = cancel
	args = append([]string{"demo", "--log", filepath.Join(t.TempDir(), "demo.log")}, args...)
	var stderr syncBuffer
	go func() { d.done <- run(ctx, args, env(nil), pr, d.out, &stderr) }()
	t.Cleanup(func() {
		cancel()
		_ = pw.Close()
		select {
		case <-d.done:
		case <-time.After(20 * time.Second):
			t.Errorf("the demo did not end within 20 s after the test")
		}
		if s := stderr.String(); s != "" {
			t.Logf("stderr:\n%s", s)
		}
	})
	select {
	case d.parts = <-parts:
	case code := <-d.done:
		t.Fatalf("demo exited %d before starting\nstdout:\n%s\nstderr:\n%s", code, d.out.String(), stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatal("the demo did not start within 20 s")
	}
	return d
}

// send types a line.
func (d *demoRun) send(line string) {
	d.t.Helper()
	if _, err := io.WriteString(d.in, line+"\n"); err != nil {
		d.t.Fatalf("typing %q: %v", line, err)
	}
}

// wait waits until the output after the last match contains want, and
// returns the output from the last match to the end of want.
func (d *demoRun) wait(want string) string {
	d.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out := d.out.String()
		if i := strings.Index(out[d.seen:], want); i >= 0 {
			chunk := out[d.seen : d.seen+i+len(want)]
			d.seen += i + len(want)
			return chunk
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("no %q in the demo's output within 20 s; output after the last match:\n%s", want, out[d.seen:])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// tryWait is wait that reports a timeout (after max) instead of failing.
func (d *demoRun) tryWait(want string, max time.Duration) bool {
	d.t.Helper()
	for deadline := time.Now().Add(max); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		out := d.out.String()
		if i := strings.Index(out[d.seen:], want); i >= 0 {
			d.seen += i + len(want)
			return true
		}
	}
	return false
}

// buttonRe matches a numbered button: its number and its label.
var buttonRe = regexp.MustCompile(`\[(\d+)\] (.+?)(?:   |\n|$)`)

// press types the number of the latest printed button whose label starts
// with label.
func (d *demoRun) press(label string) {
	d.t.Helper()
	out := d.out.String()[:d.seen]
	if i := strings.LastIndex(out, botMark); i >= 0 {
		out = d.out.String()[i:]
	}
	for _, m := range buttonRe.FindAllStringSubmatch(out, -1) {
		if strings.HasPrefix(m[2], label) {
			d.send(m[1])
			d.wait("pressed [" + m[2] + "]")
			return
		}
	}
	d.t.Fatalf("no button %q in the latest message:\n%s", label, out)
}

// exit waits for the demo to end and returns its exit code.
func (d *demoRun) exit() int {
	d.t.Helper()
	select {
	case code := <-d.done:
		d.done <- code
		return code
	case <-time.After(20 * time.Second):
		d.t.Fatalf("the demo did not end within 20 s; output:\n%s", d.out.String()[d.seen:])
		return -1
	}
}

// noViolations fails the test on any Bot API request the schema rejects.
func (d *demoRun) noViolations() {
	d.t.Helper()
	for _, v := range d.parts.fake.Violations() {
		d.t.Errorf("Bot API violation: %v", v)
	}
	if strings.Contains(d.out.String(), "violation") {
		d.t.Errorf("a violation was printed:\n%s", d.out.String())
	}
}

// codeRe matches a gift-card code of the simulator.
var codeRe = regexp.MustCompile(`\b[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}\b`)

// giftCardOrder returns the simulator's only order, which must be a
// completed gift-card order.
func giftCardOrder(t *testing.T, sim *resellersim.Sim) resellersim.OrderSnapshot {
	t.Helper()
	orders := sim.Orders()
	if len(orders) != 1 || orders[0].Type != resellersim.LineGiftCard || orders[0].Status != resellersim.OrderCompleted {
		t.Fatalf("upstream orders = %+v, want one completed gift-card order", orders)
	}
	return orders[0]
}

// chooseAppleCard goes from /giftcards to the quantity step of the 2 USD
// Apple card (US).
func (d *demoRun) chooseAppleCard() {
	d.t.Helper()
	d.send("/giftcards")
	d.wait("Choose a brand")
	d.press("Apple")
	d.wait("Choose the card's region")
	d.press("US")
	d.wait("Choose a card")
	d.press("Apple Gift Card 2 USD")
	d.wait("How many?")
}

// The purchase a newcomer makes: /giftcards, a card, quantity 2, the
// invoice paid with yes; the two codes the simulator delivered for that
// order, and no others, appear in the chat. /quit then ends with exit 0.
func TestDemoGiftCardPurchase(t *testing.T) {
	t.Parallel()
	d := startDemo(t)
	d.wait("Please choose what you need")
	d.chooseAppleCard()
	d.press("2")
	confirm := d.wait("[1] 💳 Pay")
	if !strings.Contains(confirm, "Quantity: 2") {
		t.Fatalf("confirmation:\n%s", confirm)
	}
	d.press("💳 Pay")
	d.wait("How would you like to pay?")
	d.press("⭐ Pay")
	invoice := d.wait("or no to leave it unpaid.")
	if !strings.Contains(invoice, "Invoice: Apple Gift Card 2 USD") || !strings.Contains(invoice, "Total: 352 Telegram Stars") {
		t.Fatalf("invoice:\n%s", invoice)
	}
	d.send("yes")
	d.wait("You paid 352 Stars")
	d.wait("Payment received")
	d.wait("is ready: Apple Gift Card 2 USD")
	delivery := d.wait("Tap a code to copy it")

	o := giftCardOrder(t, d.parts.sim)
	if len(o.Codes) != 2 || o.Quantity != 2 {
		t.Fatalf("upstream order %d: quantity %d, codes %v", o.Number, o.Quantity, o.Codes)
	}
	got := codeRe.FindAllString(delivery, -1)
	if !slices.Equal(got, o.Codes) {
		t.Errorf("codes in the chat %v, the simulator delivered %v; delivery:\n%s", got, o.Codes, delivery)
	}
	if n := len(codeRe.FindAllString(d.out.String(), -1)); n != 2 {
		t.Errorf("%d codes in the whole output, want the 2 delivered", n)
	}
	d.noViolations()
	if out := d.out.String(); strings.Contains(out, goodToken) || strings.Contains(out, goodKey) {
		t.Errorf("the environment's token or key reached the demo's output")
	}

	// The demo user is the shop's admin: /balance and /stats show the
	// session's real figures (the upstream balance after this purchase).
	d.send("/balance")
	balance := d.wait("Paid, not yet delivered")
	if want := locales.Decimal(locales.En, d.parts.sim.Balance(), 2); !strings.Contains(balance, want) {
		t.Errorf("/balance does not show the upstream balance %s:\n%s", want, balance)
	}
	d.send("/stats")
	stats := d.wait("Last 30 days")
	if !strings.Contains(stats, "1 order: 1 delivered") || !strings.Contains(stats, "Gift cards") {
		t.Errorf("/stats does not show the purchase:\n%s", stats)
	}

	d.send("/quit")
	if code := d.exit(); code != 0 {
		t.Fatalf("exit %d after /quit", code)
	}
	d.wait("Demo ended.")
}

// A number with no such button explains itself and sends nothing; a quote
// sends a number as a message (the quantity). More than ten codes also come
// as a file, printed with its name and contents.
func TestDemoTypedNumbersAndCodesFile(t *testing.T) {
	t.Parallel()
	d := startDemo(t)
	d.chooseAppleCard()
	d.send("99")
	d.wait("There is no button 99: the latest buttons are 1-9. To send 99 as a message, type '99.")
	d.send("'11")
	d.wait("Quantity: 11")
	d.press("💳 Pay")
	d.wait("How would you like to pay?")
	d.press("⭐ Pay")
	d.wait("or no to leave it unpaid.")
	d.send("no")
	d.wait("Not paid.")
	d.send("/pay")
	d.wait("You paid 1,936 Stars")
	d.wait("All codes are also in the attached file")
	d.wait("[file] order-1-codes.txt (text/plain, 220 bytes)")
	o := giftCardOrder(t, d.parts.sim)
	if len(o.Codes) != 11 {
		t.Fatalf("upstream order %d has %d codes, want 11", o.Number, len(o.Codes))
	}
	file := d.wait("| " + o.Codes[10] + "\n")
	var lines []string
	for _, l := range strings.Split(file, "\n") {
		if c, ok := strings.CutPrefix(strings.TrimSpace(l), "| "); ok {
			lines = append(lines, c)
		}
	}
	if !slices.Equal(lines, o.Codes) {
		t.Errorf("file contents %v, the simulator delivered %v", lines, o.Codes)
	}
	d.noViolations()
}

// The demo wallet holds $25, so paying from the wallet works too; /wallet
// then shows the credit and the payment.
func TestDemoWalletPurchase(t *testing.T) {
	t.Parallel()
	d := startDemo(t)
	d.chooseAppleCard()
	d.press("1")
	d.wait("Please check your order")
	d.wait("· $2.28") // 176 Stars, or $2.28 from the wallet
	d.press("💳 Pay")
	d.wait("Your wallet balance: $25.00")
	d.press("👛 From wallet ($25.00)")
	d.wait("Paid from your wallet ($2.28)")
	delivery := d.wait("Tap a code to copy it")
	o := giftCardOrder(t, d.parts.sim)
	if got := codeRe.FindAllString(delivery, -1); len(o.Codes) != 1 || !slices.Equal(got, o.Codes) {
		t.Errorf("codes in the chat %v, the simulator delivered %v", got, o.Codes)
	}
	d.send("/wallet")
	d.wait("Balance: $22.72")
	d.wait("+$25.00 · top-up")
	d.noViolations()
}

// Russian: the fake user's language_code is ru, so the bot answers in
// Russian from the first menu.
func TestDemoRussian(t *testing.T) {
	t.Parallel()
	d := startDemo(t, "--lang", "ru")
	title := locales.T(locales.Ru, "menu.title")
	first, _, _ := strings.Cut(regexp.MustCompile(`<[^>]+>`).ReplaceAllString(title, ""), "\n")
	d.wait("bot> " + first)
	d.wait("Выберите, что вам нужно:")
	d.send("/quit")
	if code := d.exit(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	d.noViolations()
}

// The end of input ends the demo cleanly, like /quit.
func TestDemoEndsAtEOF(t *testing.T) {
	t.Parallel()
	d := startDemo(t)
	d.wait("Please choose what you need")
	_ = d.in.Close()
	if code := d.exit(); code != 0 {
		t.Fatalf("exit %d at EOF", code)
	}
	d.wait("Demo ended.")
}

// Ctrl-C (the context main cancels on SIGINT) ends the demo with exit 0.
func TestDemoEndsOnInterrupt(t *testing.T) {
	t.Parallel()
	d := startDemo(t)
	d.wait("Please choose what you need")
	d.cancel()
	if code := d.exit(); code != 0 {
		t.Fatalf("exit %d on interrupt", code)
	}
	d.wait("Demo ended.")
}

// The demo user is the shop's admin: /balance shows the upstream balance.
func TestDemoAdminBalance(t *testing.T) {
	d := startDemo(t)
	d.wait("Please choose what you need")
	d.send("/balance")
	reply := d.wait(locales.Decimal(locales.En, d.parts.sim.Balance(), 2))
	if strings.Contains(reply, "I don't know this command") {
		t.Fatalf("/balance is unknown to the admin:\n%s", reply)
	}
	d.noViolations()
}

// Bot HTML as Telegram parsed it becomes terminal text: styles only with
// color, a link's URL after its text, offsets counted in UTF-16 (the emoji
// before the bold word takes two units).
func TestStyledText(t *testing.T) {
	text := "👋 Hi, see docs: ABCD"
	ents := []types.MessageEntity{
		{Type: "bold", Offset: 3, Length: 2},
		{Type: "text_link", Offset: 11, Length: 4, URL: "https://example.com/docs"},
		{Type: "code", Offset: 17, Length: 4},
	}
	if got, want := styled(text, ents, false), "👋 Hi, see docs (https://example.com/docs): ABCD"; got != want {
		t.Errorf("plain:\n got %q\nwant %q", got, want)
	}
	got := styled(text, ents, true)
	for _, want := range []string{"\x1b[1mHi\x1b[0m", "\x1b[4mdocs\x1b[0m (https://example.com/docs)", "\x1b[36mABCD\x1b[0m"} {
		if !strings.Contains(got, want) {
			t.Errorf("colored %q lacks %q", got, want)
		}
	}
	if got := styled("https://example.com", []types.MessageEntity{{Type: "text_link", Offset: 0, Length: 19, URL: "https://example.com"}}, false); got != "https://example.com" {
		t.Errorf("a link whose text is its URL = %q", got)
	}
	if got := styled("short", []types.MessageEntity{{Type: "bold", Offset: 2, Length: 10}}, false); got != "short" {
		t.Errorf("an entity past the end = %q", got)
	}
	if got := styled("a\x1b[2Jb\n\tc", nil, false); got != "a\uFFFD[2Jb\n\tc" {
		t.Errorf("control characters = %q", got)
	}
}

// Long chat lines wrap at spaces under their text; escapes take no room and
// emoji take two columns.
func TestWrapBlock(t *testing.T) {
	block := botMark + "one two three four five six\n" + indent + "short\n" + "plain line that is long enough\n"
	want := botMark + "one two three\n" + indent + "four five six\n" + indent + "short\n" + "plain line that is\n    long enough\n"
	if got := wrapBlock(block, 18); got != want {
		t.Errorf("wrapped:\n%s\nwant:\n%s", got, want)
	}
	if got := visibleWidth("\x1b[1mab\x1b[0m ⭐ ✖️"); got != 8 {
		t.Errorf("visibleWidth = %d, want 8", got)
	}
	if got := wrapLine(botMark+"unbreakable-very-long-word", 10, indent); got != botMark+"unbreakable-very-long-word" {
		t.Errorf("a word wider than the room = %q", got)
	}
}

// The terminal chat on its own: a message with URL and copy buttons, an
// edit, a keyboard taken off, a callback notice, and an invoice whose
// question goes into the prompt of an interactive terminal.
func TestTermChatRendersCalls(t *testing.T) {
	var out strings.Builder
	tc := newTermChat(&out, 5, false, false)
	var prompts []string
	tc.setPrompt = func(p string) { prompts = append(prompts, p) }
	kb := &types.InlineKeyboardMarkup{InlineKeyboard: [][]types.InlineKeyboardButton{
		{{Text: "Go", CallbackData: "1:n:go"}, {Text: "Site", URL: "https://example.com"}},
		{{Text: "Copy", CopyText: &types.CopyTextButton{Text: "ABCD"}}},
	}}
	msg := types.Message{MessageID: 7, Chat: types.Chat{ID: 5}, Text: "Hello\n\nworld", ReplyMarkup: kb}
	tc.show(calls.Call{Method: "sendMessage", Result: msg})
	other := msg
	other.Chat.ID = 6
	tc.show(calls.Call{Method: "sendMessage", Result: other}) // another chat: not shown
	want := "bot> Hello\n\n     world\n     [1] Go   [2] Site -> https://example.com\n     [3] Copy\n" +
		sysMark + "Type a number to press that button (numbers mean the latest buttons shown).\n"
	if out.String() != want {
		t.Fatalf("message:\n%q\nwant\n%q", out.String(), want)
	}
	if b, id, n, ok := tc.button(3); !ok || id != 7 || n != 3 || b.copy != "ABCD" {
		t.Errorf("button 3 = %+v of message %d (%d buttons)", b, id, n)
	}

	out.Reset()
	edited := msg
	edited.Text, edited.EditDate = "Changed", 1
	tc.show(calls.Call{Method: "editMessageText", Result: edited})
	if !strings.HasPrefix(out.String(), "bot> (edited) Changed\n") || strings.Contains(out.String(), "Type a number") {
		t.Errorf("edit:\n%s", out.String())
	}
	out.Reset()
	bare := msg
	bare.ReplyMarkup = nil
	tc.show(calls.Call{Method: "editMessageReplyMarkup", Result: bare})
	if out.String() != "" {
		t.Errorf("a keyboard taken off printed %q", out.String())
	}
	if _, _, n, _ := tc.button(1); n != 0 {
		t.Errorf("%d buttons left after the keyboard was taken off", n)
	}
	tc.show(calls.Call{Method: "answerCallbackQuery", Params: map[string]any{"text": "Outdated", "show_alert": true}})
	if out.String() != "bot> (alert) Outdated\n" {
		t.Errorf("callback answer printed %q", out.String())
	}

	out.Reset()
	inv := types.Message{MessageID: 8, Chat: types.Chat{ID: 5},
		Invoice: &types.Invoice{Title: "Card", Description: "Two cards", Currency: "XTR", TotalAmount: 1927}}
	tc.show(calls.Call{Method: "sendInvoice", Result: inv})
	if !strings.Contains(out.String(), "bot> Invoice: Card\n     Two cards\n     Total: 1,927 Telegram Stars\n") {
		t.Errorf("invoice:\n%s", out.String())
	}
	if got, asking := tc.pendingInvoice(); got == nil || got.MessageID != 8 || !asking {
		t.Errorf("pending invoice = %+v, asking %v", got, asking)
	}
	tc.stopAsking()
	tc.end()
	if want := []string{"pay 1,927 Stars? (yes/no)> ", youMark, ""}; !slices.Equal(prompts, want) {
		t.Errorf("prompts %q, want %q", prompts, want)
	}
}

// Bad flags stop the demo before anything starts, saying what is wrong.
func TestDemoFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--lang", "de"}, 2, `--lang "de": use en, ru or uk`},
		{[]string{"now"}, 2, `unexpected argument "now"`},
		{[]string{"--fast"}, 2, "flag provided but not defined: -fast"},
		{[]string{"--help"}, 0, "usage: shopbot demo [--lang en|ru|uk] [--slow] [--log FILE]"},
	} {
		var stdout, stderr syncBuffer
		code := run(t.Context(), append([]string{"demo"}, tc.args...), env(nil), strings.NewReader(""), &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.want) || stdout.String() != "" {
			t.Errorf("demo %v: exit %d, stderr %q, stdout %q", tc.args, code, stderr.String(), stdout.String())
		}
	}
}

// The demo has a promo code ready (DEMO10): applied on the order summary,
// the discounted price is what the wallet pays.
func TestDemoPromoCode(t *testing.T) {
	t.Parallel()
	d := startDemo(t)
	d.chooseAppleCard()
	d.press("1")
	d.wait("Please check your order")
	d.press("🏷 Promo code")
	d.wait("Send your promo code as a message")
	d.send(demoPromo)
	d.wait("Promo code DEMO10 applied")
	d.wait("Please check your order") // the summary again, with the discount
	d.press("💳 Pay")
	d.wait("Your wallet balance: $25.00")
	d.press("👛 From wallet ($25.00)")
	paid := d.wait("Paid from your wallet")
	if strings.Contains(paid, "($2.28)") {
		t.Fatalf("the wallet paid the full price: %q", paid)
	}
	d.wait("Tap a code to copy it")
	d.noViolations()
}

// /friend: a simulated friend opens the shop through the demo user's
// invite link and buys with Stars; the demo user is told of the referral
// reward and /referrals counts the friend.
func TestDemoFriendEarnsAReferralReward(t *testing.T) {
	t.Parallel()
	d := startDemo(t)
	d.send("/friend")
	if !d.tryWait("got an order delivered", 20*time.Second) {
		for _, m := range d.parts.fake.MessagesIn(demoFriendID) {
			var labels []string
			for _, b := range m.ReplyMarkup.Buttons() {
				labels = append(labels, b.Text)
			}
			t.Logf("friend's chat: %d %q %q buttons %q", m.MessageID, m.Text, m.Caption, labels)
		}
		t.Fatal("no referral reward in the demo user's chat")
	}
	d.send("/referrals")
	d.wait("You have brought 1 buyer")
	d.noViolations()
}

// A script piped in whole, ending in /quit right after paying, still sees
// its codes (slow upstream: they come seconds later) before the demo ends.
func TestDemoPipedQuitWaitsForTheCodes(t *testing.T) {
	t.Parallel()
	d := startDemo(t, "--slow")
	d.wait("Please choose what you need")
	// Gift cards, Apple, US, the 2 USD card, quantity 1, Pay, Stars, yes.
	if _, err := io.WriteString(d.in, "/giftcards\n1\n1\n1\n1\n1\n1\nyes\n/quit\n"); err != nil {
		t.Fatal(err)
	}
	if code := d.exit(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	out := d.out.String()
	ready, end := strings.Index(out, "Tap a code to copy it"), strings.Index(out, "Demo ended.")
	if ready < 0 || end < ready {
		t.Fatalf("the demo ended before the codes came:\n%s", out[d.seen:])
	}
	d.noViolations()
}

// Each demo writes its own new log file, named in the banner and at the
// end; two demos never share one.
func TestDemoLogFileIsNewEachRun(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	logRe := regexp.MustCompile(`Logs +(\S+)`)
	var paths []string
	for range 2 {
		var stdout, stderr syncBuffer
		if code := run(t.Context(), []string{"demo"}, env(nil), strings.NewReader("/quit\n"), &stdout, &stderr); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		m := logRe.FindStringSubmatch(stdout.String())
		if m == nil || !strings.Contains(stdout.String(), "The shop's logs are in "+m[1]+".") {
			t.Fatalf("no log path in the output:\n%s", stdout.String())
		}
		if _, err := os.Stat(m[1]); err != nil || filepath.Dir(m[1]) != os.Getenv("TMPDIR") {
			t.Fatalf("log %s: %v", m[1], err)
		}
		paths = append(paths, m[1])
	}
	if paths[0] == paths[1] {
		t.Fatalf("two demos wrote to one log, %s", paths[0])
	}
}

// The demo serves the Mini App to a browser on this machine: the address
// it prints opens the app as the demo buyer, and the app's Pay is asked in
// the terminal like a chat invoice; paying there makes the order the page
// then shows with its codes.
func TestDemoServesTheMiniApp(t *testing.T) {
	d := startDemo(t)
	d.wait("[11] ") // the menu of the demo's /start, before the app's invoice
	banner := d.out.String()
	m := regexp.MustCompile(`(http://127\.0\.0\.1:\d+/app/)#(\S+)`).FindStringSubmatch(banner)
	if m == nil {
		t.Fatalf("no Mini App address in the banner:\n%s", banner)
	}
	frag, err := url.ParseQuery(m[2])
	if err != nil || frag.Get("tgWebAppData") == "" {
		t.Fatalf("fragment %q: %v", m[2], err)
	}
	api := func(method, path string, body string) map[string]any {
		t.Helper()
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, _ := http.NewRequest(method, m[1]+"api/"+path, rd)
		req.Header.Set(webapp.InitDataHeader, frag.Get("tgWebAppData"))
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != 200 {
			t.Fatalf("%s %s: %d %v %v", method, path, res.StatusCode, out, err)
		}
		return out
	}
	if s := api("GET", "session", ""); int64(s["user"].(map[string]any)["id"].(float64)) != demoUserID {
		t.Fatalf("session: %v", s)
	}
	// The catalog's images come through the demo's own address; the
	// referral page and the terms are there too.
	img, _ := api("GET", "lines/giftcards/categories/"+simcatalog.DemoGiftCategory, "")["category"].(map[string]any)["image"].(string)
	if res, err := http.Get(m[1] + img); err != nil || res.StatusCode != 200 || res.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("the category's image %q: %v %v", img, res, err)
	} else {
		res.Body.Close()
	}
	if r := api("GET", "referral", ""); !strings.Contains(r["link"].(string), "?start=r") {
		t.Fatalf("referral page: %v", r)
	}
	if r := api("GET", "terms", ""); r["text"] == "" {
		t.Fatalf("terms: %v", r)
	}
	q := api("POST", "quote", `{"line":"giftcards","category":"`+simcatalog.DemoGiftCategory+`","item":"`+simcatalog.DemoGiftCard+`","quantity":1}`)["quote"].(map[string]any)
	qid := q["id"].(string)
	if link := api("POST", "pay", `{"quote":"`+qid+`"}`)["link"]; link == "" {
		t.Fatal("no invoice link")
	}
	d.wait("The Mini App opened an invoice")
	d.wait("Type yes to pay")
	d.send("yes")
	d.wait("You paid")
	// The order is delivered before its codes are sent to the chat: once
	// the chat shows them, the page's poll finds them too.
	d.wait("Tap a code to copy it")
	o, _ := api("GET", "quotes/"+qid+"/order", "")["order"].(map[string]any)
	codes, _ := o["codes"].([]any)
	if o["status"] != "delivered" || len(codes) != 1 || !strings.Contains(d.out.String(), codes[0].(string)) {
		t.Fatalf("the app's order %v; the chat:\n%s", o, d.out.String())
	}
}
