package shop

import (
	"context"
	"strings"

	"github.com/shopspring/decimal"

	"shopbot/flows"
	"shopbot/locales"
)

// ReviewsShown is how many of a product's latest reviews its screen
// quotes.
const ReviewsShown = 2

// maxQuotedReview clips a quoted review on a product's screen.
const maxQuotedReview = 120

// WithReviews adds to a product screen's text, under its heading, what
// buyers said of the product (its deep link): the average of their stars, how many rated it,
// and the latest reviews with a text, escaped. Without reviews (or
// without a store, or when it cannot be read) the text is as it was: a
// screen never fails for its reviews.
func (sh *Shop) WithReviews(ctx context.Context, env *flows.Env, text, product string) string {
	if sh.Reviews == nil {
		return text
	}
	sum, err := sh.Reviews.ProductReviews(ctx, product)
	if err != nil || sum == nil || sum.Count <= 0 {
		return text
	}
	avg := decimal.NewFromInt(int64(sum.Stars)).DivRound(decimal.NewFromInt(int64(sum.Count)), 1)
	var b strings.Builder
	b.WriteString(env.N("reviews.summary", int64(sum.Count), "avg", locales.Decimal(env.Lang, avg, 1)))
	for i, r := range sum.Recent {
		if i == ReviewsShown {
			break
		}
		b.WriteString("\n" + env.T("reviews.quote", "stars", Stars(r.Stars), "text", locales.Escape(locales.Clip(r.Text, maxQuotedReview))))
	}
	// Under the product's heading (its first paragraph), above the rest.
	if head, rest, ok := strings.Cut(text, "\n\n"); ok {
		return head + "\n" + b.String() + "\n\n" + rest
	}
	return text + "\n" + b.String()
}

// Stars draws a rating of n (1 to 5) as five stars.
func Stars(n int) string {
	n = min(max(n, 0), 5)
	return strings.Repeat("★", n) + strings.Repeat("☆", 5-n)
}
