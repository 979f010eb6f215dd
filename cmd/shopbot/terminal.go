package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"shopbot/bot/botapitest/calls"
	"shopbot/bot/botapitest/types"
	"shopbot/locales"
)

// The terminal chat of `shopbot demo`: it prints what the bot does in the
// demo user's chat (messages, edits, invoices, files, callback answers) and
// remembers what the user's next line can refer to (the latest buttons, the
// latest invoice). Output from the bot and from the input loop goes through
// one lock, so a message is always printed whole.

const (
	botMark = "bot> "
	youMark = "you> "
	sysMark = "  ·  " // the demo's own notes, not the bot's
	indent  = "     "
	// maxFileLines bounds how much of a delivered file is printed.
	maxFileLines = 40
)

// termButton is one numbered inline button of the latest keyboard.
type termButton struct {
	text, data, url, copy string
}

// termChat is the terminal side of the demo chat.
type termChat struct {
	mu     sync.Mutex
	out    io.Writer
	color  bool       // ANSI styles for bold, code, links
	width  func() int // terminal columns to wrap at; nil or 0: no wrapping
	echo   bool       // input is not a terminal: print each line the user sent
	chatID int64
	// queryChat names the chat a callback query came from (the fake's
	// CallbackChat): answers to presses in other chats (the /friend's)
	// are not the demo user's to read. nil: every answer is shown.
	queryChat func(id string) (int64, bool)
	// setPrompt shows the prompt of an interactive terminal (nil when
	// input is piped: there is no prompt then). The line editor draws it
	// below whatever is printed, with the user's unfinished line.
	setPrompt func(string)
	prompt    string // the prompt last set
	ended     bool   // the chat is over: no more prompts
	hinted    bool   // the "type a number" hint was shown

	btnMsg  int // message the numbered buttons belong to, 0 for none
	buttons []termButton
	invoice *types.Message // the latest invoice, nil for none
	askPay  bool           // the invoice was the last thing shown: yes/no pays it
	// link is the latest invoice's link when the Mini App made it
	// (createInvoiceLink; invoice then has no message id), else "".
	link string
}

func newTermChat(out io.Writer, chatID int64, color, echo bool) *termChat {
	return &termChat{out: out, chatID: chatID, color: color, echo: echo, prompt: youMark}
}

// promptLocked returns the prompt for the next line: the question about
// the invoice just shown, or the usual one.
func (t *termChat) promptLocked() string {
	switch {
	case t.ended:
		return ""
	case t.askPay && t.invoice != nil:
		return fmt.Sprintf("pay %s? (yes/no)> ", starsText(t.invoice.Invoice.TotalAmount))
	}
	return youMark
}

// updatePromptLocked gives the line editor the current prompt.
func (t *termChat) updatePromptLocked() {
	if p := t.promptLocked(); t.setPrompt != nil && p != t.prompt {
		t.prompt = p
		t.setPrompt(p)
	}
}

// print writes a block of text (lines ending in \n) whole.
func (t *termChat) print(block string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.printLocked(block)
}

func (t *termChat) printLocked(block string) {
	t.updatePromptLocked()
	if t.width != nil {
		if w := t.width(); w > 0 {
			block = wrapBlock(block, w)
		}
	}
	io.WriteString(t.out, block)
}

// end stops showing prompts. Messages still arriving are printed.
func (t *termChat) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ended = true
	t.updatePromptLocked()
}

// typed records a line the user entered: a terminal already shows it after
// the prompt; piped input is echoed so the transcript reads as a chat.
func (t *termChat) typed(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.echo {
		io.WriteString(t.out, t.promptLocked()+line+"\n")
	}
}

// note prints one of the demo's own lines (not the bot's).
func (t *termChat) note(format string, args ...any) {
	t.print(sysMark + fmt.Sprintf(format, args...) + "\n")
}

// button returns the numbered button n (from 1) of the latest keyboard and
// how many there are.
func (t *termChat) button(n int) (termButton, int, int, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n < 1 || n > len(t.buttons) {
		return termButton{}, t.btnMsg, len(t.buttons), false
	}
	return t.buttons[n-1], t.btnMsg, len(t.buttons), true
}

// pendingInvoice returns the latest invoice, and whether the user was just
// asked to pay it.
func (t *termChat) pendingInvoice() (*types.Message, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.invoice, t.askPay
}

