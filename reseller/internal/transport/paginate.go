package transport

import (
	"context"
	"fmt"
	"iter"
)

// Paginate walks cursor pages: fetch returns one page's items, has_more and
// next_cursor. It stops on has_more=false or a null next_cursor, and fails
// instead of looping when a cursor comes back twice.
func Paginate[T any](ctx context.Context, start int64,
	fetch func(ctx context.Context, cursor int64) ([]T, bool, *int64, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		cursor := start
		seen := map[int64]bool{}
		for {
			items, more, next, err := fetch(ctx, cursor)
			if err != nil {
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if !more || next == nil {
				return
			}
			if *next < 1 || *next == cursor || seen[*next] {
				yield(zero, fmt.Errorf("reseller: pagination does not advance (next_cursor %d after cursor %d)", *next, cursor))
				return
			}
			seen[cursor] = true
			cursor = *next
		}
	}
}
