package reseller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"strings"
	"time"
)

// AccountStatus is the state of the reseller account.
type AccountStatus string

// Account states.
const (
	AccountActive  AccountStatus = "ACTIVE"
	AccountBlocked AccountStatus = "BLOCKED"
)

// Account is the authenticated reseller's account (object "account").
type Account struct {
	// Object is "account".
	Object string `json:"object"`
	// Nickname is the reseller's nickname.
	Nickname string `json:"nickname"`
	// Email is the account e-mail.
	Email string `json:"email"`
	// Status is ACTIVE or BLOCKED; a BLOCKED account gets 403 on ordering.
	Status AccountStatus `json:"status"`
	// BalanceUSD is the balance available for orders.
	BalanceUSD Money `json:"balance_usd"`
	// TotalOrders is the lifetime order count.
	TotalOrders int64 `json:"total_orders"`
	// TotalSpentUSD is the lifetime spend.
	TotalSpentUSD Money `json:"total_spent_usd"`
	// CreatedAt is when the account was created.
	CreatedAt time.Time `json:"created_at"`
	// Raw is the account object as received. The spec says the account
	// carries its rate limits in fields it does not name; read them here.
	// Raw is not written by json.Marshal.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the account and keeps the raw object in Raw.
func (a *Account) UnmarshalJSON(data []byte) error {
	type plain Account
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*a = Account(p)
	a.Raw = append(json.RawMessage(nil), data...)
	return nil
}

// Me returns the caller's own account: GET /me.
func (c *Client) Me(ctx context.Context) (*Account, error) {
	return getJSON[Account](ctx, c, "GET /me", "/me", nil)
}

// AccountFingerprint identifies the upstream account the client acts for
// without revealing its key (see the function AccountFingerprint).
func (c *Client) AccountFingerprint() string { return AccountFingerprint(c.tr.Base, c.tr.APIKey) }

// AccountFingerprint identifies the account of apiKey at the API at
// baseURL without revealing the key: a hash of the API's host and the key.
// The API has no account id (GET /me gives a nickname and an e-mail, and
// needs the upstream up); a key belongs to one account, so the same
// fingerprint means the same account. A regenerated key gives a new
// fingerprint: what was recorded under the old one is then taken for
// another account's (the safe side).
func AccountFingerprint(baseURL, apiKey string) string {
	host := baseURL
	if u, err := url.Parse(strings.TrimSpace(baseURL)); err == nil {
		host = strings.ToLower(u.Host)
	}
	sum := sha256.Sum256([]byte("shopbot upstream account\x00" + host + "\x00" + apiKey))
	return hex.EncodeToString(sum[:12])
}
