package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReconcilesGivesCountsAndMeanTimes(t *testing.T) {
	before := map[string]float64{
		"c success": 2, "c requeue_after": 1,
		"c workqueue_queue_duration_seconds sum": 1.0, "c workqueue_queue_duration_seconds count": 10,
	}
	after := map[string]float64{
		"c success": 5, "c requeue_after": 1, "d success": 1,
		"c workqueue_queue_duration_seconds sum": 1.5, "c workqueue_queue_duration_seconds count": 20,
	}
	path := filepath.Join(t.TempDir(), "r.txt")
	if err := writeReconciles(path, before, after); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Counts that did not move are left out; a time is its sum's change over its count's, in ms.
	want := "c success 3\nc workqueue_queue_duration_seconds mean_ms 50.0 (10)\nd success 1\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
