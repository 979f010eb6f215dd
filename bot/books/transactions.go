package books

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"shopbot/flows"
	"shopbot/locales"
	"shopbot/reseller"
)

// /transactions: the upstream account's balance transactions, paged, with
// filters.

// flowTransactions is the flow of /transactions.
const flowTransactions = "rep_tx"

// Limits of /transactions.
const (
	txPerPage      = 10
	txNoteRunes    = 80
	txMaxBackPages = 100 // cursors of earlier pages kept for Back
)

// Transaction filters cycle through these values; "" is "all".
var (
	txDirections = []string{"", string(reseller.TxCredit), string(reseller.TxDebit)}
	txTypes      = []string{"", string(reseller.TxDeposit), string(reseller.TxOrder), string(reseller.TxAdjustment)}
	txStatuses   = []string{"", string(reseller.TxPending), string(reseller.TxCompleted), string(reseller.TxCancelled)}
)

// Button actions of /transactions.
const (
	actTxDir    flows.Action = "fd"    // cycle the direction filter
	actTxType   flows.Action = "ft"    // cycle the type filter
	actTxStatus flows.Action = "fs"    // cycle the status filter
	actTxOlder  flows.Action = "older" // arg: the cursor of the next (older) page
	actTxNewer  flows.Action = "newer" // back to the previous page
	actTxReload flows.Action = "rl"    // read the page again
)

// Session variables of /transactions.
const (
	// The filters ("": all).
	txKeyDir    flows.Key = "dir"
	txKeyType   flows.Key = "type"
	txKeyStatus flows.Key = "st"
	// txKeyCursor is the current page's cursor (a number; unset on the
	// first page).
	txKeyCursor flows.Key = "cur"
	// txKeyBack are the cursors of the earlier pages (txBack), so Back
	// needs no extra call.
	txKeyBack flows.Key = "back"
)

// txBack returns the cursors of the earlier pages, oldest first: kept
// space-separated, "0" for the first page.
func txBack(s *flows.Session) []string { return strings.Fields(s.Get(txKeyBack)) }

// setTxBack keeps the cursors of the earlier pages.
func setTxBack(s *flows.Session, back []string) { s.Set(txKeyBack, strings.Join(back, " ")) }

// txFlow pages through the upstream transactions: the filters, the
// current page's cursor and the earlier pages' (the tx keys above).
type txFlow struct{ r *Books }

func (f txFlow) Start(ctx context.Context, env *flows.Env, s *flows.Session, _ string) (*flows.Reply, error) {
	s.Step = "list"
	sc, err := f.Show(ctx, env, s)
	return &flows.Reply{Screen: sc}, err
}

func cycleNext(values []string, cur string) string {
	i := slices.Index(values, cur)
	return values[(i+1)%len(values)]
}

func (f txFlow) Handle(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
	if ev.Kind == flows.EvButton {
		firstPage := func() { s.Set(txKeyCursor, ""); s.Set(txKeyBack, "") }
		switch ev.Button.Action {
		case actTxDir:
			s.Set(txKeyDir, cycleNext(txDirections, s.Get(txKeyDir)))
			firstPage()
		case actTxType:
			s.Set(txKeyType, cycleNext(txTypes, s.Get(txKeyType)))
			firstPage()
		case actTxStatus:
			s.Set(txKeyStatus, cycleNext(txStatuses, s.Get(txKeyStatus)))
			firstPage()
		case actTxOlder:
			c, err := strconv.ParseInt(ev.Button.Arg, 10, 64)
			if err != nil || c < 1 {
				break
			}
			back := txBack(s)
			cur := s.Get(txKeyCursor)
			if cur == "" {
				cur = "0"
			}
			back = append(back, cur)
			if len(back) > txMaxBackPages {
				back = back[len(back)-txMaxBackPages:]
			}
			setTxBack(s, back)
			s.SetInt(txKeyCursor, c)
		case actTxNewer:
			back := txBack(s)
			if len(back) == 0 {
				break
			}
			cur := back[len(back)-1]
			if cur == "0" {
				cur = ""
			}
			s.Set(txKeyCursor, cur)
			setTxBack(s, back[:len(back)-1])
		}
	}
	sc, err := f.Show(ctx, env, s)
	return &flows.Reply{Screen: sc, Save: true}, err
}

