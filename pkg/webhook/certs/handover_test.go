package certs

import (
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// The previous CA leaves the bundle once every replica that reported within ReportTTL serves the
// current CA; a replica gone quiet for longer does not hold it; without any report it stays.
func TestHandedOver(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	opts := Options{Clock: clocktesting.NewFakePassiveClock(now)}.withDefaults()
	current, old := []byte("current CA"), []byte("old CA")
	b := &Bundle{CACert: current}
	secret := func(reports map[string]servedReport) *corev1.Secret {
		raw, _ := json.Marshal(reports)
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{ServedByAnnotation: string(raw)}},
			Data: map[string][]byte{KeyCACert: current, KeyPreviousCACert: old}}
	}
	fresh, stale := now.Add(-time.Minute), now.Add(-opts.ReportTTL-time.Minute)
	for _, tc := range []struct {
		name    string
		reports map[string]servedReport
		want    bool
	}{
		{"no report", nil, false},
		{"all serve the current CA", map[string]servedReport{"a": {fingerprint(current), fresh}, "b": {fingerprint(current), fresh}}, true},
		{"one still serves the old CA", map[string]servedReport{"a": {fingerprint(current), fresh}, "b": {fingerprint(old), fresh}}, false},
		{"the one on the old CA is gone", map[string]servedReport{"a": {fingerprint(current), fresh}, "b": {fingerprint(old), stale}}, true},
		{"only stale reports", map[string]servedReport{"a": {fingerprint(current), stale}}, false},
	} {
		if got := handedOver(secret(tc.reports), b, opts); got != tc.want {
			t.Errorf("%s: handed over %v, want %v", tc.name, got, tc.want)
		}
	}
	noPrevious := secret(map[string]servedReport{"a": {fingerprint(current), fresh}})
	delete(noPrevious.Data, KeyPreviousCACert)
	if handedOver(noPrevious, b, opts) {
		t.Error("nothing to hand over without a previous CA")
	}
}
