package locales

import (
	"math"
	"testing"
)

func TestPluralForm(t *testing.T) {
	tests := []struct {
		n      int64
		en, ru string // uk follows the same rule as ru
	}{
		{0, "other", "many"},
		{1, "one", "one"},
		{2, "other", "few"},
		{4, "other", "few"},
		{5, "other", "many"},
		{11, "other", "many"},
		{12, "other", "many"},
		{14, "other", "many"},
		{21, "other", "one"},
		{22, "other", "few"},
		{25, "other", "many"},
		{101, "other", "one"},
		{111, "other", "many"},
		{112, "other", "many"},
		{1000, "other", "many"},
		{1001, "other", "one"},
		{-1, "one", "one"},
		{-22, "other", "few"},
		{math.MaxInt64, "other", "many"}, // ...807
		{math.MinInt64, "other", "many"}, // ...808
	}
	for _, tt := range tests {
		if got := pluralForm(En, tt.n); got != tt.en {
			t.Errorf("pluralForm(en, %d) = %q, want %q", tt.n, got, tt.en)
		}
		for _, lang := range []Lang{Ru, Uk} {
			if got := pluralForm(lang, tt.n); got != tt.ru {
				t.Errorf("pluralForm(%s, %d) = %q, want %q", lang, tt.n, got, tt.ru)
			}
		}
		if got := pluralForm("de", tt.n); got != tt.en {
			t.Errorf("pluralForm(de, %d) = %q, want the English %q", tt.n, got, tt.en)
		}
	}
}

// TestNWithCatalog checks whole plural messages from the embedded catalogs.
func TestNWithCatalog(t *testing.T) {
	tests := []struct {
		lang Lang
		key  string
		n    int64
		want string
	}{
		{En, "count.codes", 0, "0 codes"},
		{En, "count.codes", 1, "1 code"},
		{En, "count.codes", 2, "2 codes"},
		{En, "count.codes", 21, "21 codes"},
		{En, "count.stars", 1250, "1,250 Stars"},
		{Ru, "count.codes", 1, "1 код"},
		{Ru, "count.codes", 2, "2 кода"},
		{Ru, "count.codes", 5, "5 кодов"},
		{Ru, "count.codes", 11, "11 кодов"},
		{Ru, "count.codes", 21, "21 код"},
		{Ru, "count.codes", 22, "22 кода"},
		{Ru, "count.codes", 111, "111 кодов"},
		{Ru, "count.stars", 1250, "1\u00a0250 звёзд"},
		{Ru, "count.months", 3, "3 месяца"},
		{Ru, "count.months", 12, "12 месяцев"},
		{Uk, "count.codes", 1, "1 код"},
		{Uk, "count.codes", 4, "4 коди"},
		{Uk, "count.codes", 14, "14 кодів"},
		{Uk, "count.stars", 101, "101 зірка"},
		{Uk, "count.stars", 1250, "1\u00a0250 зірок"},
		{Uk, "count.months", 6, "6 місяців"},
		{Ru, "err.rate_limited", 3, "⏳ Слишком много запросов. Пожалуйста, подождите 3 секунды и попробуйте снова."},
		{En, "err.rate_limited", 1, "⏳ Too many requests. Please wait 1 second and try again."},
	}
	for _, tt := range tests {
		if got := N(tt.lang, tt.key, tt.n); got != tt.want {
			t.Errorf("N(%s, %q, %d) = %q, want %q", tt.lang, tt.key, tt.n, got, tt.want)
		}
	}
}
