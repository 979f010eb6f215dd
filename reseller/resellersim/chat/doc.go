// Package chat is the manual-service order chat of the upstream simulator
// (package resellersim) in the API's wire format: a chat and its messages
// (Chat, Message), the chat and chat_message objects rendered with the
// request's host (View, Sent), the multipart form a buyer posts (ParseForm)
// and the uploads it carries (File). resellersim keeps the chats on its
// orders, under its lock, and serves the endpoints and the test hooks.
package chat
