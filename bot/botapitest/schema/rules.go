package schema

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Value rules: the documented limits that the schema's types cannot express.
// Character limits count UTF-16 code units (Telegram's unit for text), after
// HTML parsing when parse_mode is HTML; Markdown and MarkdownV2 texts are not
// parsed, so their markup counts too (stricter than Telegram).

// maxButtons is how many buttons an inline keyboard may have in all.
const maxButtons = 100

var parseModes = map[string]bool{"HTML": true, "MarkdownV2": true, "Markdown": true}

// buttonActions are InlineKeyboardButton's optional fields of which exactly
// one must be used.
var buttonActions = []string{
	"url", "callback_data", "web_app", "login_url", "switch_inline_query",
	"switch_inline_query_current_chat", "switch_inline_query_chosen_chat",
	"copy_text", "callback_game", "pay",
}

var (
	commandRe     = regexp.MustCompile(`^[a-z0-9_]{1,32}$`)
	secretTokenRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)
	currencyRe    = regexp.MustCompile(`^[A-Z]{3}$`)
	langRe        = regexp.MustCompile(`^[a-z]{2}$`)
	startParamRe  = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
)

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// parseModeProblems checks every "*parse_mode" field of an object (or of the
// request) and, for HTML, the text it applies to: parse_mode applies to
// text/caption/message_text/quote, question_parse_mode to question, and so on.
func parseModeProblems(path string, m map[string]any) []problem {
	var ps []problem
	for _, k := range sortedKeys(m) {
		if !strings.HasSuffix(k, "parse_mode") {
			continue
		}
		mode, ok := m[k].(string)
		if !ok || mode == "" {
			continue
		}
		if !parseModes[mode] {
			ps = append(ps, problem{path: joinPath(path, k), msg: fmt.Sprintf("unsupported parse mode %q, want HTML, MarkdownV2 or Markdown", mode)})
			continue
		}
		if mode != "HTML" {
			continue
		}
		targets := []string{"text", "caption", "message_text", "quote"}
		if prefix := strings.TrimSuffix(k, "parse_mode"); prefix != "" {
			targets = []string{strings.TrimSuffix(prefix, "_")}
		}
		for _, t := range targets {
			s, ok := m[t].(string)
			if !ok {
				continue
			}
			if _, _, err := ParseHTML(s); err != nil {
				ps = append(ps, problem{path: joinPath(path, t), msg: "can't parse entities: " + err.Error()})
			}
		}
	}
	return ps
}

// objectRules applies the value rules of nested object types.
func objectRules(path, typeName string, m map[string]any) []problem {
	ps := parseModeProblems(path, m)
	switch typeName {
	case "InlineKeyboardButton":
		ps = append(ps, buttonProblems(path, m)...)
	case "InlineKeyboardMarkup":
		rows, _ := m["inline_keyboard"].([]any)
		n := 0
		for _, r := range rows {
			row, _ := r.([]any)
			n += len(row)
		}
		if n > maxButtons {
			ps = append(ps, problem{path: joinPath(path, "inline_keyboard"), msg: fmt.Sprintf("at most %d buttons, got %d (Telegram answers \"BUTTONS_TOO_MUCH\")", maxButtons, n)})
		}
	case "InputMediaPhoto", "InputMediaVideo", "InputMediaAnimation", "InputMediaAudio", "InputMediaDocument":
		if c, ok := m["caption"].(string); ok {
			mode, _ := m["parse_mode"].(string)
			ps = append(ps, textLenProblems(joinPath(path, "caption"), c, mode, 0, 1024, "", "message caption is too long")...)
		}
	case "InlineQueryResultsButton":
		ps = append(ps, resultsButtonProblems(path, m)...)
	case "InputTextMessageContent":
		t, _ := m["message_text"].(string)
		mode, _ := m["parse_mode"].(string)
		ps = append(ps, textLenProblems(joinPath(path, "message_text"), t, mode, 1, 4096, "message text is empty", "message is too long")...)
	case "BotCommand":
		if c, _ := m["command"].(string); !commandRe.MatchString(c) {
			ps = append(ps, problem{path: joinPath(path, "command"), msg: fmt.Sprintf("command %q must be 1-32 characters of lowercase English letters, digits and underscores", c)})
		}
		if d, _ := m["description"].(string); UTF16Len(d) < 1 || UTF16Len(d) > 256 {
			ps = append(ps, problem{path: joinPath(path, "description"), msg: fmt.Sprintf("must be 1-256 characters, got %d", UTF16Len(d))})
		}
	}
	return ps
}

