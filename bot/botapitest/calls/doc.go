// Package calls is the fake Bot API server's record of the requests it
// answered: Call (a request with its parameters decoded by their schema
// type, the uploaded files and the answer) and Log, which records calls in
// order and lets tests read them, wait for them (WaitFor, WaitForCall) and
// follow them (Subscribe) without ever blocking the server.
package calls
