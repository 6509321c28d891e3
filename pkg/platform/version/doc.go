// Package version reports the build's version, set at link time by the Makefile.
package version
