package books

import (
	"encoding/csv"
	"io"
	"strings"

	"github.com/shopspring/decimal"
)

// A spreadsheet reads a cell that starts with =, +, -, @, a tab or a
// carriage return as a formula (an item named =HYPERLINK(...) from the
// upstream would link out or, in older spreadsheets, run a command). Every
// export writes its rows through csvTable, which decides per column:
//   - a number column keeps a cell that is a plain number (-1.5000 stays a
//     number a spreadsheet can add up); anything else in it is text;
//   - a text cell that a spreadsheet would read as a formula gets a
//     leading single quote, which spreadsheets show as text and do not
//     evaluate; other text is written as it is.

// csvColumn is one column of an export: its header and whether it holds
// numbers.
type csvColumn struct {
	name   string
	number bool
}

// csvTable writes an export's rows, each cell neutralised by its column's
// type (csvCell).
type csvTable struct {
	w    *csv.Writer
	cols []csvColumn
}

// newCSVTable starts a table on w with its header row.
func newCSVTable(w io.Writer, cols []csvColumn) *csvTable {
	t := &csvTable{w: csv.NewWriter(w), cols: cols}
	head := make([]string, len(cols))
	for i, c := range cols {
		head[i] = csvText(c.name)
	}
	_ = t.w.Write(head)
	return t
}

// row writes one row; cells beyond the columns are text.
func (t *csvTable) row(cells ...string) {
	out := make([]string, len(cells))
	for i, c := range cells {
		number := i < len(t.cols) && t.cols[i].number
		out[i] = csvCell(c, number)
	}
	_ = t.w.Write(out)
}

// flush writes what is buffered and returns the first error.
func (t *csvTable) flush() error {
	t.w.Flush()
	return t.w.Error()
}

// csvCell is cell as written to a column: a plain number in a number
// column as it is, anything else as neutralised text (csvText).
func csvCell(cell string, number bool) string {
	if number && isPlainNumber(cell) {
		return cell
	}
	return csvText(cell)
}

// isPlainNumber says s is a decimal number as the exports write them
// (digits, an optional leading minus and decimal point), or empty.
func isPlainNumber(s string) bool {
	if s == "" {
		return true
	}
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || strings.Trim(digits, "0123456789.") != "" || strings.Count(digits, ".") > 1 {
		return false
	}
	_, err := decimal.NewFromString(s)
	return err == nil
}

// formulaLead are the first characters that make a spreadsheet read a cell
// as a formula.
const formulaLead = "=+-@\t\r"

// csvText is a text cell that no spreadsheet reads as a formula: one that
// starts with a formula character gets a leading single quote.
func csvText(s string) string {
	if s != "" && strings.IndexByte(formulaLead, s[0]) >= 0 {
		return "'" + s
	}
	return s
}
