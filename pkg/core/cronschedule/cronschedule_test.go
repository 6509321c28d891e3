package cronschedule

import (
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	at := time.Date(2026, 12, 6, 10, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		spec string
		next time.Time // zero: an error
		zone bool
	}{
		{"@hourly", time.Date(2026, 12, 6, 11, 0, 0, 0, time.UTC), false},
		{"*/15 * * * *", time.Date(2026, 12, 6, 10, 45, 0, 0, time.UTC), false},
		{"CRON_TZ=UTC 0 12 * * *", time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC), true},
		{"* * *", time.Time{}, false},
		{"TZ=", time.Time{}, true}, // the library panics on it; Parse says it is malformed
	} {
		s, err := Parse(tc.spec)
		if tc.next.IsZero() {
			if err == nil {
				t.Errorf("Parse(%q): no error", tc.spec)
			}
		} else if err != nil || !s.Next(at).Equal(tc.next) {
			t.Errorf("Parse(%q): %v, next %v, want %v", tc.spec, err, s, tc.next)
		}
		if HasZonePrefix(tc.spec) != tc.zone {
			t.Errorf("HasZonePrefix(%q) = %v", tc.spec, !tc.zone)
		}
	}
}
