package books

import "testing"

// TestCSVCellByColumnType: a number column keeps plain numbers (negative
// ones too) and quotes anything else that starts like a formula; a text
// column quotes every formula lead, a negative-looking text included.
func TestCSVCellByColumnType(t *testing.T) {
	for _, c := range []struct {
		cell   string
		number bool
		want   string
	}{
		{"-1.5000", true, "-1.5000"},
		{"12", true, "12"},
		{"", true, ""},
		{"-1+1+cmd|' /C calc'!A0", true, "'-1+1+cmd|' /C calc'!A0"},
		{"=1", true, "'=1"},
		{"-1.5000", false, "'-1.5000"},
		{`=HYPERLINK("http://evil.example/","x")`, false, `'=HYPERLINK("http://evil.example/","x")`},
		{"+cmd|' /C calc'!A0", false, "'+cmd|' /C calc'!A0"},
		{"@SUM(A1)", false, "'@SUM(A1)"},
		{"\t=1", false, "'\t=1"},
		{"\r=1", false, "'\r=1"},
		{"a=1", false, "a=1"},
	} {
		if got := csvCell(c.cell, c.number); got != c.want {
			t.Errorf("csvCell(%q, number %v) = %q, want %q", c.cell, c.number, got, c.want)
		}
	}
}
