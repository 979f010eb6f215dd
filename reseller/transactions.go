package reseller

import (
	"context"
	"iter"
	"net/url"
	"strconv"
	"time"

	"shopbot/reseller/internal/check"
	"shopbot/reseller/internal/transport"
)

// TxDirection is the direction of a balance transaction.
type TxDirection string

// Transaction directions.
const (
	TxCredit TxDirection = "CREDIT"
	TxDebit  TxDirection = "DEBIT"
)

// TxType is the kind of a balance transaction.
type TxType string

// Transaction types.
const (
	TxDeposit    TxType = "DEPOSIT"
	TxOrder      TxType = "ORDER"
	TxAdjustment TxType = "ADJUSTMENT"
)

// TxStatus is the state of a balance transaction.
type TxStatus string

// Transaction states.
const (
	TxPending   TxStatus = "PENDING"
	TxCompleted TxStatus = "COMPLETED"
	TxCancelled TxStatus = "CANCELLED"
)

// Transaction is a balance movement (object "transaction").
type Transaction struct {
	// Object is "transaction".
	Object string `json:"object"`
	// Number identifies the transaction (at least 1).
	Number int64 `json:"number"`
	// Direction is CREDIT or DEBIT.
	Direction TxDirection `json:"direction"`
	// Type is DEPOSIT, ORDER or ADJUSTMENT.
	Type TxType `json:"type"`
	// Status is PENDING, COMPLETED or CANCELLED.
	Status TxStatus `json:"status"`
	// AmountUSD is the amount moved.
	AmountUSD Money `json:"amount_usd"`
	// BalanceAfter is the balance after the movement.
	BalanceAfter Money `json:"balance_after"`
	// Note is a free-text label; "" when null or absent.
	Note string `json:"note"`
	// CreatedAt is when the transaction was made.
	CreatedAt time.Time `json:"created_at"`
}

// TransactionList is one page of transactions (object "list"), newest first.
type TransactionList struct {
	// Object is "list".
	Object string `json:"object"`
	// Data holds the page's transactions.
	Data []Transaction `json:"data"`
	// Limit is the page size applied.
	Limit int `json:"limit"`
	// HasMore says whether older transactions follow.
	HasMore bool `json:"has_more"`
	// NextCursor is the cursor of the next page; nil on the last page.
	NextCursor *int64 `json:"next_cursor"`
}

// TransactionsOptions filters GET /transactions. Zero fields are not sent.
type TransactionsOptions struct {
	// Limit is the page size, 1 to 100 (server default 20).
	Limit int
	// Cursor returns transactions older than this number (at least 1).
	Cursor int64
	// Direction filters by CREDIT or DEBIT.
	Direction TxDirection
	// Type filters by DEPOSIT, ORDER or ADJUSTMENT.
	Type TxType
	// Status filters by PENDING, COMPLETED or CANCELLED.
	Status TxStatus
}

// Validate checks the options against the spec's ranges and values.
func (o *TransactionsOptions) Validate() error {
	if o == nil {
		return nil
	}
	if err := checkPage(o.Limit, o.Cursor); err != nil {
		return err
	}
	switch o.Direction {
	case "", TxCredit, TxDebit:
	default:
		return invalid("direction", "must be CREDIT or DEBIT, got %q", o.Direction)
	}
	switch o.Type {
	case "", TxDeposit, TxOrder, TxAdjustment:
	default:
		return invalid("type", "must be DEPOSIT, ORDER or ADJUSTMENT, got %q", o.Type)
	}
	switch o.Status {
	case "", TxPending, TxCompleted, TxCancelled:
	default:
		return invalid("status", "must be PENDING, COMPLETED or CANCELLED, got %q", o.Status)
	}
	return nil
}

func (o *TransactionsOptions) query() url.Values {
	if o == nil {
		return url.Values{}
	}
	q := pageQuery(o.Limit, o.Cursor)
	if o.Direction != "" {
		q.Set("direction", string(o.Direction))
	}
	if o.Type != "" {
		q.Set("type", string(o.Type))
	}
	if o.Status != "" {
		q.Set("status", string(o.Status))
	}
	return q
}

// Transactions returns one page of balance transactions, newest first:
// GET /transactions. opts may be nil.
func (c *Client) Transactions(ctx context.Context, opts *TransactionsOptions) (*TransactionList, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return getJSON[TransactionList](ctx, c, "GET /transactions", "/transactions", opts.query())
}

// AllTransactions iterates over every transaction matching opts, newest
// first, following next_cursor from page to page (opts.Cursor is the
// starting point, opts.Limit the page size). An error is yielded once, as
// the last element.
func (c *Client) AllTransactions(ctx context.Context, opts *TransactionsOptions) iter.Seq2[Transaction, error] {
	var o TransactionsOptions
	if opts != nil {
		o = *opts
	}
	return transport.Paginate(ctx, o.Cursor, func(ctx context.Context, cursor int64) ([]Transaction, bool, *int64, error) {
		page := o
		page.Cursor = cursor
		l, err := c.Transactions(ctx, &page)
		if err != nil {
			return nil, false, nil, err
		}
		return l.Data, l.HasMore, l.NextCursor, nil
	})
}

// Transaction returns one transaction by number: GET /transactions/{number}.
// A number of another account answers 404 (see IsNotFound).
func (c *Client) Transaction(ctx context.Context, number int64) (*Transaction, error) {
	if err := check.Number("number", number); err != nil {
		return nil, err
	}
	path := "/transactions/" + strconv.FormatInt(number, 10)
	return getJSON[Transaction](ctx, c, "GET /transactions/{number}", path, nil)
}
