package lines

import (
	"testing"

	"shopbot/reseller/resellersim/simcatalog"
)

func TestFieldKinds(t *testing.T) {
	tests := []struct{ typ, key, label, want string }{
		{"number", "uid", "UID", kindNumber},
		{"select", "server", "Server", kindSelect},
		{"select", "server", "Server", kindText}, // no options: free text
		{"text", "email", "Supercell ID email", kindEmail},
		{"", "login", "PSN login (email)", kindEmail},
		{"", "trade_url", "Trade offer URL", kindURL},
		{"text", "player_id", "Player ID", kindNumber},
		{"", "zone_id", "Zone ID", kindNumber},
		{"text", "username", "Username", kindID},
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

// Every field of the simulator's in-game top-ups that is a game's id gets
// the number kind, whatever type the upstream declares for it ("text" for
// PUBG's Player ID); named ids and emails keep theirs.
func TestSimulatorTopUpFieldKinds(t *testing.T) {
	want := map[string]string{
		"player_id": kindNumber, "uid": kindNumber, "user_id": kindNumber, "zone_id": kindNumber,
		"server": kindSelect, "email": kindEmail, "riot_id": kindText,
	}
	for _, c := range simcatalog.Default().TopUpCategories {
		for _, f := range c.Fields {
			w, ok := want[f.Key]
			if !ok {
				t.Errorf("%s: field %q has no expected kind here: add it", c.ID, f.Key)
				continue
			}
			if got := fieldKind(f.Type, f.Key, f.Label, f.Options); got != w {
				t.Errorf("%s: field %q (type %q) is %q, want %q", c.ID, f.Key, f.Type, got, w)
			}
		}
	}
}
