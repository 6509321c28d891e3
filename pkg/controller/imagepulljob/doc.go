// Package imagepulljob runs ImagePullJobs: it picks the job's nodes (their NodeImages), asks up to
// `parallelism` of them at a time to pull the image by adding the job to the tag's owners in the
// NodeImage spec, and reports from the NodeImages' status what the nodes' kruise-daemons did. A
// job with completionPolicy Always ends once every node has finished (or at its active
// deadline) and is deleted ttlSecondsAfterFinished later; a job with Never keeps pulling on nodes
// that join. A job's tags stay in the NodeImages while the job exists (so NodeImage status keeps
// reporting the pulled image) and are released when it is deleted; the tags of an ended job that
// had not finished are released at once, which stops their pulls. Its pull secrets are copied
// for the daemons only when they are docker-config secrets, and only over copies Kruise marked as
// its own (PlanSecretCopy); otherwise the job starts no pull and says why.
package imagepulljob
