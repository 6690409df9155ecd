package process

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// WaitHTTP polls url with client until it answers 200, the process exits,
// or ctx ends. The error carries the last answer and the end of the log.
func WaitHTTP(ctx context.Context, p *Process, client *http.Client, url string) error {
	var last string
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(body)))
		} else {
			last = err.Error()
		}
		select {
		case <-p.Exited():
			return p.exitedError("before " + url + " answered")
		case <-ctx.Done():
			return fmt.Errorf("%s: %s did not answer 200 (last: %s): %w", p, url, last, ctx.Err())
		case <-tick.C:
		}
	}
}

// exitedError describes an early exit with the end of the log.
func (p *Process) exitedError(when string) error {
	tail, _, _ := p.LogSince(0, 5)
	return fmt.Errorf("%s exited (%v) %s; end of its log:\n%s", p, exitDescription(p.waitErr), when, tail)
}

// ExitedError describes an early exit with the end of the log, or returns
// nil while the process runs.
func (p *Process) ExitedError(when string) error {
	if p.Running() {
		return nil
	}
	return p.exitedError(when)
}

// PortInUse reports whether the process exited because a port it was given
// was taken between picking and binding it; the caller may retry with new
// ports.
func (p *Process) PortInUse() bool {
	return !p.Running() && p.LogContains("address already in use")
}

// FreePorts returns n distinct loopback ports that are free now.
func FreePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Itoa is strconv.Itoa, for building argument lists.
func Itoa(i int) string { return strconv.Itoa(i) }
