// Package schema checks Bot API calls against the official Bot API schema
// (an embedded copy of botapi.json, see Embedded) and the
// documented value rules its types cannot express. The fake Bot API server
// (package botapitest) checks every request, every result it answers and
// every update a test pushes with it.
//
// CheckCall checks a call's top-level parameters as they arrived (Param:
// text, JSON or an uploaded file) and returns them decoded; CheckJSON
// checks a JSON value against type expressions. ParseHTML parses a text in
// Telegram's HTML parse mode into plain text and entities, as Telegram
// does; UTF16Len counts characters the way Telegram's limits do.
//
// What the checks cover is described in package botapitest's
// documentation; the value rules are in rules.go.
package schema
