package lines

import (
	"regexp"
	"shopbot/flows"
	"shopbot/flows/shop"
	"strings"
)

// The recipient step of the Telegram lines (Stars, Premium): a Telegram
// username, typed or the buyer's own.

// usernameRe is Telegram's username rule: 5 to 32 letters, digits and
// underscores, starting with a letter, not ending with an underscore.
var usernameRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{3,30}[A-Za-z0-9]$`)

// ParseUsername reads a Telegram username given as @name, name or a
// t.me/name link and returns it without the @.
func ParseUsername(text string) (string, bool) {
	t := strings.TrimSpace(text)
	cut := func(p string) bool {
		if len(t) >= len(p) && strings.EqualFold(t[:len(p)], p) {
			t = t[len(p):]
			return true
		}
		return false
	}
	_ = cut("https://") || cut("http://")
	_ = cut("www.")
	if cut("t.me/") || cut("telegram.me/") || cut("telegram.dog/") {
		t = strings.TrimSuffix(t, "/")
	}
	t = strings.TrimPrefix(t, "@")
	if !usernameRe.MatchString(t) || strings.Contains(t, "__") {
		return "", false
	}
	return t, true
}

// usernameAnswer reads a recipient typed (ParseUsername), or says why it
// is not a username: the chat's recipient step and the Mini App's field.
func usernameAnswer(env *flows.Env, text string) (name, reason string) {
	n, ok := ParseUsername(text)
	if !ok {
		return "", env.T("user.bad")
	}
	return n, ""
}

// Messenger steps.
const (
	msUser = "user"
	msQty  = "qty"
	msPlan = "plan"
)

// keyUser is the recipient's @username (without the @) of Stars and
// Premium.
const keyUser flows.Key = "user"

// askUser handles the recipient step shared by Stars and Premium: typed
// text or the "for me" button. It reports false when ev is not an answer.
func askUser(env *flows.Env, s *flows.Session, ev flows.Event) (reason string, ok bool) {
	var name string
	switch {
	case ev.Kind == flows.EvButton && ev.Button.Action == shop.ActForMe:
		if env.User.Username == "" {
			return "", false
		}
		name = env.User.Username
	case ev.Kind != flows.EvButton:
		n, reason := usernameAnswer(env, ev.Text)
		if reason != "" {
			return reason, true
		}
		name = n
	default:
		return "", false
	}
	s.Set(keyUser, name)
	return "", true
}

// userScreen asks for the recipient's @username.
func userScreen(env *flows.Env, key string) *flows.Screen {
	sc := &flows.Screen{Text: env.T(key)}
	if u := env.User.Username; u != "" && usernameRe.MatchString(u) {
		sc.Rows = append(sc.Rows, []flows.Button{{Text: env.T("btn.for_me", "username", u), Action: shop.ActForMe}})
	}
	sc.Rows = append(sc.Rows, shop.NavRow(env))
	return sc
}
