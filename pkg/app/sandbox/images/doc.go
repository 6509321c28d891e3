// Package images builds the small container images a sandbox's real node runs, offline and
// reproducibly, from a static busybox binary, and pushes them to a registry. The same inputs always
// give the same digests: every timestamp is zero, every file is owned by root, and the layers are
// compressed deterministically.
package images
