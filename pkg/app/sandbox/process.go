package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Process is one program a sandbox started. PID plus the kernel's start time identify it, so a
// recycled PID is never mistaken for it.
type Process struct {
	Name      string   `json:"name"`
	PID       int      `json:"pid"`
	StartTime uint64   `json:"startTime"`
	Binary    string   `json:"binary"`
	Args      []string `json:"args"`
	// Env is what was added to the inherited environment.
	Env []string `json:"env,omitempty"`
	// Dir is its working directory; empty: the starting process's.
	Dir string `json:"dir,omitempty"`
	Log string `json:"log"`
}

// startProcess runs spec's Binary with its Args, in Dir, in its own session (it outlives the
// command that started it and ignores the terminal's signals), with stdout and stderr appended to
// its Log. Env, when not nil, adds to the environment the process inherits.
func startProcess(spec Process) (*Process, error) {
	out, err := os.OpenFile(spec.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	cmd := exec.Command(spec.Binary, spec.Args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Dir = spec.Dir
	if spec.Env != nil {
		cmd.Env = append(os.Environ(), spec.Env...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s (%s): %w", spec.Name, spec.Binary, err)
	}
	p := &spec
	p.PID = cmd.Process.Pid
	st, err := procStartTime(p.PID)
	if err != nil {
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("read start time of %s (pid %d): %w", p.Name, p.PID, err)
	}
	p.StartTime = st
	// Reap the child when it exits while this process lives; after we exit, init adopts it.
	go func() { _ = cmd.Wait() }()
	return p, nil
}

// Kill sends SIGKILL, as a crash would, and waits for the process to go.
func (p *Process) Kill() error {
	if !p.Alive() {
		return nil
	}
	if err := syscall.Kill(p.PID, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill %s (pid %d): %w", p.Name, p.PID, err)
	}
	if !waitGone(p, 10*time.Second) {
		return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.Name, p.PID)
	}
	return nil
}

// procStartTime reads field 22 of /proc/PID/stat: the process start time in clock ticks since boot.
func procStartTime(pid int) (uint64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is parenthesised and may hold spaces; fields resume after ')'.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, errors.New("malformed stat")
	}
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 20 {
		return 0, errors.New("short stat")
	}
	return strconv.ParseUint(fields[19], 10, 64)
}

// procState reads field 3 of /proc/PID/stat ("Z" for a zombie).
func procState(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 >= len(data) {
		return ""
	}
	return string(data[i+2])
}

// Alive reports whether the recorded process still runs (same PID and start time, not a zombie).
func (p *Process) Alive() bool {
	st, err := procStartTime(p.PID)
	return err == nil && st == p.StartTime && procState(p.PID) != "Z"
}

// Stop sends SIGTERM, waits up to grace for the process to exit, then sends SIGKILL. It never
// signals a process that is not the recorded one.
func (p *Process) Stop(grace time.Duration) error {
	if !p.Alive() {
		return nil
	}
	if err := syscall.Kill(p.PID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop %s (pid %d): %w", p.Name, p.PID, err)
	}
	if waitGone(p, grace) {
		return nil
	}
	if p.Alive() {
		if err := syscall.Kill(p.PID, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("kill %s (pid %d): %w", p.Name, p.PID, err)
		}
	}
	if !waitGone(p, 10*time.Second) {
		return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.Name, p.PID)
	}
	return nil
}

func waitGone(p *Process, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if !p.Alive() {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return !p.Alive()
}

// fileSize is file's size, 0 when it cannot be read.
func fileSize(file string) int64 {
	st, err := os.Stat(file)
	if err != nil {
		return 0
	}
	return st.Size()
}

// logFrom is what a log file holds from offset on (at most 64 KiB of it).
func logFrom(file string, offset int64) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	n, _ := f.ReadAt(buf, offset)
	return string(buf[:n])
}

// tail returns the last n lines of a log file, for error messages.
func tail(file string, n int) string {
	data, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// logPath is where a component's output goes.
func logPath(dir, name string) string { return filepath.Join(dir, "logs", name+".log") }
