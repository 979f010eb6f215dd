// Package flows holds the conversation state machines: pure logic from a
// chat's session and an incoming event to a new session and the screens to
// show, testable without Telegram or Redis.
package flows
