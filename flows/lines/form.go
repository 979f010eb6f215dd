package lines

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"shopbot/flows"
	"shopbot/flows/shop"
)

// The lines as a form orders from them, outside the chat (the Mini App,
// bot/webapp): the buyer picks an item, answers its fields and gives a
// quantity on one screen, and the shop quotes it. Nothing here is checked
// or priced by code of its own: the fields are the chat's (offerFields,
// fieldKind), every answer goes through checkField, the quantity through
// quantityReason, the quote is built by the line's own builder (units.quote,
// fielded.quote) and priced and stored by shop.Shop.StoreQuote, after the
// same rate limit.

// FormLines are the lines a form orders from (Quote), in menu order: all
// eight. The catalog lines' items are a category's offers; the other four
// are shaped the same way by appform.go.
var FormLines = func() []string {
	var out []string
	for _, l := range flows.Lines {
		out = append(out, l.Name)
	}
	return out
}()

// IsFormLine reports whether line is one of FormLines.
func IsFormLine(line string) bool { return slices.Contains(FormLines, line) }

// ByUnit reports whether line sells a category's items by the unit, with a
// quantity (gift cards, game keys); the other form lines sell one offer
// with the category's fields.
func ByUnit(line string) bool { return line == "giftcards" || line == "keys" }

// formUnits and formFielded are the chat's own descriptions of the form
// lines (what loads their offers, what a quote of them is).
func formUnits(sh *shop.Shop, line string) *units {
	switch line {
	case "giftcards":
		return (&GiftCards{sh}).units()
	case "keys":
		return (&Keys{sh}).units()
	}
	return nil
}

func formFielded(sh *shop.Shop, line string) *fielded {
	switch line {
	case "games":
		return (&Games{sh}).fielded()
	case "services":
		return (&Services{sh}).fielded()
	}
	return nil
}

// ErrNotFormLine is the error of a line that is not one of FormLines.
var ErrNotFormLine = errors.New("not a line ordered from a form")

// Offers reads a category's offers of a form line, with stale, from the
// catalog the chat reads them from (the shop's own texts of Stars,
// Premium, top-ups and gifts in env's language). An unknown category is an
// error wrapping flows.ErrNotFound.
func Offers(ctx context.Context, sh *shop.Shop, env *flows.Env, line, category string) (*flows.Offers, bool, error) {
	if a := appLineOf(sh, line); a != nil {
		return a.formOffers(ctx, env, category)
	}
	if u := formUnits(sh, line); u != nil {
		return u.load(ctx, category)
	}
	if f := formFielded(sh, line); f != nil {
		return f.load(ctx, category)
	}
	return nil, false, fmt.Errorf("%q: %w", line, ErrNotFormLine)
}

// SoldOut reports whether offer o of line cannot be ordered for want of
// stock, as the chat's list marks it (only lines sold by the unit count
// stock).
func SoldOut(line string, o *flows.Offer) bool { return ByUnit(line) && soldOut(o) }

// MinQuantity is the least an order of o takes (lines sold by the unit).
func MinQuantity(o *flows.Offer) int { return minQuantity(o) }

// Field is a buyer field as a form asks it.
type Field struct {
	Key, Label string
	// Kind is how an answer is checked (checkField): "" free text,
	// "number", "select", "email", "url", "phone" or "id".
	Kind    string
	Options []string // a select's allowed values, as the upstream spells them
	Secret  bool     // a password or code: never shown back
}

// Fields returns the buyer fields a category's offers need, in order and
// typed as the chat asks them.
func Fields(o *flows.Offers) []Field {
	var out []Field
	for _, f := range offerFields(o) {
		out = append(out, Field{Key: f.Key, Label: f.Label, Kind: f.Kind, Options: f.Options, Secret: secretField(f.Key)})
	}
	return out
}

// CheckField checks an answer to f exactly as the chat does: it returns
// the value to keep (a select's option as the upstream spells it) or, in
// env's language as Telegram HTML, why the answer cannot be used.
func CheckField(env *flows.Env, f Field, text string) (value, reason string) {
	return checkField(env, field{Key: f.Key, Label: f.Label, Kind: f.Kind, Options: f.Options}, text)
}

