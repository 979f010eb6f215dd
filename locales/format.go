package locales

import (
	"html"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// nbsp is the no-break space (U+00A0): the Russian and Ukrainian digit
// group separator, and the space between an amount and its unit ("$", "⭐")
// in every language, so that Telegram never wraps a number apart.
const nbsp = "\u00a0"

// starSign is the unit shown after an amount of Telegram Stars.
const starSign = "⭐"

type numberFormat struct {
	group   string // between groups of three integer digits
	decimal string // between the integer and the fraction
}

func formatFor(lang Lang) numberFormat {
	switch lang {
	case Ru, Uk:
		return numberFormat{group: nbsp, decimal: ","}
	}
	return numberFormat{group: ",", decimal: "."}
}

// Number formats an integer with the language's digit grouping: en
// "-12,345", ru and uk "-12 345" grouped with a no-break space (U+00A0).
// Unsupported languages format as English.
func Number(lang Lang, n int64) string {
	return localizeNumeral(lang, strconv.FormatInt(n, 10))
}

// Decimal formats d rounded to places fractional digits (half away from
// zero, so 0.125 -> "0.13" and -0.125 -> "-0.13"), always showing exactly
// places digits: en "1,234.50", ru and uk "1 234,50". A negative places
// counts as 0. A value that rounds to zero has no minus sign.
func Decimal(lang Lang, d decimal.Decimal, places int32) string {
	if places < 0 {
		places = 0
	}
	return localizeNumeral(lang, d.StringFixed(places))
}

// SignedMoney is Money with an explicit sign, as a ledger shows a
// movement: "+$5.00", "−$5.00" (a true minus sign).
func SignedMoney(lang Lang, usd decimal.Decimal) string {
	if usd.IsNegative() {
		return "−" + Money(lang, usd.Neg())
	}
	return "+" + Money(lang, usd)
}

// Money formats a USD amount with two decimals, rounded half away from
// zero (half-up by magnitude: 1.005 -> 1.01): en "$1,234.50" and
// "-$1,234.50", ru and uk "1 234,50 $" and "-1 234,50 $" (no-break spaces).
func Money(lang Lang, usd decimal.Decimal) string {
	r := usd.Round(2)
	sign := ""
	if r.Sign() < 0 {
		sign = "-"
	}
	num := Decimal(lang, r.Abs(), 2)
	switch lang {
	case Ru, Uk:
		return sign + num + nbsp + "$"
	}
	return sign + "$" + num
}

// Stars formats an amount of Telegram Stars: en "1,250 ⭐", ru and uk
// "1 250 ⭐", the star joined to the number by a no-break space.
func Stars(lang Lang, n int64) string {
	return Number(lang, n) + nbsp + starSign
}

var shortMonths = map[Lang][12]string{
	En: {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"},
	// CLDR abbreviated month names in the genitive (format) context.
	Ru: {"янв.", "февр.", "мар.", "апр.", "мая", "июн.", "июл.", "авг.", "сент.", "окт.", "нояб.", "дек."},
	Uk: {"січ.", "лют.", "бер.", "квіт.", "трав.", "черв.", "лип.", "серп.", "вер.", "жовт.", "лист.", "груд."},
}

// displayTime returns t in the zone it is shown in: a time in time.Local
// (what time.Now and time.Unix return) is shown in UTC, since the server's
// zone means nothing to a buyer; any other location is kept.
func displayTime(t time.Time) time.Time {
	if t.Location() == time.Local {
		return t.UTC()
	}
	return t
}

// Date formats the calendar date of t: en "Nov 22, 2026", ru
// "22 нояб. 2026", uk "22 лист. 2026". A time in time.Local is shown in UTC;
// a time carrying any other location is shown in that location.
func Date(lang Lang, t time.Time) string {
	t = displayTime(t)
	day := strconv.Itoa(t.Day())
	year := strconv.Itoa(t.Year())
	switch lang {
	case Ru, Uk:
		return day + " " + shortMonths[lang][t.Month()-1] + " " + year
	}
	return shortMonths[En][t.Month()-1] + " " + day + ", " + year
}

// DateTime formats t as Date followed by the 24-hour time: en
// "Nov 22, 2026 14:05", ru "22 нояб. 2026 14:05", uk "22 лист. 2026 14:05".
// Zones are handled as in Date.
func DateTime(lang Lang, t time.Time) string {
	t = displayTime(t)
	return Date(lang, t) + " " + t.Format("15:04")
}

// localizeNumeral turns a plain numeral ("-1234.5", as strconv and
// decimal print them) into the language's form ("-1,234.5", "-1 234,5").
func localizeNumeral(lang Lang, s string) string {
	f := formatFor(lang)
	sign := ""
	if rest, ok := strings.CutPrefix(s, "-"); ok {
		sign, s = "-", rest
	}
	intPart, frac, hasFrac := strings.Cut(s, ".")
	out := sign + groupDigits(intPart, f.group)
	if hasFrac {
		out += f.decimal + frac
	}
	return out
}

// groupDigits inserts sep between groups of three digits, from the right.
func groupDigits(digits, sep string) string {
	if len(digits) <= 3 {
		return digits
	}
	var b strings.Builder
	b.Grow(len(digits) + len(digits)/3*len(sep))
	head := len(digits) % 3
	if head == 0 {
		head = 3
	}
	b.WriteString(digits[:head])
	for i := head; i < len(digits); i += 3 {
		b.WriteString(sep)
		b.WriteString(digits[i : i+3])
	}
	return b.String()
}

// Plain turns a catalog's Telegram HTML text into plain text: tags
// dropped, entities decoded (for pages that show text, not HTML). Every
// value put into a catalog text was escaped, so no "<" of a value is a tag.
func Plain(s string) string {
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
