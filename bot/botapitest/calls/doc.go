// Package calls is the fake Bot API server's view of the requests it
// answers. Read takes a request's parameters as they arrived (query string,
// JSON, urlencoded or multipart body), for the schema checks, and its
// uploaded files. Call is a request as recorded: its parameters decoded by
// their schema type, the files and the answer. Log records calls in order
// and lets tests read them, wait for them (WaitFor, WaitForCall) and follow
// them (Subscribe) without ever blocking the server.
package calls