// resultsButtonProblems checks the button above inline results: exactly
// one of web_app and start_parameter, a start parameter of Telegram's
// alphabet.
func resultsButtonProblems(path string, m map[string]any) []problem {
	_, app := m["web_app"]
	sp, start := m["start_parameter"].(string)
	switch {
	case app == start:
		return []problem{{path: path, msg: "exactly one of web_app and start_parameter is required"}}
	case start && !startParamRe.MatchString(sp):
		return []problem{{path: joinPath(path, "start_parameter"), msg: fmt.Sprintf("must be 1-64 characters of A-Z, a-z, 0-9, _ and -, got %q", sp)}}
	}
	return nil
}

// inlineResultsProblems checks an inline query's results (each result's
// fields are checked by its type): at most 50, ids of 1-64 bytes, unique;
// a photo's caption within 1,024 characters.
func inlineResultsProblems(results []any) []problem {
	var ps []problem
	if len(results) > 50 {
		ps = append(ps, problem{path: "results", msg: fmt.Sprintf("at most 50 results, got %d (Telegram answers \"RESULTS_TOO_MUCH\")", len(results))})
	}
	seen := map[string]bool{}
	for i, r := range results {
		m, _ := r.(map[string]any)
		id, _ := m["id"].(string)
		p := indexPath("results", i)
		ps = append(ps, lenRange(p+".id", id, 1, 64, "bytes")...)
		if seen[id] {
			ps = append(ps, problem{path: p + ".id", msg: fmt.Sprintf("result id %q used twice (Telegram answers \"RESULT_ID_DUPLICATE\")", id)})
		}
		seen[id] = true
		if c, ok := m["caption"].(string); ok {
			mode, _ := m["parse_mode"].(string)
			ps = append(ps, textLenProblems(p+".caption", c, mode, 0, 1024, "", "message caption is too long")...)
		}
	}
	return ps
}

func buttonProblems(path string, m map[string]any) []problem {
	var ps []problem
	if cd, ok := m["callback_data"].(string); ok && (len(cd) < 1 || len(cd) > 64) {
		ps = append(ps, problem{path: joinPath(path, "callback_data"), msg: fmt.Sprintf("must be 1-64 bytes, got %d bytes", len(cd))})
	}
	var set []string
	for _, a := range buttonActions {
		v, ok := m[a]
		if !ok {
			continue
		}
		switch a {
		case "copy_text":
			// go-telegram/bot always sends copy_text {"text":""}; Telegram
			// ignores it when another action is set.
			ct, _ := v.(map[string]any)
			text, _ := ct["text"].(string)
			if text == "" {
				continue
			}
			if n := UTF16Len(text); n > 256 {
				ps = append(ps, problem{path: joinPath(path, "copy_text.text"), msg: fmt.Sprintf("must be 1-256 characters, got %d", n)})
			}
		case "pay":
			if b, _ := v.(bool); !b {
				continue
			}
		}
		set = append(set, a)
	}
	switch {
	case len(set) == 0:
		ps = append(ps, problem{path: path, msg: "inline keyboard button sets no action: exactly one of " + strings.Join(buttonActions, ", ") +
			` is required (Telegram answers "BUTTON_COPY_TEXT_INVALID" when go-telegram/bot's empty copy_text is all there is)`})
	case len(set) > 1:
		ps = append(ps, problem{path: path, msg: "inline keyboard button sets several actions (" + strings.Join(set, ", ") + "); exactly one is allowed"})
	}
	return ps
}