// Order is what a buyer orders from a form.
type Order struct {
	Line     string
	Category string
	Item     string            // the offer's id
	Quantity int               // lines sold by the unit; the others take 1
	Fields   map[string]string // answers by field key; keys the category does not ask are ignored
}

// OrderError is an order the shop cannot quote as asked: the answer to
// Field ("" when the order as a whole: the item sold out, the quantity)
// is refused, for Reason (env's language, Telegram HTML).
type OrderError struct {
	Field  string
	Reason string
}

func (e *OrderError) Error() string {
	if e.Field == "" {
		return "order refused"
	}
	return "field " + e.Field + " refused"
}

// QuantityField is OrderError.Field for a refused quantity.
const QuantityField = "quantity"

// Quote prices o and stores its quote, as the chat's summary does: the
// buyer's rate limit first, then the item and every answer checked by the
// chat's checks, the quote built by the line's own code and priced by
// shop.Shop.StoreQuote. stale says the catalog answered from an old copy.
// Errors: *OrderError (an answer or the quantity refused), *shop.RateLimited,
// shop.ErrPaused (the upstream balance cannot pay for it now), one wrapping
// flows.ErrNotFound (the category or item is gone) or ErrNotFormLine, or
// the catalog's and the store's own.
func Quote(ctx context.Context, sh *shop.Shop, env *flows.Env, o Order) (q *flows.Quote, stale bool, err error) {
	if !IsFormLine(o.Line) {
		return nil, false, fmt.Errorf("%q: %w", o.Line, ErrNotFormLine)
	}
	if err := sh.Allow(ctx, env); err != nil {
		return nil, false, err
	}
	if a := appLineOf(sh, o.Line); a != nil {
		q, stale, err = a.formQuote(ctx, env, o)
	} else if u := formUnits(sh, o.Line); u != nil {
		q, stale, err = unitsQuote(ctx, u, env, o)
	} else {
		q, stale, err = fieldedQuote(ctx, formFielded(sh, o.Line), env, o)
	}
	if err != nil {
		return nil, false, err
	}
	if err := sh.StoreQuote(ctx, env, q); err != nil {
		return nil, false, err
	}
	return q, stale, nil
}

// unitsQuote is the quote of o.Quantity units of an item, refused as the
// chat refuses one: sold out when picked, a quantity out of its bounds.
func unitsQuote(ctx context.Context, u *units, env *flows.Env, o Order) (*flows.Quote, bool, error) {
	offers, stale, err := u.load(ctx, o.Category)
	if err != nil {
		return nil, false, err
	}
	item, ok := offers.Offer(o.Item)
	if !ok {
		return nil, false, flows.NotFound("item not offered")
	}
	if soldOut(item) {
		return nil, false, &OrderError{Reason: env.T("gc.sold_out_alert")}
	}
	if reason := quantityReason(env, o.Quantity, item.MinQuantity, item.MaxQuantity, item.Stock); reason != "" {
		return nil, false, &OrderError{Field: QuantityField, Reason: reason}
	}
	return u.quote(o.Category, item, o.Quantity), stale, nil
}

// fieldedQuote is the quote of one offer with the category's fields, each
// answer checked as the chat checks it.
func fieldedQuote(ctx context.Context, u *fielded, env *flows.Env, o Order) (*flows.Quote, bool, error) {
	offers, stale, err := u.load(ctx, o.Category)
	if err != nil {
		return nil, false, err
	}
	item, ok := offers.Offer(o.Item)
	if !ok {
		return nil, false, flows.NotFound("offer gone")
	}
	fields := offerFields(offers)
	values := make(map[string]string, len(fields))
	for _, f := range fields {
		v, reason := checkField(env, f, o.Fields[f.Key])
		if reason != "" {
			return nil, false, &OrderError{Field: f.Key, Reason: reason}
		}
		values[f.Key] = v
	}
	who := describeFields(fields, func(key string) string { return values[key] })
	return u.quote(offers, item, values, who), stale, nil
}
