package lines

import (
	"strings"
	"testing"
)

func TestParseUsername(t *testing.T) {
	for in, want := range map[string]string{
		"@durov": "durov", "durov": "durov", "t.me/durov": "durov", "https://t.me/durov": "durov", " T.ME/Durov_Bot/ ": "Durov_Bot",
		"telegram.me/durov": "durov", "@abcd": "", "1durov": "", "durov_": "", "du__rov": "", "": "", "@": "",
		"t.me/joinchat/xyz": "", "https://example.com/durov": "", "dur ov": "", strings.Repeat("a", 33): "",
	} {
		got, ok := ParseUsername(in)
		if got != want || ok != (want != "") {
			t.Errorf("ParseUsername(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}