// invoiceLink is the latest invoice's link when the Mini App made it, or "".
func (t *termChat) invoiceLink() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.link
}

// setQueryChat sets queryChat (the fake is made after the chat).
func (t *termChat) setQueryChat(f func(id string) (int64, bool)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.queryChat = f
}

// stopAsking ends the yes/no question about the invoice.
func (t *termChat) stopAsking() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.askPay = false
	t.updatePromptLocked()
}

// show prints what a Bot API call did to the demo chat.
func (t *termChat) show(c calls.Call) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !c.OK() {
		return
	}
	switch c.Method {
	case "answerCallbackQuery":
		if t.queryChat != nil {
			if chat, ok := t.queryChat(c.String("callback_query_id")); ok && chat != t.chatID {
				return
			}
		}
		if text := c.String("text"); text != "" {
			kind := "notice"
			if c.Bool("show_alert") {
				kind = "alert"
			}
			t.printLocked(botMark + "(" + kind + ") " + clean(text) + "\n")
		}
		return
	case "deleteMessage":
		if c.Int("chat_id") == t.chatID && int(c.Int("message_id")) == t.btnMsg {
			t.btnMsg, t.buttons = 0, nil
		}
		return
	case "createInvoiceLink":
		// The Mini App's Pay: Telegram would open the invoice over the
		// page; here the terminal asks, and paying confirms in the page.
		var prices []struct {
			Amount int64 `json:"amount"`
		}
		_ = c.JSON("prices", &prices)
		inv := &types.Invoice{Title: c.String("title"), Description: c.String("description"), Currency: c.String("currency")}
		for _, p := range prices {
			inv.TotalAmount += p.Amount
		}
		link, _ := c.Result.(string)
		t.printLocked(sysMark + "The Mini App opened an invoice (Telegram shows it over the page):\n" + t.renderLocked(types.Message{Invoice: inv}, false))
		t.link = link
		return
	}
	m, ok := c.Result.(types.Message)
	if !ok || m.Chat.ID != t.chatID {
		return
	}
	edited := strings.HasPrefix(c.Method, "edit")
	if c.Method == "editMessageReplyMarkup" && m.ReplyMarkup == nil {
		// Only the keyboard went away (a pressed menu is closed): nothing to
		// read, but its numbers no longer press anything.
		if m.MessageID == t.btnMsg {
			t.btnMsg, t.buttons = 0, nil
		}
		return
	}
	t.printLocked(t.renderLocked(m, edited))
}

// renderLocked formats a bot message and makes its keyboard (or invoice)
// the one the next line refers to.
func (t *termChat) renderLocked(m types.Message, edited bool) string {
	var b strings.Builder
	var body []string
	switch {
	case m.Invoice != nil:
		inv := m.Invoice
		body = append(body, t.style("Invoice: ", "bold")+t.style(clean(inv.Title), "bold"))
		if inv.Description != "" {
			body = append(body, strings.Split(clean(inv.Description), "\n")...)
		}
		price := locales.Number(locales.En, inv.TotalAmount) + " Telegram Stars"
		if inv.Currency != "XTR" {
			price = strconv.FormatInt(inv.TotalAmount, 10) + " " + inv.Currency + " (minor units)"
		}
		body = append(body, "Total: "+t.style(price, "bold"))
	case m.Document != nil:
		d := m.Document
		body = append(body, fmt.Sprintf("[file] %s (%s, %s)", t.style(clean(d.FileName), "bold"), d.MimeType, sizeText(int64(len(m.FileData)))))
		if m.Caption != "" {
			body = append(body, strings.Split(styled(m.Caption, m.CaptionEntities, t.color), "\n")...)
		}
		body = append(body, fileLines(m.FileData)...)
	case m.Photo != nil:
		name := "photo"
		if m.PhotoName != "" {
			name = clean(m.PhotoName)
		}
		body = append(body, "🖼 "+t.style(name, "bold"))
		if m.Caption != "" {
			body = append(body, strings.Split(styled(m.Caption, m.CaptionEntities, t.color), "\n")...)
		}
	default:
		body = strings.Split(styled(m.Text, m.Entities, t.color), "\n")
	}
	if edited && len(body) > 0 {
		body[0] = t.style("(edited) ", "italic") + body[0]
	}
	for i, line := range body {
		switch {
		case i == 0:
			b.WriteString(botMark)
		case line != "": // no trailing indent on empty lines
			b.WriteString(indent)
		}
		b.WriteString(line + "\n")
	}

	if m.Invoice != nil {
		mm := m
		t.invoice, t.askPay, t.link = &mm, true, ""
		b.WriteString(sysMark + "Type yes to pay, as in Telegram's payment window (the shop's pre-checkout, then the payment), or no to leave it unpaid.\n")
		return b.String()
	}
	t.askPay = false
	if m.ReplyMarkup == nil {
		if m.MessageID == t.btnMsg {
			t.btnMsg, t.buttons = 0, nil
		}
		return b.String()
	}
	var buttons []termButton
	for _, row := range m.ReplyMarkup.InlineKeyboard {
		var cells []string
		for _, btn := range row {
			if btn.Pay {
				continue
			}
			tb := termButton{text: clean(btn.Text), data: btn.CallbackData, url: clean(btn.URL)}
			if btn.CopyText != nil {
				tb.copy = clean(btn.CopyText.Text)
			}
			buttons = append(buttons, tb)
			cell := t.style("["+strconv.Itoa(len(buttons))+"]", "bold") + " " + tb.text
			if tb.url != "" {
				cell += " -> " + tb.url
			}
			cells = append(cells, cell)
		}
		if len(cells) > 0 {
			b.WriteString(indent + strings.Join(cells, "   ") + "\n")
		}
	}
	if len(buttons) > 0 {
		t.btnMsg, t.buttons = m.MessageID, buttons
		if !t.hinted {
			t.hinted = true
			b.WriteString(sysMark + "Type a number to press that button (numbers mean the latest buttons shown).\n")
		}
	}
	return b.String()
}

