// Package reseller is a typed client for the upstream reseller store API
// (spec/reseller-api.md): the account, balance transactions, orders, the eight
// product lines and the manual-service order chat.
package reseller
