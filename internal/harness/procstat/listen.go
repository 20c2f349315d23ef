package procstat

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// tcpListen is the state column of a listening socket in /proc/net/tcp.
const tcpListen = "0A"

// Listening returns the local addresses of the TCP sockets of process pid
// (0 for this process) that are listening, read from Linux's /proc: the
// sockets among the process's open files, looked up in the tables of its
// network namespace (/proc/<pid>/net/tcp and tcp6). Sockets of other
// processes in the namespace are left out. Elsewhere than on Linux it
// returns errors.ErrUnsupported.
func Listening(pid int) ([]netip.AddrPort, error) {
	if runtime.GOOS != "linux" {
		return nil, errors.ErrUnsupported
	}
	dir := "/proc/self"
	if pid != 0 {
		dir = "/proc/" + strconv.Itoa(pid)
	}
	fds, err := os.ReadDir(dir + "/fd")
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(dir + "/fd/" + fd.Name())
		if err != nil {
			continue // closed since it was listed
		}
		if inode, ok := strings.CutPrefix(link, "socket:["); ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	var addrs []netip.AddrPort
	for _, table := range []string{"tcp", "tcp6"} {
		f, err := os.Open(dir + "/net/" + table)
		if err != nil {
			return nil, err
		}
		got, err := parseListening(f, inodes)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("procstat: %s/net/%s: %w", dir, table, err)
		}
		addrs = append(addrs, got...)
	}
	return addrs, nil
}

// parseListening returns the local addresses of the listening sockets of a
// /proc/net/tcp or tcp6 table whose inode is in inodes.
func parseListening(r io.Reader, inodes map[string]bool) ([]netip.AddrPort, error) {
	var addrs []netip.AddrPort
	sc := bufio.NewScanner(r)
	sc.Scan() // the header line
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != tcpListen || !inodes[f[9]] {
			continue
		}
		ap, err := parseAddrPort(f[1])
		if err != nil {
			return nil, err
		}
		addrs = append(addrs, ap)
	}
	return addrs, sc.Err()
}

// parseAddrPort parses an address of /proc/net/tcp ("0100007F:1F90") or
// tcp6: the address in hex, as 32-bit words in the host's byte order, and
// the port in hex.
func parseAddrPort(s string) (netip.AddrPort, error) {
	h, p, ok := strings.Cut(s, ":")
	raw, err := hex.DecodeString(h)
	if !ok || err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, fmt.Errorf("bad address %q", s)
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("bad port in %q", s)
	}
	b := make([]byte, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.BigEndian.PutUint32(b[i:], binary.NativeEndian.Uint32(raw[i:]))
	}
	addr, _ := netip.AddrFromSlice(b)
	return netip.AddrPortFrom(addr.Unmap(), uint16(port)), nil
}
