package cronschedule

import (
	"fmt"
	"strings"

	"github.com/robfig/cron/v3"
)

// HasZonePrefix reports whether a schedule names its own zone (TZ= or CRON_TZ=), which
// Kubernetes accepts but does not officially support.
func HasZonePrefix(sched string) bool { return strings.Contains(sched, "TZ") }

// Parse parses a standard five-field cron expression (or a descriptor such as @hourly),
// with an optional TZ= or CRON_TZ= prefix, as Kubernetes' CronJob does; malformed input the
// library would panic on is an error.
func Parse(spec string) (s cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("malformed schedule %q", spec)
		}
	}()
	return cron.ParseStandard(spec)
}
