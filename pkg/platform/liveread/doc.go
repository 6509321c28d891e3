// Package liveread reads one object from the API server by a list restricted to its name: list and
// watch are all kruise-manager may do with most kinds (it has no get on them), and a list by name
// answers what a get would — for the reads that must not trust a lagging cache.
package liveread
