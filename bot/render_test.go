package bot_test

import "shopbot/bot/bottest"

var renderMessage = bottest.Render
