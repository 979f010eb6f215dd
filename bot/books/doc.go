// Package books is the shop's books for admins: what the shop holds, took
// and owes, and whether its records match the outside ones.
//   - books.go: Options, Deps (the small interfaces it needs of Telegram,
//     the upstream, the Star ledger and the alerts), New, Register, Run;
//   - balance.go: /balance, the upstream account, the bot's Stars and
//     what buyers paid for orders not yet finished;
//   - transactions.go: /transactions, the upstream's balance movements,
//     paged, with filters;
//   - stats.go: /stats, and the figures of one order (figuresOf) and
//     their tally, which /export counts the same way; stats_topup.go and
//     stats_referrals.go add the wallet top-ups and the referral totals;
//   - export.go: /export, CSV documents of orders (with the figures /stats
//     counts) and of wallet movements;
//   - reconcile.go: /reconcile, our books matched with the upstream's and
//     Telegram's, and its daily durable job that alerts admins;
//     reconcile_topup.go matches the Star payments of wallet top-ups;
//   - credit.go: /credit, a wallet credit by an admin, with its audit.
//
// Every command and flow is registered with the perm it needs
// (flows.PermBooksRead, PermExport, PermCredit): the engine answers anyone
// whose roles do not allow it exactly as an unknown command. The package reaches Telegram, the upstream and
// the alerts through the interfaces in books.go, never through the bot.
package books
