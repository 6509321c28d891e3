// Package ordinal is the ordinal arithmetic of Advanced StatefulSets, shared by their controller
// and their validating webhook: which ordinals a set's replicas have (ordinals.start,
// reserveOrdinals), how reserveOrdinals reads, the bounds of both, and the names derived from an
// ordinal. Reserved ordinals are kept as intervals and replicas are walked, never listed, so that
// memory grows with the entries of a spec, not with the numbers in it.
package ordinal