// textLenProblems checks a text's length after parsing in UTF-16 code units.
func textLenProblems(field, text, parseMode string, lo, hi int, emptyMsg, longMsg string) []problem {
	plain := text
	after := ""
	if parseMode == "HTML" {
		p, _, err := ParseHTML(text)
		if err != nil {
			return nil // reported by parseModeProblems
		}
		plain, after = p, " after HTML parsing"
	}
	n := UTF16Len(plain)
	if lo > 0 && strings.TrimSpace(plain) == "" {
		return []problem{{path: field, msg: emptyMsg}}
	}
	if n > hi {
		return []problem{{path: field, msg: fmt.Sprintf("%s: %d characters (UTF-16 code units%s), at most %d allowed", longMsg, n, after, hi)}}
	}
	return nil
}

func lenRange(field, s string, lo, hi int, unit string) []problem {
	n := UTF16Len(s)
	if unit == "bytes" {
		n = len(s)
	}
	if n < lo || n > hi {
		return []problem{{path: field, msg: fmt.Sprintf("must be %d-%d %s, got %d", lo, hi, unit, n)}}
	}
	return nil
}

// methodRules applies the value rules of a request's top-level parameters,
// already decoded (see Call.Params).
func methodRules(method string, p map[string]any) []problem {
	ps := parseModeProblems("", p)
	mode, _ := p["parse_mode"].(string)

	if s, ok := p["chat_id"].(string); ok && (!strings.HasPrefix(s, "@") || len(s) < 2) {
		ps = append(ps, problem{path: "chat_id", msg: fmt.Sprintf("must be an Integer or \"@username\", got %q", s)})
	}
	if c, ok := p["caption"].(string); ok {
		ps = append(ps, textLenProblems("caption", c, mode, 0, 1024, "", "message caption is too long")...)
	}
	if strings.HasPrefix(method, "editMessage") || method == "stopMessageLiveLocation" {
		_, inline := p["inline_message_id"]
		_, chat := p["chat_id"]
		_, msg := p["message_id"]
		if !inline && !(chat && msg) {
			ps = append(ps, problem{path: "message_id", msg: "chat_id and message_id are required unless inline_message_id is given"})
		}
	}

	switch method {
	case "sendMessage", "editMessageText":
		if t, ok := p["text"].(string); ok {
			ps = append(ps, textLenProblems("text", t, mode, 1, 4096, "message text is empty", "message is too long")...)
		} else if _, rich := p["rich_message"]; !rich && method == "editMessageText" {
			ps = append(ps, problem{path: "text", msg: "missing required field (text is required unless rich_message is given)"})
		}
	case "answerCallbackQuery":
		if t, ok := p["text"].(string); ok && UTF16Len(t) > 200 {
			ps = append(ps, problem{path: "text", msg: fmt.Sprintf("must be 0-200 characters, got %d", UTF16Len(t))})
		}
	case "sendInvoice", "createInvoiceLink":
		ps = append(ps, invoiceProblems(p)...)
	case "answerPreCheckoutQuery":
		if ok, _ := p["ok"].(bool); !ok {
			if msg, _ := p["error_message"].(string); strings.TrimSpace(msg) == "" {
				ps = append(ps, problem{path: "error_message", msg: "required when ok is false"})
			}
		}
	case "setMyCommands":
		if cmds, ok := p["commands"].([]any); ok && len(cmds) > 100 {
			ps = append(ps, problem{path: "commands", msg: fmt.Sprintf("at most 100 commands, got %d", len(cmds))})
		}
	case "getUpdates", "getStarTransactions":
		if l, ok := p["limit"].(int64); ok && (l < 1 || l > 100) {
			ps = append(ps, problem{path: "limit", msg: fmt.Sprintf("must be 1-100, got %d", l)})
		}
	case "answerInlineQuery":
		results, _ := p["results"].([]any)
		ps = append(ps, inlineResultsProblems(results)...)
		if o, ok := p["next_offset"].(string); ok && len(o) > 64 {
			ps = append(ps, problem{path: "next_offset", msg: fmt.Sprintf("must be at most 64 bytes, got %d", len(o))})
		}
		if c, ok := p["cache_time"].(int64); ok && c < 0 {
			ps = append(ps, problem{path: "cache_time", msg: fmt.Sprintf("must not be negative, got %d", c)})
		}
	case "savePreparedInlineMessage":
		if r, ok := p["result"].(map[string]any); ok {
			ps = append(ps, inlineResultsProblems([]any{r})...)
		}
	case "setWebhook":
		if s, ok := p["secret_token"].(string); ok && !secretTokenRe.MatchString(s) {
			ps = append(ps, problem{path: "secret_token", msg: "must be 1-256 characters of A-Z, a-z, 0-9, _ and -"})
		}
	}
	switch method {
	case "setMyCommands", "getMyCommands", "deleteMyCommands":
		if l, ok := p["language_code"].(string); ok && l != "" && !langRe.MatchString(l) {
			ps = append(ps, problem{path: "language_code", msg: fmt.Sprintf("must be a two-letter ISO 639-1 code or empty, got %q", l)})
		}
	}
	return ps
}

