package webapp

import (
	"html"
	"strings"

	"shopbot/flows"
	"shopbot/locales"
)

// The page's texts come from the shop's locales, like the chat's: the
// "webapp.*" keys, and a few the chat has already (order statuses). Texts
// are Telegram HTML in the catalogs; the page gets them as plain text,
// which it shows as text, never as markup.

// pageKeys are the keys beside "webapp.*" that the page shows as they are.
var pageKeys = []string{
	"catalog.stale", "catalog.empty",
	"order.status.paid", "order.status.placing", "order.status.placed", "order.status.delivered",
	"order.status.refunding", "order.status.refunded", "order.status.needs_review",
	"support.closed", "btn.close_ticket", "btn.helpdesk", "btn.terms_full",
}

// pageTexts are the texts the page shows in env's language, by key.
func pageTexts(env *flows.Env) map[string]string {
	out := map[string]string{}
	for _, k := range locales.Keys(locales.En) {
		if strings.HasPrefix(k, "webapp.") {
			out[k] = plain(env.T(k))
		}
	}
	for _, k := range pageKeys {
		out[k] = plain(env.T(k))
	}
	return out
}

// plain turns a Telegram HTML text into plain text: tags dropped, entities
// decoded. The catalogs' texts use only Telegram's few tags, and every
// value put into them was escaped, so no "<" of a value is a tag.
func plain(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			b.WriteString(s[i:])
			break
		}
		s = s[i+j+1:]
	}
	return html.UnescapeString(b.String())
}
