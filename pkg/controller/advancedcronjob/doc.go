// Package advancedcronjob runs AdvancedCronJobs: on every tick of spec.schedule it creates one
// child — a batch/v1 Job, a BroadcastJob or an ImageListPullJob, from the one template set — as
// OpenKruise v1.9.0 does, so that either manager can take over from the other.
//
// Invariants:
//   - One tick, one child: a child is named <cron job>-<tick's Unix seconds> and carries the tick
//     in apps.kruise.io/scheduled-at, the template's labels and annotations, and the cron job as
//     its controller.
//   - A tick runs at most once: status.lastScheduleTime never goes back, whatever happens to the
//     children (a TTL, a history limit of 0, a user's delete), so a finished BroadcastJob is never
//     recreated in a loop (kruise#862, #1488; OpenKruise re-derives the time from the children
//     still there).
//   - Only the most recent due tick runs: after the last run (or the creation), within
//     startingDeadlineSeconds, read in spec.timeZone (the manager's zone when unset). More than
//     100 missed ticks are reported (TooManyMissedTimes) and the most recent still runs, as in
//     Kubernetes' CronJob; OpenKruise stops with an error.
//   - concurrencyPolicy: Forbid never starts a child while one runs (the tick stays due until its
//     deadline), Replace deletes the running children before it starts the new one, Allow runs
//     them side by side. paused starts nothing.
//   - Finished children beyond successfulJobsHistoryLimit / failedJobsHistoryLimit are deleted,
//     oldest first; running ones never are. A Job or BroadcastJob is finished by its Complete or
//     Failed condition, an ImageListPullJob by its completionTime.
//   - The plan (plan.go) is pure: the snapshot and the clock in, decisions with their reasons and
//     the next tick out; apply.go is the only writer of children, controller.go of the status.
package advancedcronjob
