package process

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// Listener is a TCP socket a process listens on.
type Listener struct {
	Process string
	Addr    netip.AddrPort
}

// Listeners returns the TCP sockets the running processes listen on, read
// from /proc (Linux only).
func Listeners(procs []*Process) ([]Listener, error) {
	table, err := listenTable()
	if err != nil {
		return nil, err
	}
	var out []Listener
	for _, p := range procs {
		if !p.Running() {
			continue
		}
		ls, err := listenersOfPID(p.PID(), p.Name, table)
		if err != nil {
			return nil, err
		}
		out = append(out, ls...)
	}
	return out, nil
}

// listenTable returns the listening TCP sockets of the network namespace by
// inode.
func listenTable() (map[string]netip.AddrPort, error) {
	byInode := map[string]netip.AddrPort{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if err := readListenTable(table, byInode); err != nil {
			return nil, err
		}
	}
	return byInode, nil
}

// listenersOfPID returns the sockets of the table that pid holds open.
func listenersOfPID(pid int, name string, table map[string]netip.AddrPort) ([]Listener, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	fds, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Listener
	for _, fd := range fds {
		target, err := os.Readlink(dir + "/" + fd.Name())
		if err != nil || !strings.HasPrefix(target, "socket:[") {
			continue
		}
		if addr, ok := table[strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")]; ok {
			out = append(out, Listener{Process: name, Addr: addr})
		}
	}
	return out, nil
}

// readListenTable adds the listening sockets of one /proc/net table by inode.
func readListenTable(path string, byInode map[string]netip.AddrPort) error {
	f, err := os.Open(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != "0A" { // 0A: TCP_LISTEN
			continue
		}
		addr, err := parseProcAddr(fields[1])
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		byInode[fields[9]] = addr
	}
	return sc.Err()
}

// parseProcAddr parses "0100007F:1F90" (IPv4) or the 32-hex-digit IPv6 form;
// the kernel prints each 32-bit word in host (little-endian) byte order.
func parseProcAddr(s string) (netip.AddrPort, error) {
	host, port, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("malformed address %q", s)
	}
	raw, err := hex.DecodeString(host)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, fmt.Errorf("malformed address %q", s)
	}
	for i := 0; i < len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	p, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("malformed port in %q", s)
	}
	a, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(a.Unmap(), uint16(p)), nil
}
