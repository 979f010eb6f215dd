package botapitest

import (
	"testing"
	"time"
)

func TestAddStarPaymentKeepsTransactionsInDateOrder(t *testing.T) {
	s := NewT(t)
	now := time.Now()
	mid := s.AddStarPayment(7, "q:b", 20, now.Add(-24*time.Hour), "")
	newest := s.AddStarPayment(7, "q:c", 30, now.Add(-time.Hour), "stxNEW")
	oldest := s.AddStarPayment(7, "q:a", 10, now.Add(-48*time.Hour), "")
	if again := s.AddStarPayment(7, "q:c", 30, now, "stxNEW"); again != newest {
		t.Fatalf("a known charge id gave %q", again)
	}
	txs := s.StarTransactions()
	if len(txs) != 3 || txs[0].ID != oldest || txs[1].ID != mid || txs[2].ID != newest {
		t.Fatalf("transactions = %+v", txs)
	}
	if txs[0].Date != now.Add(-48*time.Hour).Unix() || txs[0].Source.InvoicePayload != "q:a" || txs[0].Source.User.ID != 7 {
		t.Fatalf("oldest = %+v", txs[0])
	}
	if s.StarBalance() != 60 {
		t.Fatalf("balance = %d", s.StarBalance())
	}
	if s.Refunded(mid) {
		t.Fatal("refunded before any refund")
	}
}
