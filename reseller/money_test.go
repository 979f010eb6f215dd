package reseller

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

func TestMoneyRoundTrip(t *testing.T) {
	for _, s := range []string{"0.1500", "12.5000", "1000000.0000", "0.0000", "-3.2500", "99999999999999999999.9999"} {
		var m Money
		if err := json.Unmarshal([]byte(`"`+s+`"`), &m); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != `"`+s+`"` {
			t.Errorf("round trip %s -> %s", s, b)
		}
		if m.String() != s || fmt.Sprint(m) != s || fmt.Sprintf("%s|%v|%q", m, m, m) != s+"|"+s+`|"`+s+`"` {
			t.Errorf("printing %s: %s / %v", s, m.String(), m)
		}
	}
}

func TestMoneyForms(t *testing.T) {
	for in, want := range map[string]string{
		`"12.5"`:    "12.5000",
		`"7"`:       "7.0000",
		`12.5`:      "12.5000",
		`0.15`:      "0.1500",
		`"0.12345"`: "0.12345", // more precision than 4 places is kept, never rounded
		`"1.50000"`: "1.5000",  // extra trailing zeros are not precision
		`"-0.5"`:    "-0.5000",
	} {
		var m Money
		if err := json.Unmarshal([]byte(in), &m); err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if m.String() != want {
			t.Errorf("%s -> %s, want %s", in, m.String(), want)
		}
	}
	for _, in := range []string{`"1e5"`, `1e5`, `"abc"`, `""`, `" 1"`, `"+1"`, `"1."`, `".5"`, `"--1"`, `"1.2.3"`, `true`, `{}`, `[]`,
		`"0x10"`, `"١٢"`, `"` + strings.Repeat("1", 41) + `"`, `"0.` + strings.Repeat("1", 41) + `"`} {
		var m Money
		if err := json.Unmarshal([]byte(in), &m); err == nil {
			t.Errorf("%q accepted as %s", in, m)
		}
	}
	m := money("3.0000")
	if err := json.Unmarshal([]byte(`null`), &m); err != nil || m.String() != "3.0000" {
		t.Errorf("null changed the value: %s %v", m, err)
	}
	var p *Money
	if err := json.Unmarshal([]byte(`null`), &p); err != nil || p != nil {
		t.Errorf("null into *Money: %v %v", p, err)
	}
}

func TestMoneyText(t *testing.T) {
	m := NewMoney(decimal.New(125, -1))
	b, _ := m.MarshalText()
	if string(b) != "12.5000" {
		t.Errorf("MarshalText = %s", b)
	}
	var back Money
	if err := back.UnmarshalText(b); err != nil || !back.Equal(m.Decimal) {
		t.Errorf("UnmarshalText = %s, %v", back, err)
	}
	if err := back.UnmarshalText([]byte("x")); err == nil {
		t.Error("UnmarshalText accepted x")
	}
	// Arithmetic goes through the embedded decimal.
	sum := money("0.1500").Add(money("12.5000").Decimal)
	if NewMoney(sum).String() != "12.6500" {
		t.Errorf("sum = %s", sum)
	}
	// A map key or struct field marshals the same way.
	b, _ = json.Marshal(map[string]Money{"a": money("1")})
	if string(b) != `{"a":"1.0000"}` {
		t.Errorf("map = %s", b)
	}
}

func TestPlainAmount(t *testing.T) {
	for in, want := range map[string]string{"12.50": "12.5", "100": "100", "1e2": "100", "0.15": "0.15", "1500.0000": "1500"} {
		if got := plainAmount(decimal.RequireFromString(in)); got != want {
			t.Errorf("plainAmount(%s) = %s, want %s", in, got, want)
		}
	}
}
