package admin

import (
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state"
)

// What a broadcast may carry and when it may go: its buttons (a deep link
// into the shop, a URL), its audience and its time, read from what the
// admin wrote and checked the same for the chat and the console.

// Limits of a broadcast's buttons and schedule.
const (
	MaxBroadcastButtons = 3
	maxButtonLabel      = 40
	// MaxScheduleAhead is how far ahead a broadcast may be scheduled.
	MaxScheduleAhead = 90 * 24 * time.Hour
)

// parseButtons reads buttons written one a line as "Label | target": the
// target is a deep link the shop opens (a line or a product:
// flows.ProductLine), the shop's own t.me/<bot>?start=<deep link> link,
// or an http(s) address. It returns the buttons, or the first line it
// could not read.
func parseButtons(text, botName string) ([]state.BroadcastButton, string) {
	var out []state.BroadcastButton
	for line := range strings.SplitSeq(strings.TrimSpace(text), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		b, ok := parseButton(line, botName)
		if !ok || len(out) == MaxBroadcastButtons {
			return nil, line
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		return nil, strings.TrimSpace(text)
	}
	return out, ""
}

func parseButton(line, botName string) (state.BroadcastButton, bool) {
	label, target, ok := strings.Cut(line, "|")
	label, target = strings.TrimSpace(label), strings.TrimSpace(target)
	if !ok || label == "" || utf8.RuneCountInString(label) > maxButtonLabel || target == "" {
		return state.BroadcastButton{}, false
	}
	b := state.BroadcastButton{Label: label}
	if link, ok := shopLink(target, botName); ok {
		b.Link = link
		return b, true
	}
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || len(target) > 1024 {
		return state.BroadcastButton{}, false
	}
	b.URL = u.String()
	return b, true
}

// shopLink reads target as a deep link into the shop: the deep link
// itself, or the bot's t.me link carrying one.
func shopLink(target, botName string) (string, bool) {
	if _, ok := flows.ProductLine(target); ok {
		return target, true
	}
	u, err := url.Parse(target)
	if err != nil || botName == "" {
		return "", false
	}
	host := strings.TrimPrefix(strings.ToLower(u.Host), "www.")
	if (host != "t.me" && host != "telegram.me") || !strings.EqualFold(strings.Trim(u.Path, "/"), botName) {
		return "", false
	}
	_, link := flows.ParseStart(u.Query().Get("start"))
	if _, ok := flows.ProductLine(link); !ok {
		return "", false
	}
	return link, true
}

// checkButtons checks buttons given as data (the console's): each is a
// deep link into the shop or an http(s) address, with a label. bad is the
// first refused button as "Label | target" (the one past the limit when
// there are too many); "" when all are good.
func checkButtons(bs []state.BroadcastButton, botName string) (out []state.BroadcastButton, bad string) {
	out = make([]state.BroadcastButton, 0, len(bs))
	for i, b := range bs {
		target := b.URL
		if b.Link != "" {
			target = b.Link
		}
		line := b.Label + " | " + target
		got, ok := parseButton(line, botName)
		if !ok || i >= MaxBroadcastButtons {
			return nil, line
		}
		out = append(out, got)
	}
	return out, ""
}

func encodeButtons(bs []state.BroadcastButton) string {
	if len(bs) == 0 {
		return ""
	}
	b, _ := json.Marshal(bs)
	return string(b)
}

func decodeButtons(s string) []state.BroadcastButton {
	var bs []state.BroadcastButton
	if s != "" {
		_ = json.Unmarshal([]byte(s), &bs)
	}
	return bs
}

// buttonRows are a broadcast's buttons as a buyer gets them, one a row: a
// deep link goes through the bot's t.me link tagged as broadcast id's
// (flows.CampaignPayload; "" leaves it untagged, for the admin's
// preview), a URL as it is. Without the bot's name (before getMe) a deep
// link cannot be made and is left out.
func buttonRows(bs []state.BroadcastButton, id, botName string) [][]flows.Button {
	var rows [][]flows.Button
	for _, b := range bs {
		switch {
		case b.URL != "":
			rows = append(rows, []flows.Button{{Text: b.Label, URL: b.URL}})
		case b.Link != "" && botName != "":
			payload := b.Link
			if id != "" {
				payload = flows.CampaignPayload(id, b.Link)
			}
			rows = append(rows, []flows.Button{{Text: b.Label, URL: "https://t.me/" + botName + "?start=" + payload}})
		}
	}
	return rows
}

// buttonsSummary lists a broadcast's buttons for the admin's screen.
func buttonsSummary(lang locales.Lang, bs []state.BroadcastButton) string {
	if len(bs) == 0 {
		return locales.T(lang, "bc.buttons_none")
	}
	parts := make([]string, len(bs))
	for i, b := range bs {
		target := b.URL
		if b.Link != "" {
			target = b.Link
		}
		parts[i] = "[" + locales.Escape(b.Label) + " → " + locales.Escape(target) + "]"
	}
	return strings.Join(parts, " ")
}

// parseWhen reads when to send: "2026-07-01 18:00" (UTC) or a delay
// "+30m", "+2h", "+1d" from now. It must be in the future, within
// MaxScheduleAhead.
func parseWhen(text string, now time.Time) (time.Time, bool) {
	text = strings.TrimSpace(text)
	var at time.Time
	if d, ok := strings.CutPrefix(text, "+"); ok && len(d) >= 2 {
		n, err := strconv.Atoi(d[:len(d)-1])
		unit := map[byte]time.Duration{'m': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour}[d[len(d)-1]]
		if err != nil || n <= 0 || unit == 0 {
			return time.Time{}, false
		}
		at = now.Add(time.Duration(n) * unit)
	} else {
		t, err := time.ParseInLocation("2006-01-02 15:04", text, time.UTC)
		if err != nil {
			return time.Time{}, false
		}
		at = t
	}
	at = at.Truncate(time.Minute)
	if !at.After(now) || at.Sub(now) > MaxScheduleAhead {
		return time.Time{}, false
	}
	return at, true
}

// checkAt checks a time the console sent: zero (now), or in the future
// within MaxScheduleAhead.
func checkAt(at, now time.Time) bool {
	return at.IsZero() || at.After(now) && at.Sub(now) <= MaxScheduleAhead
}

// checkAudience checks an audience against the shop: an enabled language,
// a product line.
func checkAudience(a state.Audience, langs []locales.Lang) bool {
	switch a.Kind {
	case state.AudienceLang:
		l, ok := locales.Parse(a.Lang)
		return ok && slices.Contains(langs, l) && string(l) == a.Lang
	case state.AudienceLine:
		return slices.ContainsFunc(flows.Lines, func(l flows.Line) bool { return l.Name == a.Line })
	}
	return true
}

// audienceName is an audience as the admin reads it.
func audienceName(lang locales.Lang, a state.Audience) string {
	switch a.Kind {
	case state.AudienceLang:
		name := a.Lang
		if l, ok := locales.Parse(a.Lang); ok {
			name = locales.LanguageName(l)
		}
		return locales.T(lang, "bc.aud.lang", "lang", name)
	case state.AudienceLine:
		for _, l := range flows.Lines {
			if l.Name == a.Line {
				return locales.T(lang, "bc.aud.line", "line", locales.T(lang, l.Label))
			}
		}
		return locales.T(lang, "bc.aud.line", "line", a.Line)
	case state.AudienceRecent, state.AudienceInactive:
		return locales.N(lang, "bc.aud."+a.Kind, int64(a.Days))
	case "":
		return locales.T(lang, "bc.aud.all")
	}
	return locales.T(lang, "bc.aud."+a.Kind)
}

// textLimit is how long a broadcast's text may be: a caption's limit with
// media, a message's without.
func textLimit(media string) int {
	if media != "" {
		return state.MaxCaption
	}
	return state.MaxBroadcastText
}

// fitsText reports whether plain (the admin's text, before escaping) fits
// a broadcast of media.
func fitsText(plain, media string) bool {
	return utf8.RuneCountInString(plain) <= textLimit(media)
}

// whenText is when a broadcast goes, for the admin: a UTC time.
func whenText(at time.Time) string { return at.UTC().Format("2006-01-02 15:04") }
