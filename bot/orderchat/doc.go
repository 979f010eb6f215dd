// Package orderchat relays the chat of manual-service orders between the
// buyer and the upstream operator: the buyer opens it from an order's
// message or view and writes (text and photos go upstream); a poller per
// chat (jobs on its own schedule, "chat:<id>") relays what the operator
// writes, each message exactly once, with a Reply button; an admin reads
// the whole transcript.
//
// Where things are: deps.go (what the relay needs of Telegram and the
// upstream), orderchat.go (the chat flow, sending, polling, relaying and
// the admin transcript). The fulfilment worker tells the relay when an
// order is placed (Placed) and asks whether its messages carry a chat
// button (HasChat): Relay implements fulfil.Chats and needs nothing of the
// worker, so the two are built in either order.
package orderchat
