// Package process runs the real binaries of an e2e run as separate
// processes: one log file each, a ledger of what was started, and a stop by
// PID that escalates from SIGTERM to SIGKILL. A Group owns its processes;
// nothing it starts outlives the test binary.
package process

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Spec describes a process to start.
type Spec struct {
	// Name is unique within a group; it names the log file.
	Name string
	Path string
	Args []string
	// Env is added to the environment of the test binary.
	Env []string
	Dir string
	// CleanExit makes Stop report an error when the process does not exit
	// with status 0 after SIGTERM.
	CleanExit bool
}

// Process is a started process.
type Process struct {
	Spec
	LogPath string

	cmd     *exec.Cmd
	log     *os.File
	done    chan struct{}
	waitErr error
	// stopped is set once Stop or Kill was called: a later Stop of the
	// exited process is no error.
	stopped atomic.Bool
}

// PID returns the process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.done }

// ExitErr returns how the process exited; nil while it runs or after exit 0.
func (p *Process) ExitErr() error {
	select {
	case <-p.done:
		return p.waitErr
	default:
		return nil
	}
}

// Running reports whether the process has not exited yet.
func (p *Process) Running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// String names the process for messages.
func (p *Process) String() string {
	return fmt.Sprintf("%s (pid %d)", p.Name, p.PID())
}

// Stop sends SIGTERM and waits up to grace for the process to exit, then
// kills its process group. It returns an error when the process had to be
// killed, or, for CleanExit processes, when it exited with a failure.
func (p *Process) Stop(grace time.Duration) error {
	if !p.Running() {
		if p.stopped.Load() {
			return nil
		}
		return p.unexpectedExit()
	}
	p.stopped.Store(true)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		if p.CleanExit && p.waitErr != nil {
			return fmt.Errorf("%s exited with %v after SIGTERM", p, p.waitErr)
		}
		return nil
	case <-time.After(grace):
	}
	p.kill()
	<-p.done
	return fmt.Errorf("%s did not exit within %s of SIGTERM and was killed", p, grace)
}

// unexpectedExit describes an exit that happened before Stop was called.
func (p *Process) unexpectedExit() error {
	if p.CleanExit {
		return fmt.Errorf("%s exited on its own before it was stopped: %v", p, p.waitErr)
	}
	return nil
}

// Kill sends SIGKILL to the process group, as a crash would, and waits for
// the exit; a later Stop reports nothing.
func (p *Process) Kill() {
	p.stopped.Store(true)
	p.kill()
	<-p.done
}

// kill sends SIGKILL to the process group (every process started here leads
// its own group).
func (p *Process) kill() {
	_ = syscall.Kill(-p.PID(), syscall.SIGKILL)
	_ = p.cmd.Process.Kill()
}

// LogSize returns the current size of the log, a mark for LogSince.
func (p *Process) LogSize() int64 {
	st, err := os.Stat(p.LogPath)
	if err != nil {
		return 0
	}
	return st.Size()
}

// LogSince returns at most maxLines last lines of the log written after
// offset, and how many lines were left out before them.
func (p *Process) LogSince(offset int64, maxLines int) (string, int, error) {
	f, err := os.Open(p.LogPath)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return "", 0, err
	}
	var lines []string
	skipped := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > maxLines {
			lines = lines[1:]
			skipped++
		}
	}
	if err := sc.Err(); err != nil {
		return "", 0, err
	}
	return strings.Join(lines, "\n"), skipped, nil
}

// LogContains reports whether the log contains s.
func (p *Process) LogContains(s string) bool {
	b, err := os.ReadFile(p.LogPath)
	return err == nil && bytes.Contains(b, []byte(s))
}

// Group starts processes and stops them together.
type Group struct {
	logDir string
	ledger string

	mu    sync.Mutex
	procs []*Process
}

// NewGroup returns a group that writes logs under logDir. When ledger is not
// empty, every started process is appended to it as a line
// "pid <pid> <start time> <name>", so that a script can kill what a crashed
// test binary left behind (hack/e2e.sh does).
func NewGroup(logDir, ledger string) (*Group, error) {
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}
	return &Group{logDir: logDir, ledger: ledger}, nil
}

