// Package checkout takes the buyer's money exactly once and turns it into
// a paid order scheduled for fulfilment (docs/design.md, "Payments").
//
// Where things are:
//   - checkout.go: Options, New, Register (the payment-method buttons,
//     /wallet) and Pay, which the product lines call with a confirmed quote;
//   - invoice.go: one Stars invoice per quote (rate limited, resent when the
//     first was lost);
//   - precheckout.go: the answer to Telegram's pre-checkout query (quote
//     live and unpaid, upstream price and stock, which bot/upstreamorder
//     re-prices per line, and balance);
//   - settle.go: a successful payment (Paid) or a swept charge becomes a
//     paid order, exactly once;
//   - refund.go: refund a Stars payment that bought nothing (told once,
//     marked, alerted on failure);
//   - wallet.go: paying from the shop wallet, /wallet;
//   - wallettopup.go: buyers topping up their wallet with a Stars invoice
//     ("w:<top-up id>"): the amounts, the invoice, the pre-checkout;
//     wallettopup_settle.go: such a payment credited exactly once or
//     refunded, from its update or the sweep;
//   - sweep.go: the Stars sweep, which finds charges whose update was lost
//     and settles, refunds or lists them for admin review.
//
// It reaches Telegram, admins and the fulfilment worker through the small
// interfaces in deps.go (the bot's Telegram adapter implements Telegram),
// never through the bot itself. Its bookkeeping in Redis (invoice marks,
// refund marks, the sweep lock, wallet payments under way) is the store's
// work.Payments, its records the store's records. Payment updates reach it as typed events
// (PreCheckoutQuery, Payment) from the bot's dispatch, like every other
// update.
package checkout
