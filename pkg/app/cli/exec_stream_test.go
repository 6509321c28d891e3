package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"

	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
)

// fakeExecutor stands for the API server's exec sessions: it records where it was opened and
// with what streams, writes out to stdout and ends with err.
type fakeExecutor struct {
	url  *url.URL
	opts remotecommand.StreamOptions
	out  string
	err  error
}

func (f *fakeExecutor) Stream(o remotecommand.StreamOptions) error {
	return f.StreamWithContext(context.Background(), o)
}

func (f *fakeExecutor) StreamWithContext(_ context.Context, o remotecommand.StreamOptions) error {
	f.opts = o
	fmt.Fprint(o.Stdout, f.out)
	return f.err
}

func streamEnv(t *testing.T, f *fakeExecutor) *Env {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-0",
		Annotations: map[string]string{sidecarrules.WorkingHotUpgradeContainerAnnotation: `{"proxy":"proxy-2"}`}},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}, {Name: "proxy-1"}, {Name: "proxy-2"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	env, _, _ := fakeEnv(t, pod)
	env.Streams.In = strings.NewReader("typed\n")
	env.config = &rest.Config{Host: "https://api.example:6443"}
	env.executor = func(_ *rest.Config, u *url.URL) (remotecommand.Executor, error) {
		f.url = u
		return f, nil
	}
	return env
}

// exec streams the session to the container it resolves: the exec subresource's query names the
// container, the command and the streams; the command's output is the plugin's, and its exit
// code is the plugin's (ExitCode).
func TestExecStreams(t *testing.T) {
	f := &fakeExecutor{out: "hello\n"}
	env := streamEnv(t, f)
	out, err := kubectlKruise(env, "exec", "web-0", "-S", "proxy", "--", "echo", "hello")
	if err != nil || !strings.Contains(out, "hello\n") || !strings.Contains(out, "working container is proxy-2") {
		t.Fatalf("exec: %v\n%s", err, out)
	}
	if f.url.Path != "/api/v1/namespaces/ns/pods/web-0/exec" {
		t.Errorf("exec path %s", f.url.Path)
	}
	q := f.url.Query()
	if q.Get("container") != "proxy-2" || !reflect.DeepEqual(q["command"], []string{"echo", "hello"}) ||
		q.Get("stdout") != "true" || q.Get("stderr") != "true" || q.Has("stdin") || q.Has("tty") {
		t.Errorf("exec query %v", q)
	}
	if f.opts.Stdin != nil || f.opts.Tty || f.opts.Stderr == nil {
		t.Errorf("without -i: stdin %v, tty %v, stderr %v", f.opts.Stdin, f.opts.Tty, f.opts.Stderr)
	}

	f.err = utilexec.CodeExitError{Err: errors.New("command terminated with exit code 3"), Code: 3}
	_, err = kubectlKruise(env, "exec", "web-0", "-c", "app", "-i", "-t", "--", "sh", "-c", "exit 3")
	if ExitCode(err) != 3 {
		t.Errorf("exit 3: exit code %d (%v)", ExitCode(err), err)
	}
	q = f.url.Query()
	if q.Get("container") != "app" || q.Get("stdin") != "true" || q.Has("tty") || f.opts.Stdin == nil || f.opts.Tty {
		t.Errorf("-i -t with a stdin that is no terminal: query %v, stdin %v, tty %v", q, f.opts.Stdin, f.opts.Tty)
	}
}

func TestExitCode(t *testing.T) {
	for err, want := range map[error]int{nil: 0, errors.New("x"): 1, fmt.Errorf("w: %w", ErrStuck): 2,
		fmt.Errorf("w: %w", utilexec.CodeExitError{Err: errors.New("x"), Code: 7}): 7} {
		if got := ExitCode(err); got != want {
			t.Errorf("ExitCode(%v) = %d, want %d", err, got, want)
		}
	}
}

// The remote TTY gets the latest size queued, and nil once the session is over.
func TestTerminalSizes(t *testing.T) {
	q := &terminalSizes{sizes: make(chan remotecommand.TerminalSize, 1), done: make(chan struct{})}
	q.sizes <- remotecommand.TerminalSize{Width: 80, Height: 24}
	if s := q.Next(); s == nil || s.Width != 80 || s.Height != 24 {
		t.Errorf("first size %v", s)
	}
	close(q.done)
	if s := q.Next(); s != nil {
		t.Errorf("after the session: %v", s)
	}
}
