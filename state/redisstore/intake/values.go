package intake

import "shopbot/state/redisstore"

// The shared conversions, under the short names the stores use.
var (
	itoa     = redisstore.Itoa
	flag     = redisstore.Flag
	str      = redisstore.Str
	newToken = redisstore.NewToken
)
