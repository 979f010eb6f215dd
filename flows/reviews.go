package flows

import "context"

// Reviews reads what buyers said of a product, named by its deep link
// (ProductLink): how many rated it, their stars, and the latest reviews
// with a text. bot/catalog implements it over the review store.
type Reviews interface {
	ProductReviews(ctx context.Context, product string) (*ReviewSummary, error)
}

// ReviewSummary is a product's reviews as its screen shows them: Count
// buyers gave Stars stars in all; Recent are the latest with a text,
// newest first (the text as the buyer typed it, unescaped).
type ReviewSummary struct {
	Count  int
	Stars  int
	Recent []ReviewLine
}

// ReviewLine is one review shown on a product's screen.
type ReviewLine struct {
	Stars int
	Text  string
}
