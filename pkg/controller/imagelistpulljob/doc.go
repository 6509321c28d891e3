// Package imagelistpulljob runs ImageListPullJobs: one ImagePullJob per listed image (owned by the
// list, carrying the list's template), a status summed up from them, and the list's own
// completion and ttlSecondsAfterFinished. The per-image jobs do the pulling (pkg/controller/imagepulljob).
package imagelistpulljob
