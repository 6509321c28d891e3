package manager

import (
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

// Names and values given before a line reach the line in order; a logger that never logs hands
// nothing to the sink.
func TestLazyValues(t *testing.T) {
	var lines []string
	base := funcr.New(func(prefix, args string) { lines = append(lines, prefix+" "+args) }, funcr.Options{Verbosity: 1})
	l := LazyValues(base).WithName("controller").WithValues("a", 1).WithName("pods").WithValues("b", "two")
	other := l.WithValues("c", 3) // a sibling does not change l
	l.Info("hello", "d", 4)
	l.V(2).Info("hidden")
	other.Error(nil, "oops")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `controller/pods `) || !strings.Contains(lines[0], `"msg"="hello" "a"=1 "b"="two" "d"=4`) ||
		strings.Contains(lines[0], `"c"`) || !strings.Contains(lines[1], `"a"=1 "b"="two" "c"=3`) {
		t.Errorf("lines:\n%s", strings.Join(lines, "\n"))
	}
	if LazyValues(logr.Discard()).GetSink() != nil {
		t.Error("a discarding logger stays one")
	}
}
