package procstat

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestParseListening(t *testing.T) {
	// A table as Linux prints it: address words in the host's byte order.
	line := func(sl int, local, remote, state string, inode int) string {
		return fmt.Sprintf("%4d: %s %s %s 00000000:00000000 00:00000000 00000000     0        0 %d 1 0000000000000000 100 0 0 10 0\n",
			sl, procAddr(local), procAddr(remote), state, inode)
	}
	table := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
		line(0, "127.0.0.1:8080", "0.0.0.0:0", "0A", 101) +
		line(1, "0.0.0.0:80", "0.0.0.0:0", "0A", 102) +
		line(2, "127.0.0.1:8081", "127.0.0.1:54321", "01", 103) + // a connection
		line(3, "127.0.0.1:8082", "0.0.0.0:0", "0A", 999) + // another process's
		line(4, "[::]:81", "[::]:0", "0A", 104) +
		line(5, "[::1]:82", "[::]:0", "0A", 105) +
		line(6, "[::ffff:127.0.0.1]:83", "[::]:0", "0A", 106)
	inodes := map[string]bool{"101": true, "102": true, "103": true, "104": true, "105": true, "106": true}
	got, err := parseListening(strings.NewReader(table), inodes)
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.AddrPort{
		netip.MustParseAddrPort("127.0.0.1:8080"),
		netip.MustParseAddrPort("0.0.0.0:80"),
		netip.MustParseAddrPort("[::]:81"),
		netip.MustParseAddrPort("[::1]:82"),
		netip.MustParseAddrPort("127.0.0.1:83"),
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}

	for _, bad := range []string{"zz00007F:1F90", "0100007F", "0100007F:XYZ", "01007F:1F90"} {
		row := "sl local\n 0: " + bad + " 00000000:0000 0A 0 0 0 0 0 101\n"
		if _, err := parseListening(strings.NewReader(row), inodes); err == nil {
			t.Errorf("address %q: got no error", bad)
		}
	}
}

// procAddr writes an address as /proc/net/tcp and tcp6 do: the IP as
// 32-bit words in the host's byte order, in hex, and the port in hex.
func procAddr(s string) string {
	ap := netip.MustParseAddrPort(s)
	ip := ap.Addr().AsSlice()
	var b strings.Builder
	for i := 0; i < len(ip); i += 4 {
		fmt.Fprintf(&b, "%08X", binary.NativeEndian.Uint32(ip[i:]))
	}
	return fmt.Sprintf("%s:%04X", b.String(), ap.Port())
}

func TestListening(t *testing.T) {
	loop, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer loop.Close()
	all, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	got, err := Listening(0)
	if err != nil {
		t.Fatal(err)
	}
	wantLoop := netip.MustParseAddrPort(loop.Addr().String())
	allPort := uint16(all.Addr().(*net.TCPAddr).Port)
	if !slices.Contains(got, wantLoop) {
		t.Errorf("got %v, want %v among them", got, wantLoop)
	}
	if !slices.ContainsFunc(got, func(a netip.AddrPort) bool { return a.Port() == allPort && a.Addr().IsUnspecified() }) {
		t.Errorf("got %v, want the unspecified address on port %d among them", got, allPort)
	}
}
