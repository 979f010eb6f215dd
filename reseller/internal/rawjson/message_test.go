package rawjson

import (
	"encoding/json"
	"testing"
	"time"
)

func TestUnixTimeUnits(t *testing.T) {
	want := time.Date(2024, 5, 1, 10, 6, 0, 0, time.UTC)
	for _, s := range []string{"1714557960", "1714557960000", "1714557960000000", "1714557960000000000"} {
		got, ok := ParseTime(json.RawMessage(s))
		if !ok || !got.Equal(want) {
			t.Errorf("ParseTime(%s) = %v, %v", s, got, ok)
		}
	}
	for _, s := range []string{`-5`, `"yesterday"`, `true`, `{}`, `"99999999999999999999"`} {
		if got, ok := ParseTime(json.RawMessage(s)); ok {
			t.Errorf("ParseTime(%s) = %v, want none", s, got)
		}
	}
}