// Start starts a process with its output in <logDir>/<name>.log.
func (g *Group) Start(spec Spec) (*Process, error) {
	g.mu.Lock()
	for _, p := range g.procs {
		if p.Name == spec.Name && p.Running() {
			g.mu.Unlock()
			return nil, fmt.Errorf("a process named %s is running already", spec.Name)
		}
	}
	g.mu.Unlock()

	// A process started again under the same name gets a log of its own.
	logPath := filepath.Join(g.logDir, spec.Name+".log")
	for i := 2; ; i++ {
		if _, err := os.Stat(logPath); os.IsNotExist(err) {
			break
		}
		logPath = filepath.Join(g.logDir, fmt.Sprintf("%s-%d.log", spec.Name, i))
	}
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "+ %s %s\n", spec.Path, strings.Join(spec.Args, " "))
	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Dir = spec.Dir
	cmd.Env = append(os.Environ(), spec.Env...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// Its own process group: a terminal's Ctrl-C reaches the test binary,
		// which stops its processes in order, and a kill reaches the group.
		Setpgid: true,
		// If the test binary dies without stopping it, the kernel kills it.
		Pdeathsig: syscall.SIGKILL,
	}
	if err := startOnSpawner(cmd); err != nil {
		log.Close()
		return nil, fmt.Errorf("starting %s: %w", spec.Name, err)
	}
	p := &Process{Spec: spec, LogPath: logPath, cmd: cmd, log: log, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		fmt.Fprintf(log, "+ exited: %v\n", exitDescription(p.waitErr))
		log.Close()
		close(p.done)
	}()
	g.mu.Lock()
	g.procs = append(g.procs, p)
	g.mu.Unlock()
	g.record(p)
	return p, nil
}

func exitDescription(err error) string {
	if err == nil {
		return "status 0"
	}
	return err.Error()
}

// record appends the process to the ledger.
func (g *Group) record(p *Process) {
	if g.ledger == "" {
		return
	}
	start, err := StartTime(p.PID())
	if err != nil {
		return
	}
	f, err := os.OpenFile(g.ledger, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "pid %d %s %s\n", p.PID(), start, p.Name)
}

// StartTime returns the start time of a process in clock ticks since boot
// (field 22 of /proc/<pid>/stat), which tells a live process from a later
// one that reuses its PID.
func StartTime(pid int) (string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", err
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", errors.New("malformed stat")
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 20 {
		return "", errors.New("malformed stat")
	}
	return fields[19], nil
}

// Processes returns the processes started so far.
func (g *Group) Processes() []*Process {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]*Process(nil), g.procs...)
}

// StopAll stops every running process in parallel, each with the given
// grace period, and returns what went wrong.
func (g *Group) StopAll(grace time.Duration) []error {
	return Stop(g.Processes(), grace)
}

// Stop stops the given processes in parallel.
func Stop(procs []*Process, grace time.Duration) []error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.Stop(grace); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errs
}

// Marks returns the current log size of every process, for DumpLogs.
func (g *Group) Marks() map[string]int64 {
	m := map[string]int64{}
	for _, p := range g.Processes() {
		m[p.Name] = p.LogSize()
	}
	return m
}

// DumpLogs writes the log of every process since its mark (from the start
// when it has none), at most maxLines lines each.
func (g *Group) DumpLogs(w io.Writer, marks map[string]int64, maxLines int) {
	for _, p := range g.Processes() {
		state := "running"
		if !p.Running() {
			state = "exited: " + exitDescription(p.waitErr)
		}
		text, skipped, err := p.LogSince(marks[p.Name], maxLines)
		fmt.Fprintf(w, "\n===== log of %s, %s, %s =====\n", p, state, p.LogPath)
		if err != nil {
			fmt.Fprintf(w, "(cannot read the log: %v)\n", err)
			continue
		}
		if skipped > 0 {
			fmt.Fprintf(w, "(%d earlier lines left out; the whole log is in the file above)\n", skipped)
		}
		fmt.Fprintln(w, text)
	}
}

// spawner is one goroutine locked to its OS thread that starts every
// process. Pdeathsig fires when the thread that forked the child exits;
// this thread never exits, so it fires only when the test binary dies.
var spawner = sync.OnceValue(func() chan<- spawnRequest {
	ch := make(chan spawnRequest)
	go func() {
		runtime.LockOSThread()
		for req := range ch {
			req.result <- req.cmd.Start()
		}
	}()
	return ch
})

type spawnRequest struct {
	cmd    *exec.Cmd
	result chan error
}

func startOnSpawner(cmd *exec.Cmd) error {
	req := spawnRequest{cmd: cmd, result: make(chan error, 1)}
	spawner() <- req
	return <-req.result
}
