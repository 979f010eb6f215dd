// Package money holds Money, a decimal.Decimal that reads and writes the
// upstream API's amounts: 4-place decimal strings ("12.5000"), accepting a
// plain JSON number too, never a float, never rounded silently. Package
// reseller exports it as reseller.Money (a type alias), with NewMoney,
// ParseMoney and MoneyPlaces.
package money
