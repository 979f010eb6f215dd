// Package support is a buyer's conversation with the shop's admins
// (/support, /paysupport, the Help button) and the shop's terms (/terms).
// What the buyer writes goes to every admin with the buyer's link and
// recent orders and a Reply button; an admin answers with that button or
// by replying to the relayed message (TakeReply, which the bot's dispatch
// calls for an admin's reply); /tickets lists the open tickets. A buyer
// may write Limit messages per Window; what they write within a fold
// (Options.Fold) waits in the ticket and reaches each admin as one relay,
// sent by Run's background relay (a job schedule), paced like any message
// the shop starts and never from inside the buyer's update. A ticket
// (one per buyer) stays open until the buyer or an admin closes it;
// tickets live in Redis, so they survive restarts and are shared by
// replicas.
//
// It is not part of the order chat relay (bot/orderchat): that one talks
// to the upstream's operator about one order through the reseller API and
// polls for answers; support talks to the shop's own admins through
// Telegram alone, and shares no code, store or timing with it.
package support
