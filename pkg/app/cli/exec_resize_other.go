//go:build !unix

package cli

// watchResize does nothing where there is no SIGWINCH: the remote TTY keeps its first size.
func watchResize(func()) (stop func()) { return func() {} }
