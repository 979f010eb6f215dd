package lines

import "testing"

func TestFieldKinds(t *testing.T) {
	tests := []struct{ typ, key, label, want string }{
		{"number", "uid", "UID", kindNumber},
		{"select", "server", "Server", kindSelect},
		{"select", "server", "Server", kindText}, // no options: free text
		{"text", "email", "Supercell ID email", kindEmail},
		{"", "login", "PSN login (email)", kindEmail},
		{"", "trade_url", "Trade offer URL", kindURL},
		{"text", "player_id", "Player ID", kindID},
		{"", "phone", "Phone number", kindPhone},
		{"", "password", "PSN password", kindText},
		{"text", "riot_id", "Riot ID", kindText},
		{"colour-picker", "x", "Anything", kindText}, // unknown types are text
	}
	for i, tt := range tests {
		var opts []string
		if i == 1 {
			opts = []string{"A", "B"}
		}
		if got := fieldKind(tt.typ, tt.key, tt.label, opts); got != tt.want {
			t.Errorf("fieldKind(%q, %q, %q) = %q, want %q", tt.typ, tt.key, tt.label, got, tt.want)
		}
	}
}
