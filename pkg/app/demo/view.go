package demo

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// view prints progress: on a terminal one line redrawn in place, elsewhere a line per change at
// most once a second (a log that reads as a table).
type view struct {
	out       io.Writer
	live      bool
	last      string
	lastPrint time.Time
	header    bool
}

func newView(out io.Writer, live bool) *view { return &view{out: out, live: live} }

const header = "PHASE       PROGRESS                  UPDATED  READY  UNAVAIL  IN-PLACE  RECREATED  ENDPOINTS  ELAPSED  BATCH"

// show displays line as the current progress.
func (v *view) show(line string) {
	v.printHeader()
	if v.live {
		fmt.Fprint(v.out, "\r\033[K"+line)
		return
	}
	if body(line) == body(v.last) || time.Since(v.lastPrint) < time.Second {
		return
	}
	v.print(line)
}

// done displays line as the last of its phase.
func (v *view) done(line string) {
	v.printHeader()
	if v.live {
		fmt.Fprint(v.out, "\r\033[K"+line+"\n")
		return
	}
	v.print(line)
}

func (v *view) print(line string) {
	fmt.Fprintln(v.out, line)
	v.last, v.lastPrint = line, time.Now()
}

func (v *view) printHeader() {
	if !v.header {
		fmt.Fprintln(v.out, header)
		v.header = true
	}
}

// body is a progress line without its elapsed time, to tell a change from the clock moving.
func body(line string) string {
	f := strings.Fields(line)
	for i, w := range f {
		if strings.HasSuffix(w, "s") && strings.Contains(w, ".") {
			f[i] = ""
		}
	}
	return strings.Join(f, " ")
}

// line is one row of the progress table for observation o of a phase.
func (r *rollout) line(phase, batch string, o *observation, elapsed time.Duration) string {
	n := int(r.cfg.Replicas)
	done := o.updated
	if r.before == nil {
		done = o.ready
	}
	recreated := "-"
	inPlace := "-"
	if r.before != nil {
		recreated = fmt.Sprint(max(o.recreated, o.gone))
		inPlace = fmt.Sprint(o.inPlace)
	}
	return fmt.Sprintf("%-11s %s  %3d/%-3d  %3d/%-3d %4d     %5s     %5s      %3d/%-3d  %6.1fs  %s",
		phase, bar(done, n, 20), o.updated, n, o.ready, n, max(n-o.ready, 0), inPlace, recreated, o.endpoints, n, elapsed.Seconds(), batch)
}

// bar is a width-character progress bar of done out of total, with the percentage.
func bar(done, total, width int) string {
	if total <= 0 {
		total = 1
	}
	done = min(max(done, 0), total)
	full := done * width / total
	return fmt.Sprintf("[%s%s] %3d%%", strings.Repeat("#", full), strings.Repeat(".", width-full), done*100/total)
}
