// Package rawjson reads the JSON values whose shape the upstream spec does
// not show, kept raw by the reseller wire types: chat messages (their text,
// time, id, author, image and whether the operator wrote them, looked for
// under the field names commonly used for each) and delivered game keys and
// gift-card codes (a string as it is, an object's key with its pin or
// password, else compact JSON). Every function tolerates any JSON and
// returns zero values when nothing fits; none of them fails.
//
// The reseller package exposes these readings as methods (ChatMessage.Text,
// Order.DeliveredKeys ...), which document the field names they try.
package rawjson
