// Package botapitest is a fake Telegram Bot API server for unit tests,
// end-to-end tests and the terminal demo.
//
// New (or NewT in tests) starts the server; give URL() and Token() to the
// bot (bot.WithServerURL). Every request to /bot<token>/<method> is checked
// against the official Bot API schema (an embedded copy of botapi.json,
// package schema) and a few documented value rules, recorded
// (Calls, WaitFor, Subscribe) and simulated: a per-chat message store with
// edits, callback and pre-checkout queries, an update queue for getUpdates
// with long polling, webhook delivery, Telegram Star payments and refunds,
// bot commands and webhook settings, and files: photos a buyer sends
// (SendPhoto, SendPhotoData) and files the bot uploads have content, which
// getFile and the file link <url>/file/bot<token>/<file_path> serve (the
// link works for an hour after getFile, files over 20 MB are refused).
// Photos the bot sends (uploaded, by file_id or by URL) get realistic
// sizes and file_ids; sendPhoto and editMessageMedia with a file_id the
// server never gave out (or one ForgetFile dropped) are refused with
// "wrong file identifier/HTTP URL specified", as Telegram does;
// editMessageMedia replaces a message's photo and caption (or turns a text
// message into a photo, as the schema allows).
// FailNext, BlockChat, SetLatency and ChatFloodLimit (Telegram's per-chat
// message limit, with 429 and retry_after) inject faults.
//
// # What the checker covers
//
// The checks live in package schema (bot/botapitest/schema), which the
// server calls for every request, every result it answers and every update
// a test pushes. Package calls reads requests and records them (Call, the
// log behind Calls, WaitFor and Subscribe); package types holds the Bot API
// objects the server produces. Tests name those types from their own
// packages (calls.Call, types.Message, schema.Violation).
//
// Requests may be JSON, urlencoded, a query string or multipart (scalar
// parts are strings, object and array fields are JSON text, file parts are
// InputFile). It reports unknown methods, unknown fields, missing required
// fields and wrong types, recursively through nested objects and arrays:
// Integer must parse as int64, Float as a number, Boolean as true/false;
// unions pass if any alternative passes; types with subtypes are chosen by
// their discriminator (type, status or source). Nested JSON values must have
// their JSON type (a number where the schema says Integer). attach://<name>
// must name an uploaded part, and uploaded parts must be used.
//
// Value rules: callback_data 1-64 bytes; exactly one action per inline
// button; message text 1-4096 and captions 0-1024 characters (InputMedia
// captions too);
// answerCallbackQuery text 0-200; sendInvoice title, description, payload
// (1-128 bytes), currency, XTR needing no provider token, one price and no
// tips; parse_mode one of HTML, MarkdownV2, Markdown, and HTML text parsed
// like Telegram (only b, strong, i, em, u, ins, s, strike, del,
// span class="tg-spoiler", tg-spoiler, a href, code, pre, blockquote,
// tg-emoji; balanced; <, > and & escaped); BotCommand syntax; edit targets;
// error_message when a pre-checkout is declined; limits of getUpdates and
// getStarTransactions; webhook secret syntax. Characters are counted in
// UTF-16 code units, as Telegram does, after HTML parsing for HTML texts;
// Markdown is not parsed, so its markup counts too.
//
// Not covered: Markdown/MarkdownV2 syntax, entity offsets, file sizes and
// most other numeric ranges stated only in descriptions, and fields that
// are "required if" another one is set beyond those listed above.
//
// Violations are reported to OnViolation (NewT turns them into t.Errorf)
// and answered with HTTP 400 "Bad Request: schema: <method>: <field>:
// <problem>"; an unknown method is answered 404 "Not Found".
package botapitest
