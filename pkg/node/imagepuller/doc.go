// Package imagepuller is kruise-daemon's image puller: it pulls, over CRI, the image tags its node's
// NodeImage lists (with the tags' pull secrets, timeouts, retries and deadlines, at most Workers at
// a time) and reports each pull task in the NodeImage's status. It never removes an image.
//
// A task is identified by image name, tag and the tag's spec version: a new version (the manager
// asks again) restarts it, a tag removed from the spec cancels it and drops its status. A restarted
// daemon keeps what its status already reports as finished for the same version and starts again
// what was unfinished, keeping its start time (so activeDeadlineSeconds still counts from it).
package imagepuller
