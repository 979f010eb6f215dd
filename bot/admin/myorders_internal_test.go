package admin

import (
	"shopbot/bot/fulfil"
	"shopbot/locales"
	"strings"
	"testing"
)

func TestFitCodesStaysWithinOneMessage(t *testing.T) {
	codes := make([]string, 300)
	for i := range codes {
		codes[i] = strings.Repeat("Ж", 20) + "<&>"
	}
	text, all := fulfil.FitCodes("head", fulfil.CodeLines(codes), "tail note")
	if all {
		t.Fatal("300 long codes cannot all fit")
	}
	if n := locales.UTF16Len(text) + locales.UTF16Len("tail note") + 2; n > maxMessageChars {
		t.Fatalf("message of %d characters", n)
	}
	if !strings.Contains(text, "<code>"+strings.Repeat("Ж", 20)+"&lt;&amp;&gt;</code>") {
		t.Fatal("codes are not escaped monospace")
	}
	if _, all := fulfil.FitCodes("head", fulfil.CodeLines(codes[:5]), "tail"); !all {
		t.Fatal("five codes must fit")
	}
}
