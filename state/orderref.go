package state

import (
	"crypto/sha256"
	"encoding/base32"
	"strconv"
	"strings"
)

// An order's number is Redis's: a store that lost writes (a crash, a
// failover, a restore) hands the same number to the next payment. Anything
// kept outside the order's own record (a button in a chat, a record on
// another Cluster shard) names the order by its Ref, which joins the
// number to a tag of the charge that paid for it: a reissued number never
// carries the same tag, so nothing of one purchase is attached to another.

// refTagLen is the length of the charge's tag in a Ref: 6 base32
// characters (30 bits) tell two charges under one number apart.
const refTagLen = 6

// Ref names the order as "<number>.<tag>", tag taken from its charge id.
func (o *Order) Ref() string {
	return strconv.FormatInt(o.ID, 10) + "." + ChargeTag(o.ChargeID)
}

// ChargeTag is the short tag of a charge id in an order's Ref.
func ChargeTag(charge string) string {
	sum := sha256.Sum256([]byte(charge))
	return strings.ToLower(base32.StdEncoding.EncodeToString(sum[:]))[:refTagLen]
}

// ParseRef reads an order's Ref; a bare number (a button made before Refs)
// gives an empty tag.
func ParseRef(s string) (id int64, tag string, ok bool) {
	num, tag, _ := strings.Cut(s, ".")
	id, err := strconv.ParseInt(num, 10, 64)
	if err != nil || id <= 0 || (tag != "" && len(tag) != refTagLen) {
		return 0, "", false
	}
	return id, tag, true
}

// Is reports whether the order is the one tag names: its charge's tag, or
// any order for an empty tag (a Ref without one).
func (o *Order) Is(tag string) bool { return tag == "" || tag == ChargeTag(o.ChargeID) }
