// Package console is the shop's admin console: pages of the Mini App
// under <app>/admin/ (the same listener, the same initData
// authentication) for the staff's orders, tickets, books and growth tools.
// It does what the chat's admin commands do, through the same code: the
// fulfilment worker's admin operations (bot/fulfil: the refund of /order N
// is the console's refund), support's answers and closes (bot/support),
// the books' figures, balance, reconciliation, CSV and Star charges for
// review (bot/books), the admin side's promo codes and broadcasts
// (bot/admin), each reached through the small interfaces of console.go,
// which storefront wires.
//
// Who may call what is the staff gate's (flows/gate.go): every endpoint is
// registered with the perm it needs (flows.Engine.ConsoleEndpoint) and the
// gate answers before any handler runs (flows.Engine.ConsoleAllows); the
// user is only the one initData names, their roles only the configured
// staff's. Every action that changes something is audited with the actor
// (state.Actor, Via "console") by the code it calls.
//
// Where things are:
//   - console.go: Options, Deps, New, the endpoint table and Handler;
//   - auth.go: initData, the gate, the request's language, signed
//     single-use download links, JSON answers;
//   - texts.go: the page's texts (locales' console.* keys) in the admin's
//     language;
//   - orders.go: search, the order page, its actions;
//   - tickets.go: the inbox, a thread (with its photos), reply (text or
//     an uploaded photo) and close;
//   - books.go: balance, figures and charts (svg.go), reconciliation, CSV;
//   - charges.go: the Star charges listed for review (the chat's
//     /charges), refunded or settled once;
//   - growth.go: promo codes, referral figures, broadcasts, wallet credit;
//   - static/: the page (index.html, console.css, console.js), embedded,
//     no build step.
package console
