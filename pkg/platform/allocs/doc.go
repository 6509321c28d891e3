// Package allocs measures what a piece of code allocates, for tests that bound memory by input.
package allocs
