// Package wire holds the upstream API's wire conventions that the
// simulator's packages (resellersim and its catalog) share: the paths, the
// error body and its types (APIError, WriteError), an API call as a handler
// sees it (Request, with its query, body and image URL helpers), and how
// amounts, timestamps, nulls and catalog lists are written.
package wire
