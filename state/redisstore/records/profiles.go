package records

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/shopspring/decimal"

	"shopbot/state"
)

// Buyer profiles, for choosing a broadcast's audience: one HASH per buyer
// in the registry's slot, prefix + "{users}:p:<id>", kept cheaply as buyers
// appear and as their orders are delivered:
//
//	lang      the language they use the shop in
//	seen      unix day they last used the bot (written at most once a day)
//	last      unix time of their last delivered order's payment
//	l:<line>  1 for each product line they bought from
//
// The referral program's record (ref:by) and the opt-out and block
// records share the slot, so a page of profiles is one pipeline. Profiles
// cost a hash of a few fields per buyer.

func (u *Users) profileKey(id int64) string { return u.p + "p:" + itoa(id) }

// profilesFilledKey marks that the delivered orders made before profiles
// were kept have been recorded into them (FillProfiles).
func (u *Users) profilesFilledKey() string { return u.p + "p:filled" }

// Seen records that buyer id used the bot at, in lang ("" leaves the
// language as it was). The caller writes it once a day or when the
// language changes, not on every update.
func (u *Users) Seen(ctx context.Context, id int64, lang string, at time.Time) error {
	args := []any{"seen", at.Unix()}
	if lang != "" {
		args = append(args, "lang", lang)
	}
	if err := u.rdb.HSet(ctx, u.profileKey(id), args...).Err(); err != nil {
		return fmt.Errorf("record buyer %d seen: %w", id, err)
	}
	return nil
}

// boughtScript: KEYS profile. ARGV: line, unix time, lang. Marks the line,
// moves last forward only, and sets the language when none is known.
var boughtScript = redis.NewScript(`
redis.call('HSET', KEYS[1], 'l:' .. ARGV[1], '1')
local last = tonumber(redis.call('HGET', KEYS[1], 'last') or '0')
if tonumber(ARGV[2]) > last then redis.call('HSET', KEYS[1], 'last', ARGV[2]) end
if ARGV[3] ~= '' then redis.call('HSETNX', KEYS[1], 'lang', ARGV[3]) end
return 1`)

// Bought records a delivered order of buyer id: its line, when it was paid
// and the language it was bought in (kept only when the profile has none).
// Recording the same order twice changes nothing.
func (u *Users) Bought(ctx context.Context, id int64, line, lang string, at time.Time) error {
	if line == "" {
		return nil
	}
	if err := boughtScript.Run(ctx, u.rdb, []string{u.profileKey(id)}, line, at.Unix(), lang).Err(); err != nil {
		return fmt.Errorf("record buyer %d bought: %w", id, err)
	}
	return nil
}

// Profiles returns the profiles of up to count buyers in the order they
// started, from position from (0 for the first), with their referral,
// opt-out and block records; with wallets set, their wallet balances too.
func (u *Users) Profiles(ctx context.Context, from, count int64, wallets *Wallets) ([]state.BuyerProfile, error) {
	zs, err := u.rdb.ZRangeWithScores(ctx, u.buyers, from, from+count-1).Result()
	if err != nil {
		return nil, fmt.Errorf("list buyers: %w", err)
	}
	out := make([]state.BuyerProfile, 0, len(zs))
	ids := make([]string, 0, len(zs))
	for _, z := range zs {
		s, _ := z.Member.(string)
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			continue
		}
		out = append(out, state.BuyerProfile{ID: id, Started: time.Unix(int64(z.Score), 0)})
		ids = append(ids, s)
	}
	if len(out) == 0 {
		return out, nil
	}
	hashes := make([]*redis.MapStringStringCmd, len(out))
	var refs, off, blocked *redis.SliceCmd
	_, err = u.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, b := range out {
			hashes[i] = p.HGetAll(ctx, u.profileKey(b.ID))
		}
		refs = p.HMGet(ctx, u.p+"ref:by", ids...)
		off = p.HMGet(ctx, u.nomkt, ids...)
		blocked = p.HMGet(ctx, u.blocked, ids...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read buyer profiles: %w", err)
	}
	for i := range out {
		p := &out[i]
		for k, v := range hashes[i].Val() {
			switch {
			case k == "lang":
				p.Lang = v
			case k == "seen":
				p.Seen = unixOf(v)
			case k == "last":
				p.LastBuy = unixOf(v)
			case strings.HasPrefix(k, "l:"):
				p.Lines = append(p.Lines, k[2:])
			}
		}
		slices.Sort(p.Lines)
		p.Referred = refs.Val()[i] != nil
		p.MarketingOff = off.Val()[i] != nil
		p.Blocked = blocked.Val()[i] != nil
	}
	if wallets != nil {
		bals, err := wallets.Balances(ctx, buyerIDs(out))
		if err != nil {
			return nil, err
		}
		for i := range out {
			out[i].Wallet = bals[i]
		}
	}
	return out, nil
}

