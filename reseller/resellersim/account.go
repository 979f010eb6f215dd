package resellersim

import (
	"math"
	"time"

	"github.com/shopspring/decimal"
	"shopbot/reseller/resellersim/internal/wire"
)

const (
	selfAccount  = 1
	otherAccount = 2
)

// Transaction is a balance transaction of the simulated account.
type Transaction struct {
	Number       int
	Direction    string // CREDIT or DEBIT
	Type         string // DEPOSIT, ORDER or ADJUSTMENT
	Status       string // PENDING, COMPLETED or CANCELLED
	Amount       decimal.Decimal
	BalanceAfter decimal.Decimal
	Note         string
	CreatedAt    time.Time
}

type txn struct {
	Transaction
	account int
}

// record numbers and records a transaction.
func (s *Sim) record(account int, direction, typ, status string, amount, balanceAfter decimal.Decimal, note string, at time.Time) {
	s.addTx(&txn{account: account, Transaction: Transaction{
		Direction: direction, Type: typ, Status: status, Amount: amount,
		BalanceAfter: balanceAfter, Note: note, CreatedAt: at,
	}})
}

// addTx numbers and records a transaction.
func (s *Sim) addTx(t *txn) {
	t.Number = s.nextTx
	s.nextTx++
	s.txs = append(s.txs, t)
}

type accountJSON struct {
	Object        string `json:"object"`
	Nickname      string `json:"nickname"`
	Email         string `json:"email"`
	Status        string `json:"status"`
	BalanceUSD    string `json:"balance_usd"`
	TotalOrders   int    `json:"total_orders"`
	TotalSpentUSD string `json:"total_spent_usd"`
	CreatedAt     string `json:"created_at"`
}

type transactionJSON struct {
	Object       string  `json:"object"`
	Number       int     `json:"number"`
	Direction    string  `json:"direction"`
	Type         string  `json:"type"`
	Status       string  `json:"status"`
	AmountUSD    string  `json:"amount_usd"`
	BalanceAfter string  `json:"balance_after"`
	Note         *string `json:"note"`
	CreatedAt    string  `json:"created_at"`
}

type pageJSON struct {
	Object     string `json:"object"`
	Data       any    `json:"data"`
	Limit      int    `json:"limit"`
	HasMore    bool   `json:"has_more"`
	NextCursor *int   `json:"next_cursor"`
}

func (t *txn) json() transactionJSON {
	return transactionJSON{
		Object:       "transaction",
		Number:       t.Number,
		Direction:    t.Direction,
		Type:         t.Type,
		Status:       t.Status,
		AmountUSD:    wire.USD(t.Amount),
		BalanceAfter: wire.USD(t.BalanceAfter),
		Note:         wire.NullString(t.Note),
		CreatedAt:    wire.TS(t.CreatedAt),
	}
}

func (s *Sim) getMe(q *wire.Request) (any, error) {
	return accountJSON{
		Object:        "account",
		Nickname:      s.nickname,
		Email:         s.email,
		Status:        s.status,
		BalanceUSD:    wire.USD(s.balance),
		TotalOrders:   s.totalOrders,
		TotalSpentUSD: wire.USD(s.totalSpent),
		CreatedAt:     wire.TS(s.accountSince),
	}, nil
}

// pageParams reads the page size (limit, 1 to 100, default 20) and the
// cursor (at least 1; absent: from the newest) of a cursor-paged list.
func pageParams(q *wire.Request) (limit, cursor int, err error) {
	if limit, err = q.Int("limit", 20, 1, 100); err != nil {
		return 0, 0, err
	}
	if cursor, err = q.Int("cursor", math.MaxInt, 1, math.MaxInt); err != nil {
		return 0, 0, err
	}
	return limit, cursor, nil
}

// newestPage builds one page of a cursor-paged list from items kept in
// number order: newest first, the items numbered below cursor that keep
// accepts, at most limit of them, with has_more and next_cursor (the last
// number listed) when more follow.
func newestPage[T, J any](items []T, limit, cursor int, number func(T) int, keep func(T) bool, toJSON func(T) J) pageJSON {
	data := []J{}
	page := pageJSON{Object: "list", Limit: limit}
	last := 0
	for i := len(items) - 1; i >= 0; i-- {
		it := items[i]
		if number(it) >= cursor || !keep(it) {
			continue
		}
		if len(data) == limit {
			page.HasMore = true
			page.NextCursor = &last
			break
		}
		data = append(data, toJSON(it))
		last = number(it)
	}
	page.Data = data
	return page
}

func (s *Sim) listTransactions(q *wire.Request) (any, error) {
	limit, cursor, err := pageParams(q)
	if err != nil {
		return nil, err
	}
	dir, err := q.Enum("direction", "CREDIT", "DEBIT")
	if err != nil {
		return nil, err
	}
	typ, err := q.Enum("type", "DEPOSIT", "ORDER", "ADJUSTMENT")
	if err != nil {
		return nil, err
	}
	status, err := q.Enum("status", "PENDING", "COMPLETED", "CANCELLED")
	if err != nil {
		return nil, err
	}
	keep := func(t *txn) bool {
		return t.account == selfAccount &&
			(dir == "" || t.Direction == dir) && (typ == "" || t.Type == typ) && (status == "" || t.Status == status)
	}
	return newestPage(s.txs, limit, cursor, func(t *txn) int { return t.Number }, keep, (*txn).json), nil
}

func (s *Sim) getTransaction(q *wire.Request) (any, error) {
	n, err := wire.PathNumber(q.Path[1], "transaction")
	if err != nil {
		return nil, err
	}
	for _, t := range s.txs {
		if t.Number == n && t.account == selfAccount {
			return t.json(), nil
		}
	}
	return nil, wire.NotFound("transaction %d not found", n)
}

// Transactions returns the account's transactions, oldest first, after
// applying due order transitions.
func (s *Sim) Transactions() []Transaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked(s.clock())
	var out []Transaction
	for _, t := range s.txs {
		if t.account == selfAccount {
			out = append(out, t.Transaction)
		}
	}
	return out
}

// ForeignTransactionNumbers returns the numbers of transactions that belong
// to another account: they exist but GET /transactions/{number} answers 404.
func (s *Sim) ForeignTransactionNumbers() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int
	for _, t := range s.txs {
		if t.account != selfAccount {
			out = append(out, t.Number)
		}
	}
	return out
}
