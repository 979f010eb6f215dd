package locales

import (
	"strings"
	"testing"
)

func TestClip(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven char", 10, "eleven ch…"},
		{"word end  here", 11, "word end…"},
		{"😀😀😀", 4, "😀…"}, // each emoji is two UTF-16 units
		{"", 3, ""},
		{"abc", 0, ""},
	}
	for _, tt := range tests {
		if got := Clip(tt.in, tt.n); got != tt.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
		if got := Clip(tt.in, tt.n); UTF16Len(got) > max(tt.n, 0) {
			t.Errorf("Clip(%q, %d) = %q is %d units long", tt.in, tt.n, got, UTF16Len(got))
		}
	}
	long := strings.Repeat("я", 5000)
	if got := Clip(long, 64); UTF16Len(got) != 64 || !strings.HasSuffix(got, "…") {
		t.Errorf("Clip of a 5,000-character name = %d units", UTF16Len(got))
	}
}

// TestRefundRateAgreesWithItsCount: "0 из 1 завершённого", not "завершённых".
func TestRefundRateAgreesWithItsCount(t *testing.T) {
	for _, tt := range []struct {
		lang Lang
		n    int64
		want string
	}{
		{Ru, 1, "(0 из 1 завершённого)"}, {Ru, 21, "(0 из 21 завершённого)"}, {Ru, 2, "(0 из 2 завершённых)"},
		{Ru, 5, "(0 из 5 завершённых)"}, {Uk, 1, "(0 із 1 завершеного)"}, {Uk, 3, "(0 із 3 завершених)"},
		{En, 1, "(0 of 1 finished)"},
	} {
		got := N(tt.lang, "rep.stats.refunds", tt.n, "pct", "0", "refunded", "0")
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s %d: %q lacks %q", tt.lang, tt.n, got, tt.want)
		}
	}
}
