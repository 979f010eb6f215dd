package flows

import (
	"errors"
	"fmt"
	"strings"
)

// CallbackVersion is the first field of every callback_data we build. A
// button of another version is stale.
const CallbackVersion = "1"

// GlobalNonce marks buttons that stay valid whatever the chat's state, such
// as "main menu" or an order's "show codes"; their actions must be safe to
// repeat. It is valid only with the actions of such buttons (the menu, help
// and those registered with Engine.HandleButton): with any other action it
// is stale, in every chat.
const GlobalNonce = "0"

// MaxCallbackData is Telegram's limit on callback_data, in bytes.
const MaxCallbackData = 64

// ErrCallbackTooLong is returned when a button's data would exceed 64 bytes.
var ErrCallbackTooLong = errors.New("callback data longer than 64 bytes")

// Action names what a button does: the action field of its callback
// data. Each flow declares its actions as constants, short (the data has
// 64 bytes) and never changed while buttons carrying them may be live in
// chats.
type Action string

// Callback is decoded callback_data: <version>:<nonce>:<action>[:<arg>].
type Callback struct {
	Version string
	Nonce   string
	Action  Action
	Arg     string
}

// EncodeCallback builds callback data and refuses anything over 64 bytes or
// an action containing the separator.
func EncodeCallback(nonce string, action Action, arg string) (string, error) {
	if action == "" || strings.Contains(string(action), ":") || strings.Contains(nonce, ":") {
		return "", fmt.Errorf("bad callback action %q", action)
	}
	s := CallbackVersion + ":" + nonce + ":" + string(action)
	if arg != "" {
		s += ":" + arg
	}
	if len(s) > MaxCallbackData {
		return "", fmt.Errorf("%w: %q is %d bytes", ErrCallbackTooLong, s, len(s))
	}
	return s, nil
}

// DecodeCallback parses callback data; ok is false when it is not ours.
// The arg may itself contain ':'.
func DecodeCallback(data string) (Callback, bool) {
	parts := strings.SplitN(data, ":", 4)
	if len(parts) < 3 || parts[0] == "" || parts[2] == "" {
		return Callback{}, false
	}
	c := Callback{Version: parts[0], Nonce: parts[1], Action: Action(parts[2])}
	if len(parts) == 4 {
		c.Arg = parts[3]
	}
	return c, true
}

// ErrBlocked means the buyer blocked the bot (Telegram answered 403): a
// message to them cannot be delivered until they start it again.
var ErrBlocked = errors.New("buyer blocked the bot")
