package records

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"shopbot/state"
	"time"

	"github.com/redis/go-redis/v9"
)

// creditAuditRefTTL is how long a recorded ref is remembered, so a replayed
// record is not listed twice.
const creditAuditRefTTL = 90 * 24 * time.Hour

// CreditAudit is the shop-wide list of admin wallet credits, newest first
// and capped. Keys, under prefix + "{audit}:" (one cluster slot):
//
//	credits      LIST of CreditRecord JSON, newest first, at most Cap
//	ref:<ref>    marks a ref already recorded (expires after 90 days)
//
// Every credit is also in the buyer's wallet ledger with its admin as the
// actor; this list answers "who credited what" across all buyers.
type CreditAudit struct {
	rdb redis.UniversalClient
	p   string
	// Cap is how many records are kept (default DefaultCreditAuditCap).
	Cap int
}

// NewCreditAudit returns the audit list under prefix.
func NewCreditAudit(rdb redis.UniversalClient, prefix string) *CreditAudit {
	return &CreditAudit{rdb: rdb, p: prefix + "{audit}:", Cap: state.DefaultCreditAuditCap}
}

// creditAuditScript: KEYS list, ref marker. ARGV record JSON, cap, ref TTL ms.
var creditAuditScript = redis.NewScript(`
if not redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[3]) then return 0 end
redis.call('LPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[2]) - 1)
return 1`)

// Record adds r to the front of the list, once per ref: recording a ref
// again (a replayed confirmation) changes nothing and returns false.
func (a *CreditAudit) Record(ctx context.Context, r state.CreditRecord) (bool, error) {
	if r.Ref == "" {
		return false, errors.New("record credit: empty ref")
	}
	r.At = r.At.UTC()
	doc, err := json.Marshal(&r)
	if err != nil {
		return false, fmt.Errorf("record credit %s: %w", r.Ref, err)
	}
	limit := a.Cap
	if limit <= 0 {
		limit = state.DefaultCreditAuditCap
	}
	n, err := creditAuditScript.Run(ctx, a.rdb, []string{a.p + "credits", a.p + "ref:" + r.Ref},
		doc, limit, creditAuditRefTTL.Milliseconds()).Int()
	if err != nil {
		return false, fmt.Errorf("record credit %s: %w", r.Ref, err)
	}
	return n == 1, nil
}

// Recent returns up to count records, newest first.
func (a *CreditAudit) Recent(ctx context.Context, count int) ([]state.CreditRecord, error) {
	if count <= 0 {
		return nil, nil
	}
	vals, err := a.rdb.LRange(ctx, a.p+"credits", 0, int64(count-1)).Result()
	if err != nil {
		return nil, fmt.Errorf("read credit audit: %w", err)
	}
	out := make([]state.CreditRecord, 0, len(vals))
	for _, v := range vals {
		var r state.CreditRecord
		if err := json.Unmarshal([]byte(v), &r); err != nil {
			return nil, fmt.Errorf("decode credit audit record: %w", err)
		}
		out = append(out, r)
	}
	return out, nil
}

// AuditLog is the shop-wide log of admin actions that changed something
// (state.AuditEntry), newest first and capped. Key, under prefix +
// "{audit}:" (the credit audit's slot):
//
//	log    LIST of AuditEntry JSON, newest first, at most Cap
//
// The admin operations write it after the change they record succeeded
// (a double tap that acted once is logged once).
type AuditLog struct {
	rdb redis.UniversalClient
	p   string
	// Cap is how many entries are kept (default state.DefaultAuditCap).
	Cap int
	Now func() time.Time
}

// NewAuditLog returns the audit log under prefix.
func NewAuditLog(rdb redis.UniversalClient, prefix string) *AuditLog {
	return &AuditLog{rdb: rdb, p: prefix + "{audit}:", Cap: state.DefaultAuditCap, Now: time.Now}
}

// Record adds e at the front of the log; a zero At is now.
func (a *AuditLog) Record(ctx context.Context, e state.AuditEntry) error {
	if e.At.IsZero() {
		e.At = a.Now()
	}
	e.At = e.At.UTC()
	doc, err := json.Marshal(&e)
	if err != nil {
		return fmt.Errorf("audit %s: %w", e.Action, err)
	}
	limit := a.Cap
	if limit <= 0 {
		limit = state.DefaultAuditCap
	}
	pipe := a.rdb.TxPipeline()
	pipe.LPush(ctx, a.p+"log", doc)
	pipe.LTrim(ctx, a.p+"log", 0, int64(limit-1))
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("audit %s: %w", e.Action, err)
	}
	return nil
}

// Recent returns up to count entries, newest first.
func (a *AuditLog) Recent(ctx context.Context, count int) ([]state.AuditEntry, error) {
	if count <= 0 {
		return nil, nil
	}
	vals, err := a.rdb.LRange(ctx, a.p+"log", 0, int64(count-1)).Result()
	if err != nil {
		return nil, fmt.Errorf("read audit log: %w", err)
	}
	out := make([]state.AuditEntry, 0, len(vals))
	for _, v := range vals {
		var e state.AuditEntry
		if err := json.Unmarshal([]byte(v), &e); err != nil {
			return nil, fmt.Errorf("decode audit entry: %w", err)
		}
		out = append(out, e)
	}
	return out, nil
}