func (f txFlow) Show(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Screen, error) {
	r := f.r
	dir, typ, st := s.Get(txKeyDir), s.Get(txKeyType), s.Get(txKeyStatus)
	word := func(kind, v string) string {
		if v == "" {
			return env.T("rep.tx.all")
		}
		key := "rep.tx." + kind + "." + strings.ToLower(v)
		if w := env.T(key); w != key {
			return w
		}
		return locales.Escape(v) // a value the spec does not list
	}
	page := len(txBack(s)) + 1
	var b strings.Builder
	b.WriteString(env.T("rep.tx.title", "page", page))
	b.WriteString("\n")
	b.WriteString(env.T("rep.tx.filters", "dir", word("dir", dir), "type", word("type", typ), "status", word("status", st)))
	b.WriteString("\n")
	rows := [][]flows.Button{
		{{Text: env.T("rep.btn.dir", "value", word("dir", dir)), Action: actTxDir}, {Text: env.T("rep.btn.type", "value", word("type", typ)), Action: actTxType}},
		{{Text: env.T("rep.btn.status", "value", word("status", st)), Action: actTxStatus}},
	}
	var nav []flows.Button
	if page > 1 {
		nav = append(nav, flows.Button{Text: env.T("rep.btn.newer"), Action: actTxNewer})
	}
	if r.up == nil {
		b.WriteString("\n" + env.T("rep.tx.failed", "reason", env.T("rep.up.not_configured")))
		return &flows.Screen{Text: b.String(), Rows: rows}, nil
	}
	cursor := s.Int64(txKeyCursor)
	cctx, cancel := context.WithTimeout(ctx, upstreamWait)
	defer cancel()
	list, err := r.up.Transactions(cctx, &reseller.TransactionsOptions{
		Limit: txPerPage, Cursor: cursor, Direction: reseller.TxDirection(dir), Type: reseller.TxType(typ), Status: reseller.TxStatus(st),
	})
	if err != nil {
		b.WriteString("\n" + env.T("rep.tx.failed", "reason", r.upstreamProblem(env, "transactions", err)))
		nav = append(nav, flows.Button{Text: env.T("btn.retry"), Action: actTxReload})
		return &flows.Screen{Text: b.String(), Rows: append(rows, nav)}, nil
	}
	if len(list.Data) == 0 {
		b.WriteString("\n" + env.T("rep.tx.empty"))
	}
	for _, t := range list.Data {
		amount := locales.SignedMoney(env.Lang, t.AmountUSD.Decimal)
		if t.Direction == reseller.TxDebit {
			amount = locales.SignedMoney(env.Lang, t.AmountUSD.Decimal.Neg())
		}
		key := "rep.tx.row"
		if t.Note != "" {
			key = "rep.tx.row_note"
		}
		b.WriteString("\n" + env.T(key, "number", strconv.FormatInt(t.Number, 10),
			"date", locales.DateTime(env.Lang, t.CreatedAt.UTC()),
			"dir", word("dir", string(t.Direction)), "type", word("type", string(t.Type)), "status", word("status", string(t.Status)),
			"amount", amount, "balance", locales.Money(env.Lang, t.BalanceAfter.Decimal),
			"note", locales.Escape(locales.Clip(t.Note, txNoteRunes))))
	}
	if numberGap(list.Data) {
		// The upstream numbers transactions across all its accounts: a
		// number missing here is not money missing from this account.
		key := "rep.tx.gaps"
		if dir != "" || typ != "" || st != "" {
			key = "rep.tx.gaps_filtered"
		}
		b.WriteString("\n\n" + env.T(key))
	}
	if list.HasMore && list.NextCursor != nil {
		nav = append(nav, flows.Button{Text: env.T("rep.btn.older"), Action: actTxOlder, Arg: strconv.FormatInt(*list.NextCursor, 10)})
	}
	if len(nav) > 0 {
		rows = append(rows, nav)
	}
	return &flows.Screen{Text: b.String(), Rows: rows}, nil
}

// numberGap reports whether the page (newest first) skips a transaction
// number between two of its rows.
func numberGap(txs []reseller.Transaction) bool {
	for i := 1; i < len(txs); i++ {
		if txs[i-1].Number-txs[i].Number > 1 {
			return true
		}
	}
	return false
}
