package catalog

import (
	"context"

	"shopbot/flows"
	"shopbot/flows/shop"
	"shopbot/state/redisstore/records"
)

// Reviews is the flows' view of the review store: a product's figures and
// its latest reviews with a text (flows.Reviews).
type Reviews struct{ Store *records.Reviews }

// ProductReviews returns what buyers said of product (its deep link).
func (r Reviews) ProductReviews(ctx context.Context, product string) (*flows.ReviewSummary, error) {
	sum, err := r.Store.Summary(ctx, product, shop.ReviewsShown)
	if err != nil {
		return nil, err
	}
	out := &flows.ReviewSummary{Count: sum.Count, Stars: sum.Stars}
	for _, rv := range sum.Recent {
		out.Recent = append(out.Recent, flows.ReviewLine{Stars: rv.Stars, Text: rv.Text})
	}
	return out, nil
}
