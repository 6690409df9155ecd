package process

import (
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseProcAddr(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"0100007F:1F90", "127.0.0.1:8080"},
		{"00000000:0050", "0.0.0.0:80"},
		{"00000000000000000000000001000000:01BB", "[::1]:443"},
		{"00000000000000000000000000000000:0016", "[::]:22"},
		{"0000000000000000FFFF00000100007F:2379", "127.0.0.1:9081"},
	} {
		got, err := parseProcAddr(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if got.String() != tc.want {
			t.Errorf("%s: got %s, want %s", tc.in, got, tc.want)
		}
	}
	if _, err := parseProcAddr("zz:1"); err == nil {
		t.Error("malformed address accepted")
	}
}

func newGroup(t *testing.T) (*Group, string) {
	t.Helper()
	dir := t.TempDir()
	ledger := filepath.Join(dir, "ledger")
	g, err := NewGroup(filepath.Join(dir, "logs"), ledger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.StopAll(time.Second) })
	return g, ledger
}

// A process that ignores SIGTERM is killed after the grace period, and Stop
// says so; the ledger names it with its start time.
func TestStopKillsWhatIgnoresSIGTERM(t *testing.T) {
	g, ledger := newGroup(t)
	p, err := g.Start(Spec{Name: "stubborn", Path: "/bin/sh", Args: []string{"-c", "trap '' TERM; echo up:$((40+2)); while :; do sleep 0.1; done"}})
	if err != nil {
		t.Fatal(err)
	}
	waitLog(t, p, "up:42") // the trap is set
	b, err := os.ReadFile(ledger)
	if err != nil {
		t.Fatal(err)
	}
	start, err := StartTime(p.PID())
	if err != nil {
		t.Fatal(err)
	}
	if want := "pid " + Itoa(p.PID()) + " " + start + " stubborn\n"; string(b) != want {
		t.Errorf("ledger = %q, want %q", b, want)
	}
	err = p.Stop(300 * time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "was killed") {
		t.Errorf("Stop = %v, want an error saying it was killed", err)
	}
	if p.Running() {
		t.Error("still running after Stop")
	}
	if err := syscall.Kill(p.PID(), 0); err == nil {
		t.Error("the PID is still alive")
	}
}

// A CleanExit process that fails on SIGTERM is reported; one that exits 0
// is not.
func TestStopReportsUncleanExit(t *testing.T) {
	g, _ := newGroup(t)
	bad, err := g.Start(Spec{Name: "bad", Path: "/bin/sh", Args: []string{"-c", "trap 'exit 3' TERM; while :; do sleep 0.1; done"}, CleanExit: true})
	if err != nil {
		t.Fatal(err)
	}
	good, err := g.Start(Spec{Name: "good", Path: "/bin/sh", Args: []string{"-c", "trap 'exit 0' TERM; while :; do sleep 0.1; done"}, CleanExit: true})
	if err != nil {
		t.Fatal(err)
	}
	waitLog(t, bad, "+ /bin/sh")
	time.Sleep(300 * time.Millisecond) // let the shells install their traps
	errs := g.StopAll(5 * time.Second)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "bad") {
		t.Errorf("StopAll = %v, want one error about bad", errs)
	}
	if bad.Running() || good.Running() {
		t.Error("a process survived StopAll")
	}
}

// Logs are per process; DumpLogs prints what came after the mark.
func TestLogsSinceMark(t *testing.T) {
	g, _ := newGroup(t)
	p, err := g.Start(Spec{Name: "talker", Path: "/bin/sh", Args: []string{"-c", "echo one:$((0+1)); sleep 0.5; echo two:$((1+1)); sleep 60"}})
	if err != nil {
		t.Fatal(err)
	}
	waitLog(t, p, "one:1")
	marks := g.Marks()
	waitLog(t, p, "two:2")
	text, _, err := p.LogSince(marks[p.Name], 100)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text, "one:1") || !strings.Contains(text, "two:2") {
		t.Errorf("log since the mark holds what came before it: %q", text)
	}
	var sb strings.Builder
	g.DumpLogs(&sb, nil, 100)
	if !strings.Contains(sb.String(), "talker") || !strings.Contains(sb.String(), "one:1") {
		t.Errorf("DumpLogs without marks:\n%s", sb.String())
	}
}

func waitLog(t *testing.T, p *Process, s string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !p.LogContains(s) {
		if time.Now().After(deadline) {
			t.Fatalf("%s never logged %q", p, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// listenersOfPID finds the listening sockets of a process, with their
// address: here, those of the test binary itself.
func TestListenersOfPID(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	table, err := listenTable()
	if err != nil {
		t.Fatal(err)
	}
	ls, err := listenersOfPID(os.Getpid(), "self", table)
	if err != nil {
		t.Fatal(err)
	}
	want := netip.MustParseAddrPort(l.Addr().String())
	for _, got := range ls {
		if got.Addr == want {
			return
		}
	}
	t.Errorf("listeners of this process %v lack %s", ls, want)
}
