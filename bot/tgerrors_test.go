package bot

import (
	"errors"
	"fmt"
	"testing"

	tgbot "github.com/go-telegram/bot"
)

// Telegram's 400s the shop acts on come out of telegramError as typed
// errors (errors.Is), once, however often they are classified; other
// errors, and the same words outside a 400, are left alone.
func TestTelegramErrorsAreTyped(t *testing.T) {
	bad := func(desc string) error { return fmt.Errorf("%w, %s", tgbot.ErrorBadRequest, desc) }
	for _, c := range []struct {
		err  error
		want error
	}{
		{bad("Bad Request: message is not modified: specified new message content"), ErrNotModified},
		{bad("Bad Request: message to edit not found"), ErrMenuLost},
		{bad("Bad Request: there is no text in the message to edit"), ErrMenuLost},
		{bad("Bad Request: there is no caption in the message to edit"), ErrMenuLost},
		{bad("Bad Request: CHARGE_ALREADY_REFUNDED"), ErrChargeAlreadyRefunded},
		{bad("Bad Request: chat not found"), nil},
		{fmt.Errorf("%w, %s", tgbot.ErrorForbidden, "message is not modified"), nil},
		{errors.New("message is not modified"), nil},
	} {
		got := telegramError(c.err)
		for _, typed := range []error{ErrNotModified, ErrMenuLost, ErrChargeAlreadyRefunded} {
			if errors.Is(got, typed) != (typed == c.want) {
				t.Errorf("%q: errors.Is %v = %v", c.err, typed, errors.Is(got, typed))
			}
		}
		if !errors.Is(got, c.err) {
			t.Errorf("%q: the original error is not kept", c.err)
		}
		if again := telegramError(got); again != got {
			t.Errorf("%q: classified twice: %q", c.err, again)
		}
	}
	if !IsNotModified(bad("Bad Request: message is not modified")) || IsNotModified(nil) || menuLost(nil) {
		t.Error("IsNotModified/menuLost on a raw error or nil")
	}
}
