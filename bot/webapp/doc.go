// Package webapp is the shop as a Telegram Mini App: a page Telegram opens
// inside the app (the bot's menu button), served by the shop itself on its
// HTTP listener (HTTP_ADDR) under the path of WEBAPP_URL, and the JSON API
// the page calls. It sells through the same code as the chat: the catalog,
// prices, field checks and quotes of flows/lines (lines.Quote, Fields,
// CheckField), checkout's Stars invoices (as invoice links the page opens
// with Telegram.WebApp.openInvoice), and the order the payment update makes.
// Nothing the page reports is taken as proof of payment.
//
// Where things are:
//   - app.go: Options, Deps, New and Handler (routes, security headers, the
//     embedded page);
//   - auth.go: every API request authenticated from its initData
//     (bot/webapp/initdata), rate limited per buyer, and the JSON errors;
//   - catalog.go: the product lines, a line's categories, a category's
//     items with their fields, and a field's check;
//   - order.go: the quote, the invoice link and the order's status;
//   - texts.go: the page's texts in the buyer's language, from locales;
//   - static/: the page (index.html, app.css, app.js), plain HTML, CSS and
//     JavaScript embedded in the binary: no build step.
//
// Like the other features it never imports the bot (the Telegram adapter)
// nor another feature: it declares what it needs (Payments, Orders,
// Limiter), which checkout and the stores implement, and storefront wires
// it (Shop.ServeWebApp).
package webapp
