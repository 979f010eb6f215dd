package locales

import (
	"math"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

const nb = "\u00a0" // the no-break space ru and uk group digits with

func TestNumber(t *testing.T) {
	tests := []struct {
		n      int64
		en, ru string // uk formats like ru
	}{
		{0, "0", "0"},
		{7, "7", "7"},
		{999, "999", "999"},
		{1000, "1,000", "1" + nb + "000"},
		{12345, "12,345", "12" + nb + "345"},
		{123456, "123,456", "123" + nb + "456"},
		{1234567, "1,234,567", "1" + nb + "234" + nb + "567"},
		{-5, "-5", "-5"},
		{-1234, "-1,234", "-1" + nb + "234"},
		{-123456, "-123,456", "-123" + nb + "456"},
		{math.MaxInt64, "9,223,372,036,854,775,807", "9 223 372 036 854 775 807"},
		{math.MinInt64, "-9,223,372,036,854,775,808", "-9 223 372 036 854 775 808"},
	}
	for _, tt := range tests {
		wantRu := replaceSpaces(tt.ru)
		if got := Number(En, tt.n); got != tt.en {
			t.Errorf("Number(en, %d) = %q, want %q", tt.n, got, tt.en)
		}
		for _, lang := range []Lang{Ru, Uk} {
			if got := Number(lang, tt.n); got != wantRu {
				t.Errorf("Number(%s, %d) = %q, want %q", lang, tt.n, got, wantRu)
			}
		}
		if got := Number("de", tt.n); got != tt.en {
			t.Errorf("Number(de, %d) = %q, want the English %q", tt.n, got, tt.en)
		}
	}
}

// replaceSpaces lets the tables write the no-break space as a plain one.
func replaceSpaces(s string) string {
	out := []rune(s)
	for i, r := range out {
		if r == ' ' {
			out[i] = '\u00a0'
		}
	}
	return string(out)
}

func TestDecimal(t *testing.T) {
	tests := []struct {
		d      string
		places int32
		en, ru string
	}{
		{"0", 2, "0.00", "0,00"},
		{"1234.5", 2, "1,234.50", "1 234,50"},
		{"1234.5", 0, "1,235", "1 235"}, // half away from zero
		{"1234.4", 0, "1,234", "1 234"},
		{"-1234.567", 2, "-1,234.57", "-1 234,57"},
		{"0.125", 2, "0.13", "0,13"},
		{"-0.125", 2, "-0.13", "-0,13"},
		{"-0.001", 2, "0.00", "0,00"}, // no "-0.00"
		{"0.5", 4, "0.5000", "0,5000"},
		{"1234567.891", 1, "1,234,567.9", "1 234 567,9"},
		{"12.34", -1, "12", "12"}, // negative places count as 0
		{"123456789012345678901234.5", 2, "123,456,789,012,345,678,901,234.50", "123 456 789 012 345 678 901 234,50"},
	}
	for _, tt := range tests {
		d := decimal.RequireFromString(tt.d)
		if got := Decimal(En, d, tt.places); got != tt.en {
			t.Errorf("Decimal(en, %s, %d) = %q, want %q", tt.d, tt.places, got, tt.en)
		}
		wantRu := replaceSpaces(tt.ru)
		for _, lang := range []Lang{Ru, Uk} {
			if got := Decimal(lang, d, tt.places); got != wantRu {
				t.Errorf("Decimal(%s, %s, %d) = %q, want %q", lang, tt.d, tt.places, got, wantRu)
			}
		}
	}
}

// TestMoney also pins the rounding: USD is rounded to cents half away from
// zero (half-up by magnitude), and an amount that rounds to zero has no sign.
func TestMoney(t *testing.T) {
	tests := []struct {
		usd    string
		en, ru string
	}{
		{"0", "$0.00", "0,00 $"},
		{"0.1", "$0.10", "0,10 $"},
		{"1234.5", "$1,234.50", "1 234,50 $"},
		{"1234.50", "$1,234.50", "1 234,50 $"},
		{"-1234.5", "-$1,234.50", "-1 234,50 $"},
		{"1.005", "$1.01", "1,01 $"},  // half-up
		{"1.0049", "$1.00", "1,00 $"}, // below half
		{"2.675", "$2.68", "2,68 $"},  // exact in decimal, unlike float
		{"-1.005", "-$1.01", "-1,01 $"},
		{"-0.004", "$0.00", "0,00 $"},
		{"-0.005", "-$0.01", "-0,01 $"},
		{"999.995", "$1,000.00", "1 000,00 $"},
		{"1234567890.125", "$1,234,567,890.13", "1 234 567 890,13 $"},
	}
	for _, tt := range tests {
		d := decimal.RequireFromString(tt.usd)
		if got := Money(En, d); got != tt.en {
			t.Errorf("Money(en, %s) = %q, want %q", tt.usd, got, tt.en)
		}
		wantRu := replaceSpaces(tt.ru)
		for _, lang := range []Lang{Ru, Uk} {
			if got := Money(lang, d); got != wantRu {
				t.Errorf("Money(%s, %s) = %q, want %q", lang, tt.usd, got, wantRu)
			}
		}
	}
}

func TestStars(t *testing.T) {
	tests := []struct {
		lang Lang
		n    int64
		want string
	}{
		{En, 1250, "1,250" + nb + "⭐"},
		{Ru, 1250, "1" + nb + "250" + nb + "⭐"},
		{Uk, 50, "50" + nb + "⭐"},
		{En, 0, "0" + nb + "⭐"},
		{Ru, -100000, "-100" + nb + "000" + nb + "⭐"},
	}
	for _, tt := range tests {
		if got := Stars(tt.lang, tt.n); got != tt.want {
			t.Errorf("Stars(%s, %d) = %q, want %q", tt.lang, tt.n, got, tt.want)
		}
	}
}

func TestDateTime(t *testing.T) {
	nov := time.Date(2026, time.November, 22, 14, 5, 0, 0, time.UTC)
	may := time.Date(2027, time.May, 3, 9, 7, 0, 0, time.UTC)
	kyiv := time.FixedZone("UTC+2", 2*3600)
	late := time.Date(2026, time.December, 31, 23, 30, 0, 0, time.UTC)

	tests := []struct {
		name     string
		lang     Lang
		t        time.Time
		date, dt string
	}{
		{"en", En, nov, "Nov 22, 2026", "Nov 22, 2026 14:05"},
		{"ru", Ru, nov, "22 нояб. 2026", "22 нояб. 2026 14:05"},
		{"uk", Uk, nov, "22 лист. 2026", "22 лист. 2026 14:05"},
		{"en may", En, may, "May 3, 2027", "May 3, 2027 09:07"},
		{"ru may genitive", Ru, may, "3 мая 2027", "3 мая 2027 09:07"},
		{"uk may", Uk, may, "3 трав. 2027", "3 трав. 2027 09:07"},
		{"unsupported as en", "de", nov, "Nov 22, 2026", "Nov 22, 2026 14:05"},
		// A time.Local time is shown in UTC whatever the server's zone is.
		{"local shown in UTC", Ru, nov.Local(), "22 нояб. 2026", "22 нояб. 2026 14:05"},
		{"unix shown in UTC", En, time.Unix(nov.Unix(), 0), "Nov 22, 2026", "Nov 22, 2026 14:05"},
		// A time carrying a location is shown in it, across midnight too.
		{"own location", Uk, late.In(kyiv), "1 січ. 2027", "1 січ. 2027 01:30"},
		{"utc stays utc", En, late, "Dec 31, 2026", "Dec 31, 2026 23:30"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Date(tt.lang, tt.t); got != tt.date {
				t.Errorf("Date = %q, want %q", got, tt.date)
			}
			if got := DateTime(tt.lang, tt.t); got != tt.dt {
				t.Errorf("DateTime = %q, want %q", got, tt.dt)
			}
		})
	}
}

func TestMonthNames(t *testing.T) {
	for _, lang := range Supported() {
		for i, m := range shortMonths[lang] {
			if m == "" {
				t.Errorf("%s month %d has no name", lang, i+1)
			}
		}
	}
}
