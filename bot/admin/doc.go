// Package admin is the shop's admin side, and the order lists of buyers
// and staff (one /orders command for both):
//   - admin.go: Options, Deps (the small interfaces it needs of Telegram,
//     the upstream, the fulfilment worker and the chat relay), New,
//     Register, Run;
//   - alerts.go: alerts to admins, once per occurrence, and the watch of
//     the upstream account (key rejected, account blocked, low balance);
//   - broadcast.go: /broadcast, resumable jobs any replica carries on;
//   - orders.go: /orders for staff (the shop's orders, filters) and
//     /order N (one order: resend, hurry, refund, adopt, place again);
//   - myorders.go: "My orders", a buyer's own orders and codes again;
//   - promos.go: /promo, the promo codes.
//
// The money reports (/balance, /transactions, /stats, /export,
// /reconcile, /credit) are bot/books.
//
// Every staff command, button and flow is registered with the perm it
// needs (flows.Engine.AdminCommand, AdminButton, AdminFlow): the engine
// answers anyone whose roles do not allow it exactly as an unknown command
// or a stale button. The package reaches Telegram and the other features
// through the interfaces in admin.go, never through the bot itself.
package admin
