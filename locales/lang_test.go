package locales

import (
	"slices"
	"testing"
)

func TestSupported(t *testing.T) {
	got := Supported()
	if want := []Lang{En, Ru, Uk}; !slices.Equal(got, want) {
		t.Fatalf("Supported() = %v, want %v", got, want)
	}
	got[0] = "xx"
	if Supported()[0] != En {
		t.Fatal("Supported() shares its slice between calls")
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want Lang
		ok   bool
	}{
		{"en", En, true},
		{"ru", Ru, true},
		{"uk", Uk, true},
		{" UK ", Uk, true},
		{"Ru", Ru, true},
		{"ua", "", false},
		{"uk-UA", "", false},
		{"de", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := Parse(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Errorf("Parse(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestMatch(t *testing.T) {
	all := []Lang{En, Ru, Uk}
	tests := []struct {
		name     string
		code     string
		enabled  []Lang
		fallback Lang
		want     Lang
	}{
		{"ru", "ru", all, En, Ru},
		{"uk", "uk", all, En, Uk},
		{"en", "en", all, Ru, En},
		{"uk-UA region ignored", "uk-UA", all, En, Uk},
		{"en-GB region ignored", "en-GB", all, Ru, En},
		{"upper case and underscore", "RU_ru", all, En, Ru},
		{"ua alias", "ua", all, En, Uk},
		{"be to ru", "be", all, En, Ru},
		{"kk to ru", "kk-KZ", all, En, Ru},
		{"ky to ru", "ky", all, En, Ru},
		{"tg to ru", "tg", all, En, Ru},
		{"be without ru gets fallback", "be", []Lang{En, Uk}, En, En},
		{"be without ru gets fallback uk", "be", []Lang{En, Uk}, Uk, Uk},
		{"uk disabled never ru", "uk", []Lang{En, Ru}, En, En},
		{"ru disabled never uk", "ru", []Lang{En, Uk}, En, En},
		{"unknown language", "de", all, Ru, Ru},
		{"empty code", "", all, Uk, Uk},
		{"garbage code", "-", all, En, En},
		{"empty enabled means all", "uk", nil, En, Uk},
		{"fallback not enabled", "de", []Lang{Ru, Uk}, En, Ru},
		{"unsupported enabled entries ignored", "de", []Lang{"de", Uk}, En, Uk},
		{"nothing usable enabled", "ru", []Lang{"de"}, Uk, Uk},
		{"nothing usable, bad fallback", "ru", []Lang{"de"}, "fr", En},
		{"only en enabled", "ru", []Lang{En}, En, En},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Match(tt.code, tt.enabled, tt.fallback); got != tt.want {
				t.Errorf("Match(%q, %v, %q) = %q, want %q", tt.code, tt.enabled, tt.fallback, got, tt.want)
			}
		})
	}
}

func TestLanguageName(t *testing.T) {
	for lang, want := range map[Lang]string{En: "English", Ru: "Русский", Uk: "Українська", "de": "de"} {
		if got := LanguageName(lang); got != want {
			t.Errorf("LanguageName(%q) = %q, want %q", lang, got, want)
		}
	}
}
