package bot_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"shopbot/bot/botapitest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/<name>.golden; with -update it writes
// the file instead (go test ./bot -run TestX -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./bot -run %s -update to create it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test ./bot -run %s -update rewrites it); got:\n%s", path, t.Name(), got)
	}
}

// renderMessage prints a bot message as a person sees it: the text (or
// caption, or document name) and the inline buttons, one row a line. Button
// callback data is left out (it carries random nonces); URL buttons show
// their URL.
func renderMessage(m botapitest.Message) string {
	var b strings.Builder
	switch {
	case m.Document != nil:
		b.WriteString("[file " + m.Document.FileName + "]\n")
		if m.Caption != "" {
			b.WriteString(m.Caption + "\n")
		}
	case m.Invoice != nil:
		b.WriteString("[invoice " + m.Invoice.Title + "]\n")
	case m.Caption != "":
		b.WriteString(m.Caption + "\n")
	default:
		b.WriteString(m.Text + "\n")
	}
	if m.ReplyMarkup != nil {
		for _, row := range m.ReplyMarkup.InlineKeyboard {
			labels := make([]string, len(row))
			for i, btn := range row {
				labels[i] = "[" + btn.Text + "]"
				if btn.URL != "" {
					labels[i] = "[" + btn.Text + " -> " + btn.URL + "]"
				}
			}
			b.WriteString(strings.Join(labels, " ") + "\n")
		}
	}
	return b.String()
}
