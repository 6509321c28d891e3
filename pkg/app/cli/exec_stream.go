package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"

	"golang.org/x/term"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"
	"k8s.io/streaming/pkg/httpstream"
)

// execSession is one exec: the pod's container, the command and the streams it is given.
type execSession struct {
	pod        *corev1.Pod
	container  string
	command    []string
	stdin, tty bool
}

// newExecutor opens exec sessions at u the way kubectl does: over WebSocket, or over SPDY when
// the API server (or a proxy on the way) cannot upgrade to WebSocket.
func newExecutor(cfg *rest.Config, u *url.URL) (remotecommand.Executor, error) {
	ws, err := remotecommand.NewWebSocketExecutor(cfg, "GET", u.String())
	if err != nil {
		return nil, err
	}
	spdy, err := remotecommand.NewSPDYExecutor(cfg, "POST", u)
	if err != nil {
		return nil, err
	}
	return remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
}

// execURL is the pod's exec subresource for s, at the API server cfg names.
func execURL(cfg *rest.Config, s execSession) (*url.URL, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return cs.CoreV1().RESTClient().Post().Namespace(s.pod.Namespace).Resource("pods").Name(s.pod.Name).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: s.container, Command: s.command, Stdin: s.stdin,
			Stdout: true, Stderr: !s.tty, TTY: s.tty}, scheme.ParameterCodec).URL(), nil
}

// restConfig is the connection the flags give (or the tests').
func (e *Env) restConfig() (*rest.Config, error) {
	if e.config != nil {
		return e.config, nil
	}
	return e.Flags.ToRESTConfig()
}

// stream runs s, its output on the env's streams; the remote command's exit code comes back as a
// utilexec.ExitError (see ExitCode).
func (e *Env) stream(ctx context.Context, s execSession) error {
	if s.tty && !s.stdin {
		fmt.Fprintln(e.Streams.ErrOut, "Unable to use a TTY without -i (stdin): running without one")
		s.tty = false
	}
	in, isTerminal := e.Streams.In.(*os.File)
	isTerminal = isTerminal && term.IsTerminal(int(in.Fd()))
	if s.tty && !isTerminal {
		fmt.Fprintln(e.Streams.ErrOut, "Unable to use a TTY: stdin is not a terminal; running without one")
		s.tty = false
	}
	cfg, err := e.restConfig()
	if err != nil {
		return err
	}
	u, err := execURL(cfg, s)
	if err != nil {
		return err
	}
	newExec := e.executor
	if newExec == nil {
		newExec = newExecutor
	}
	ex, err := newExec(cfg, u)
	if err != nil {
		return err
	}
	opts := remotecommand.StreamOptions{Stdout: e.Streams.Out, Tty: s.tty}
	if s.stdin {
		opts.Stdin = e.Streams.In
	}
	if !s.tty {
		opts.Stderr = e.Streams.ErrOut
	}
	if s.tty {
		restore, size, err := rawTerminal(in)
		if err != nil {
			return err
		}
		defer restore()
		opts.TerminalSizeQueue = size
	}
	return ex.StreamWithContext(ctx, opts)
}

// rawTerminal puts the terminal in into raw mode, as a remote shell needs, and gives a function
// that restores it and the terminal's sizes for the remote TTY: its size now, then each new one
// as the terminal is resized (on Unix), until restore.
func rawTerminal(in *os.File) (restore func(), size remotecommand.TerminalSizeQueue, err error) {
	fd := int(in.Fd())
	state, err := term.MakeRaw(fd)
	if err != nil {
		return nil, nil, fmt.Errorf("put the terminal in raw mode: %w", err)
	}
	q := &terminalSizes{fd: fd, sizes: make(chan remotecommand.TerminalSize, 1), done: make(chan struct{})}
	q.send()
	stopWatching := watchResize(q.send)
	return func() {
		stopWatching()
		close(q.done)
		_ = term.Restore(fd, state)
	}, q, nil
}

// terminalSizes gives the terminal's size each time it is sent, the latest only.
type terminalSizes struct {
	fd    int
	sizes chan remotecommand.TerminalSize
	done  chan struct{}
}

// send queues the terminal's size now, replacing one not yet taken.
func (q *terminalSizes) send() {
	w, h, err := term.GetSize(q.fd)
	if err != nil {
		return
	}
	s := remotecommand.TerminalSize{Width: uint16(w), Height: uint16(h)}
	select {
	case <-q.sizes:
	default:
	}
	q.sizes <- s
}

// Next is the next size to give the remote TTY; nil once the session is over.
func (q *terminalSizes) Next() *remotecommand.TerminalSize {
	select {
	case s := <-q.sizes:
		return &s
	case <-q.done:
		return nil
	}
}

// ExitCode is the exit code kubectl-kruise exits with after err: the remote command's for exec,
// 2 when a rollout is stuck, 1 for any other error, 0 for none.
func ExitCode(err error) int {
	var exit utilexec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.Exited():
		return exit.ExitStatus()
	case errors.Is(err, ErrStuck):
		return 2
	}
	return 1
}