// style wraps s in an ANSI style when colors are on.
func (t *termChat) style(s, kind string) string {
	if !t.color || s == "" {
		return s
	}
	return ansi[kind] + s + ansiReset
}

const ansiReset = "\x1b[0m"

// ansi are the terminal styles of Telegram's entity types.
var ansi = map[string]string{
	"bold":          "\x1b[1m",
	"italic":        "\x1b[3m",
	"underline":     "\x1b[4m",
	"strikethrough": "\x1b[9m",
	"code":          "\x1b[36m",
	"pre":           "\x1b[36m",
	"spoiler":       "\x1b[2m",
	"text_link":     "\x1b[4m",
	"url":           "\x1b[4m",
}

// styled turns a message's text and entities (what Telegram made of the
// bot's HTML) into terminal text: with color, ANSI bold, italic, underline,
// code in cyan; always, a link whose text is not its URL is followed by the
// URL in parentheses. Offsets are in UTF-16 code units, as Telegram counts.
func styled(text string, ents []types.MessageEntity, color bool) string {
	text = strings.Map(printable, text) // one rune for one: entity offsets stay valid
	if len(ents) == 0 {
		return text
	}
	units := utf16.Encode([]rune(text))
	starts := map[int][]int{} // offset -> entity indexes starting there
	ends := map[int][]int{}   // offset -> entity indexes ending there
	for i, e := range ents {
		if e.Offset < 0 || e.Length <= 0 || e.Offset+e.Length > len(units) {
			continue
		}
		starts[e.Offset] = append(starts[e.Offset], i)
		ends[e.Offset+e.Length] = append(ends[e.Offset+e.Length], i)
	}
	var b strings.Builder
	active := map[int]bool{}
	applyStyles := func() {
		if !color {
			return
		}
		b.WriteString(ansiReset)
		for i := range ents {
			if active[i] {
				b.WriteString(ansi[ents[i].Type])
			}
		}
	}
	for pos := 0; pos <= len(units); pos++ {
		changed := false
		for _, i := range ends[pos] {
			delete(active, i)
			changed = true
			e := ents[i]
			if e.Type == "text_link" && e.URL != "" {
				label := string(utf16.Decode(units[e.Offset : e.Offset+e.Length]))
				if label != e.URL {
					if color {
						b.WriteString(ansiReset)
					}
					b.WriteString(" (" + e.URL + ")")
				}
			}
		}
		for _, i := range starts[pos] {
			active[i] = true
			changed = true
		}
		if changed {
			applyStyles()
		}
		if pos == len(units) {
			break
		}
		// Copy up to the next boundary.
		next := pos + 1
		for next < len(units) && len(starts[next]) == 0 && len(ends[next]) == 0 {
			next++
		}
		b.WriteString(string(utf16.Decode(units[pos:next])))
		pos = next - 1
	}
	return b.String()
}

