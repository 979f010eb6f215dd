package schema

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"io/fs"
	"os"
	"testing"
)

// TestEmbeddedSchemaIsCurrent keeps botapi.json.gz equal to the shared
// schema. To refresh it: gzip -9 -n -c ../../../../shared/telegram/botapi.json > botapi.json.gz
func TestEmbeddedSchemaIsCurrent(t *testing.T) {
	shared, err := os.ReadFile("../../../../shared/telegram/botapi.json")
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("shared/telegram/botapi.json is not present")
	}
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(schemaGzip))
	if err != nil {
		t.Fatal(err)
	}
	embedded, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(embedded, shared) {
		t.Fatal("botapi.json.gz differs from shared/telegram/botapi.json; regenerate it: gzip -9 -n -c ../../../../shared/telegram/botapi.json > botapi.json.gz")
	}
}

func TestSchemaParsing(t *testing.T) {
	s, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if s.Version == "" || !s.HasMethod("sendMessage") || !s.HasMethod("SENDMESSAGE") || s.HasMethod("sendMesage") {
		t.Errorf("version %q, methods wrong", s.Version)
	}
	for name, want := range map[string][2]string{
		"BotCommandScopeChat":    {"type", "chat"},
		"InputMediaPhoto":        {"type", "photo"},
		"ChatMemberBanned":       {"status", "kicked"},
		"ChatBoostSourcePremium": {"source", "premium"},
		"TransactionPartnerUser": {"type", "user"},
	} {
		td := s.types[name]
		if td == nil || td.discField != want[0] || td.discValue != want[1] {
			t.Errorf("%s discriminator = %+v, want %v", name, td, want)
		}
	}
	if _, err := Parse([]byte(`{"version":"x"}`)); err == nil {
		t.Error("a schema without methods parsed")
	}
}
