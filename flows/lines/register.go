package lines

import (
	"shopbot/flows"
	"shopbot/flows/shop"
)

// Register adds every product line to e, sharing sh, and the inline
// mode's search across them.
func Register(e *flows.Engine, sh *shop.Shop) {
	sh.Attach(e)
	e.HandleInline(sh.Inline)
	e.Register("giftcards", &GiftCards{sh})
	e.Register("stars", &Stars{sh})
	e.Register("premium", &Premium{sh})
	e.Register("keys", &Keys{sh})
	e.Register("games", &Games{sh})
	e.Register("services", &Services{sh})
	e.Register("topup", &Topup{sh})
	e.Register("gifts", &Gifts{sh})
}
