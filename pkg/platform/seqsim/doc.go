// Package seqsim is the one harness of the planners' seeded sequence simulations.
package seqsim
