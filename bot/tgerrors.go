package bot

import (
	"errors"
	"fmt"
	"strings"

	tgbot "github.com/go-telegram/bot"
)

// Telegram's 400 answers the shop acts on. Telegram tells them apart only
// by the description of a 400; it is read here, in one place
// (telegramError), and every caller tests with errors.Is.
var (
	// ErrNotModified: an edit that would change nothing (harmless).
	ErrNotModified = errors.New("telegram: message is not modified")
	// ErrMenuLost: the message to edit is gone, or is not of the kind the
	// edit needs (a text edit of a photo, a caption edit of a text): the
	// menu must be sent anew.
	ErrMenuLost = errors.New("telegram: the message to edit is gone or of another kind")
	// ErrChargeAlreadyRefunded: refundStarPayment of a charge refunded
	// before (the refund is done).
	ErrChargeAlreadyRefunded = errors.New("telegram: charge already refunded")
)

// badRequestKinds maps a 400's description to its typed error.
var badRequestKinds = []struct {
	part string
	err  error
}{
	{"message is not modified", ErrNotModified},
	{"message to edit not found", ErrMenuLost},
	{"there is no text in the message to edit", ErrMenuLost},
	{"there is no caption in the message to edit", ErrMenuLost},
	{"CHARGE_ALREADY_REFUNDED", ErrChargeAlreadyRefunded},
}

// telegramError returns err with its typed error (above) wrapped in when
// it is a 400 the shop acts on; any other err as it is. It is idempotent.
func telegramError(err error) error {
	if err == nil || !errors.Is(err, tgbot.ErrorBadRequest) {
		return err
	}
	for _, k := range badRequestKinds {
		if errors.Is(err, k.err) {
			return err
		}
	}
	msg := err.Error()
	for _, k := range badRequestKinds {
		if strings.Contains(msg, k.part) {
			return fmt.Errorf("%w: %w", k.err, err)
		}
	}
	return err
}

// IsNotModified reports Telegram's "message is not modified" answer to an
// edit that changes nothing, which is harmless.
func IsNotModified(err error) bool { return errors.Is(telegramError(err), ErrNotModified) }

// menuLost reports an edit refused because the menu message the session
// knows is not what is in the chat: deleted, or of the other kind (text
// where the session says photo, or the reverse). A Redis that lost the
// session's last seconds or a replica killed between showing a menu and
// saving the session leaves it so; every edit of it would fail, and a
// buyer pressing the menu they see would get no answer, so the menu is
// sent anew.
func menuLost(err error) bool { return errors.Is(telegramError(err), ErrMenuLost) }