func invoiceProblems(p map[string]any) []problem {
	var ps []problem
	title, _ := p["title"].(string)
	desc, _ := p["description"].(string)
	payload, _ := p["payload"].(string)
	ps = append(ps, lenRange("title", title, 1, 32, "characters")...)
	ps = append(ps, lenRange("description", desc, 1, 255, "characters")...)
	ps = append(ps, lenRange("payload", payload, 1, 128, "bytes")...)
	cur, _ := p["currency"].(string)
	if !currencyRe.MatchString(cur) {
		ps = append(ps, problem{path: "currency", msg: fmt.Sprintf("must be a three-letter ISO 4217 code or XTR, got %q", cur)})
	}
	prices, _ := p["prices"].([]any)
	token, _ := p["provider_token"].(string)
	if cur == "XTR" {
		if token != "" {
			ps = append(ps, problem{path: "provider_token", msg: "must be empty or absent for payments in Telegram Stars (XTR)"})
		}
		if len(prices) != 1 {
			ps = append(ps, problem{path: "prices", msg: fmt.Sprintf("must contain exactly one item for payments in Telegram Stars (XTR), got %d", len(prices))})
		}
		for i, pr := range prices {
			m, _ := pr.(map[string]any)
			if a, _ := m["amount"].(float64); a < 1 || a != float64(int64(a)) {
				ps = append(ps, problem{path: indexPath("prices", i) + ".amount", msg: fmt.Sprintf("must be a positive whole number of Stars, got %v", m["amount"])})
			}
		}
		if _, ok := p["max_tip_amount"]; ok {
			ps = append(ps, problem{path: "max_tip_amount", msg: "tips are not supported for payments in Telegram Stars (XTR)"})
		}
	} else {
		if token == "" {
			ps = append(ps, problem{path: "provider_token", msg: fmt.Sprintf("required for currency %q (only XTR goes without a provider)", cur)})
		}
		if len(prices) == 0 {
			ps = append(ps, problem{path: "prices", msg: "must not be empty"})
		}
	}
	if rm, ok := p["reply_markup"].(map[string]any); ok {
		rows, _ := rm["inline_keyboard"].([]any)
		if len(rows) > 0 {
			first, _ := rows[0].([]any)
			var btn map[string]any
			if len(first) > 0 {
				btn, _ = first[0].(map[string]any)
			}
			if pay, _ := btn["pay"].(bool); !pay {
				ps = append(ps, problem{path: "reply_markup.inline_keyboard[0][0]", msg: "the first button of an invoice keyboard must be a Pay button"})
			}
		}
	}
	return ps
}