func buyerIDs(ps []state.BuyerProfile) []int64 {
	ids := make([]int64, len(ps))
	for i, p := range ps {
		ids[i] = p.ID
	}
	return ids
}

func unixOf(v string) time.Time {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}
	}
	return time.Unix(n, 0)
}

// ProfilePage is how many profiles Walk reads at a time.
const ProfilePage = 500

// Walk hands fn every buyer's profile, a page at a time, in the order
// they started (with wallet balances when wallets is set); it stops at
// fn's first error.
func (u *Users) Walk(ctx context.Context, wallets *Wallets, fn func([]state.BuyerProfile) error) error {
	for from := int64(0); ; from += ProfilePage {
		page, err := u.Profiles(ctx, from, ProfilePage, wallets)
		if err != nil {
			return err
		}
		if len(page) > 0 {
			if err := fn(page); err != nil {
				return err
			}
		}
		if len(page) < ProfilePage {
			return nil
		}
	}
}

// CountAudience counts audience a at now: its members, and of them those
// who turned news off and those who blocked the bot. wallets is needed
// for an audience of wallet holders (nil: nobody holds a balance).
func (u *Users) CountAudience(ctx context.Context, a state.Audience, now time.Time, wallets *Wallets) (state.AudienceCount, error) {
	var c state.AudienceCount
	if !a.NeedsWallet() {
		wallets = nil
	}
	err := u.Walk(ctx, wallets, func(page []state.BuyerProfile) error {
		for _, p := range page {
			if !a.Match(p, now) {
				continue
			}
			c.Members++
			switch {
			case p.MarketingOff:
				c.OptedOut++
			case p.Blocked:
				c.Blocked++
			}
		}
		return nil
	})
	return c, err
}

// ProfilesFilled reports whether FillProfiles has recorded the orders
// delivered before profiles were kept.
func (u *Users) ProfilesFilled(ctx context.Context) (bool, error) {
	n, err := u.rdb.Exists(ctx, u.profilesFilledKey()).Result()
	return n == 1, err
}

// FillProfiles records every delivered order of orders into its buyer's
// profile (Bought: running it twice, or beside the live recording, changes
// nothing), then marks the profiles filled. It pages through the
// delivered orders; it is for the first start of a build that keeps
// profiles.
func (u *Users) FillProfiles(ctx context.Context, orders *Orders) (int, error) {
	const page = 200
	n := 0
	for offset := 0; ; offset += page {
		list, err := orders.List(ctx, offset, page, state.OrderFilter{Status: state.OrderDelivered})
		if err != nil {
			return n, err
		}
		for _, o := range list {
			at := o.PaidAt
			if at.IsZero() {
				at = o.CreatedAt
			}
			if err := u.Bought(ctx, o.UserID, o.Line, o.Lang, at); err != nil {
				return n, err
			}
			n++
		}
		if len(list) < page {
			break
		}
	}
	if err := u.rdb.Set(ctx, u.profilesFilledKey(), 1, 0).Err(); err != nil {
		return n, fmt.Errorf("mark profiles filled: %w", err)
	}
	return n, nil
}

// Balances returns the wallet balances of ids, in order (zero for a buyer
// without a wallet), in one pipeline.
func (w *Wallets) Balances(ctx context.Context, ids []int64) ([]decimal.Decimal, error) {
	cmds := make([]*redis.StringCmd, len(ids))
	_, err := w.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.Get(ctx, w.keys(id)[0])
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("read wallet balances: %w", err)
	}
	out := make([]decimal.Decimal, len(ids))
	for i, c := range cmds {
		out[i] = decimal.Zero
		if v, err := c.Result(); err == nil {
			out[i] = fromCents(v)
		}
	}
	return out, nil
}
