package reseller

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// addFixtures seeds a fuzz corpus with every testdata file whose name has prefix.
func addFixtures(f *testing.F, prefixes ...string) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, name := range files {
		for _, p := range prefixes {
			if strings.HasPrefix(filepath.Base(name), p) {
				b, err := os.ReadFile(name)
				if err != nil {
					f.Fatal(err)
				}
				f.Add(b)
			}
		}
	}
}

func FuzzMoney(f *testing.F) {
	for _, s := range []string{"0.1500", "12.5000", "1000000.0000", "-1", "0.12345", "1e5", "", "abc", "00001.10", "-0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMoney(s)
		if err == nil {
			out := m.String()
			back, err := ParseMoney(out)
			if err != nil {
				t.Fatalf("ParseMoney(%q) ok but its String %q does not parse: %v", s, out, err)
			}
			if !back.Equal(m.Decimal) {
				t.Fatalf("round trip changed the value: %q -> %q", s, out)
			}
			if back.String() != out {
				t.Fatalf("String not stable: %q -> %q", out, back.String())
			}
		}
		// Any JSON input: never panics; whatever decodes re-encodes and decodes equal.
		for _, in := range [][]byte{[]byte(s), []byte(`"` + s + `"`)} {
			var jm Money
			if json.Unmarshal(in, &jm) != nil {
				continue
			}
			b, err := json.Marshal(jm)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			var again Money
			if err := json.Unmarshal(b, &again); err != nil || !again.Equal(jm.Decimal) {
				t.Fatalf("JSON round trip of %q: %s, %v", in, b, err)
			}
		}
	})
}

func FuzzDecodeOrder(f *testing.F) {
	addFixtures(f, "order_")
	f.Add([]byte(`{"keys":[{"key":{"code":1}},[],"",null,{"pin":"1"}],"codes":"x"}`))
	f.Add([]byte(`{"number":1,"amount":null,"deadline_at":null,"keys":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var o Order
		if json.Unmarshal(data, &o) == nil {
			o.DeliveredKeys()
			o.DeliverableCodes()
			o.RawField("offer_id")
			if o.Status.Terminal() && o.Type.Filter() == "\x00" {
				t.Fatal("impossible")
			}
			if _, err := json.Marshal(&o); err != nil {
				t.Fatalf("a decoded order does not encode: %v", err)
			}
		}
		var l OrderList
		if json.Unmarshal(data, &l) == nil {
			for i := range l.Data {
				l.Data[i].DeliverableCodes()
			}
		}
	})
}

func FuzzDecodeChat(f *testing.F) {
	addFixtures(f, "chat")
	f.Add([]byte(`{"messages":[{"time":"99999999999999999999"},{"at":-1},{"created_at":1e308},{"author":{"role":7}}]}`))
	f.Add([]byte(`{"messages":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var ch Chat
		if json.Unmarshal(data, &ch) == nil {
			for i := range ch.Messages {
				exercise(&ch.Messages[i])
			}
			if _, err := json.Marshal(ch); err != nil {
				t.Fatalf("a decoded chat does not encode: %v", err)
			}
		}
		var m ChatMessage
		if json.Unmarshal(data, &m) == nil {
			exercise(&m)
		}
	})
}

func exercise(m *ChatMessage) {
	m.Text()
	m.Time()
	m.ID()
	m.Author()
	m.Image()
	m.FromOperator()
}
