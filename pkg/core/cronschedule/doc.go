// Package cronschedule reads the cron expressions of AdvancedCronJobs as Kubernetes' CronJob reads
// them (robfig/cron's standard parser, with an optional TZ= or CRON_TZ= prefix), for the
// controller and the validating webhook alike.
package cronschedule