// printable replaces control characters (an escape sequence in a message
// must not drive the terminal) with U+FFFD; line breaks and tabs stay.
func printable(r rune) rune {
	if r != '\n' && r != '\t' && unicode.IsControl(r) {
		return '\uFFFD'
	}
	return r
}

// clean makes text from the bot safe to print.
func clean(s string) string { return strings.Map(printable, s) }

// fileLines shows a delivered file's contents: text line by line (at most
// maxFileLines), or a note for binary data.
func fileLines(data []byte) []string {
	if len(data) == 0 {
		return []string{"| (empty)"}
	}
	if !utf8.Valid(data) || strings.ContainsRune(string(data), 0) {
		return []string{"| (binary content, not shown)"}
	}
	lines := strings.Split(strings.TrimRight(string(data), "\r\n"), "\n")
	var out []string
	for i, l := range lines {
		if i == maxFileLines {
			out = append(out, fmt.Sprintf("| ... %d more lines", len(lines)-maxFileLines))
			break
		}
		out = append(out, "| "+clean(strings.TrimRight(l, "\r")))
	}
	return out
}

// wrapBlock wraps the lines of a block at width columns, at spaces,
// continuing a chat line under its text (after the 5-column mark) and any
// other line after 4 spaces, so long messages keep their shape in a narrow
// terminal.
func wrapBlock(block string, width int) string {
	var b strings.Builder
	lines := strings.SplitAfter(block, "\n")
	for _, line := range lines {
		body := strings.TrimSuffix(line, "\n")
		cont := "    "
		for _, mark := range []string{botMark, youMark, sysMark, indent} {
			if strings.HasPrefix(body, mark) {
				cont = indent
				break
			}
		}
		b.WriteString(wrapLine(body, width, cont))
		if strings.HasSuffix(line, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// wrapLine breaks one line at spaces so no piece is wider than width,
// starting each continuation with cont. A word wider than the room is left
// whole (the terminal breaks it). ANSI escapes take no room.
func wrapLine(line string, width int, cont string) string {
	if visibleWidth(line) <= width {
		return line
	}
	words := strings.Split(line, " ")
	var b strings.Builder
	col := 0
	for i, w := range words {
		ww := visibleWidth(w)
		switch {
		case i == 0:
		case col+1+ww > width && col > visibleWidth(cont):
			b.WriteString("\n" + cont)
			col = visibleWidth(cont)
			b.WriteString(w)
			col += ww
			continue
		default:
			b.WriteByte(' ')
			col++
		}
		b.WriteString(w)
		col += ww
	}
	return b.String()
}

// visibleWidth estimates the columns s takes in a terminal: ANSI escapes
// take none, combining marks and emoji modifiers none, East Asian wide
// characters and emoji two. It errs on the wide side, so wrapping is early
// rather than late.
func visibleWidth(s string) int {
	n := 0
	inEsc := false
	for _, r := range s {
		switch {
		case inEsc:
			if r >= '@' && r <= '~' && r != '[' {
				inEsc = false
			}
		case r == 0x1b:
			inEsc = true
		case r == 0x200d || r >= 0xfe00 && r <= 0xfe0f || unicode.Is(unicode.Mn, r):
		case r >= 0x1100 && r <= 0x115f, r >= 0x2300 && r <= 0x2bff, r >= 0x2e80 && r <= 0xa4cf,
			r >= 0xac00 && r <= 0xd7a3, r >= 0xf900 && r <= 0xfaff, r >= 0xfe30 && r <= 0xfe4f,
			r >= 0xff00 && r <= 0xff60, r >= 0xffe0 && r <= 0xffe6, r >= 0x1f000:
			n += 2
		default:
			n++
		}
	}
	return n
}

// starsText formats an amount of Stars for the demo's own lines.
func starsText(n int64) string {
	return locales.Number(locales.En, n) + " Stars"
}

func sizeText(n int64) string {
	if n == 1 {
		return "1 byte"
	}
	return locales.Number(locales.En, n) + " bytes"
}
