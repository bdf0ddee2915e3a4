package winsim

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"
)

// tcpTestTimeout bounds Test-NetConnection's TCP connect. Windows gives up
// on an unanswered SYN after its retransmissions (TcpMaxConnectRetransmissions:
// about 21 seconds); a refused port answers at once.
const tcpTestTimeout = 21 * time.Second

// commonTCPPorts are Test-NetConnection -CommonTCPPort's names (the NetTCPIP
// module's Test-NetConnection: HTTP 80, RDP 3389, SMB 445, WINRM 5985).
var commonTCPPorts = map[string]int{"HTTP": 80, "RDP": 3389, "SMB": 445, "WINRM": 5985}

// testNetConnection is Test-NetConnection's TCP test
// (https://learn.microsoft.com/en-us/powershell/module/nettcpip/test-netconnection):
// a real TCP connect from this machine to -ComputerName on -Port or
// -CommonTCPPort. -InformationLevel Quiet returns only the result, a
// Boolean ("If you set this parameter to Quiet, the cmdlet returns basic
// information. For example, for a ping test, this cmdlet returns a Boolean
// value that indicates whether the attempt to ping a host or port is
// successful"); Detailed (the default) a TestNetConnectionResult with
// ComputerName, RemoteAddress, RemotePort and TcpTestSucceeded. Refused as
// not modelled: the ICMP test (no port), no -ComputerName (the internet
// beacon), -TraceRoute, -Hops, -DiagnoseRouting, -Constrain*. Windows also
// writes a warning when the test fails ("TCP connect to ... failed"); the
// engine has no warning stream, so none is shown. There is no -Quiet
// switch in Windows PowerShell 5.1 (that is Test-Connection's, and
// PowerShell 7's): the binder answers it as Windows does, with
// NamedParameterNotFound.
func testNetConnection() *Cmdlet {
	return &Cmdlet{Name: "Test-NetConnection", Class: "Test-NetConnection", Aliases: []string{"TNC"},
		Source: "https://learn.microsoft.com/en-us/powershell/module/nettcpip/test-netconnection", Behaviour: "a real TCP connect from this machine to -ComputerName on -Port or -CommonTCPPort; -InformationLevel Quiet returns a Boolean, else a TestNetConnectionResult with TcpTestSucceeded; a name that does not resolve fails the test",
		Params: []*Param{P("ComputerName", "System.String", 0, Alias("RemoteAddress", "cn")),
			P("Port", "System.Int32", -1, Alias("RemotePort")), P("CommonTCPPort", "System.String", 1, Set("HTTP", "RDP", "SMB", "WINRM")),
			P("InformationLevel", "System.String", -1, Set("Quiet", "Detailed")),
			P("TraceRoute", "SwitchParameter", -1, Unmodelled), P("Hops", "System.Int32", -1, Unmodelled), P("DiagnoseRouting", "SwitchParameter", -1, Unmodelled),
			P("ConstrainSourceAddress", "System.String", -1, Unmodelled), P("ConstrainInterface", "System.UInt32", -1, Unmodelled)},
		Run: func(c *Call) error {
			if !c.Has("ComputerName") {
				return c.Unmodelled("Test-NetConnection without -ComputerName (the internet beacon)")
			}
			port := 0
			switch {
			case c.Has("Port") && c.Has("CommonTCPPort"):
				return c.Unmodelled("-Port with -CommonTCPPort")
			case c.Has("Port"):
				port, _ = strconv.Atoi(Text(c.Value("Port")))
			case c.Has("CommonTCPPort"):
				port = commonTCPPorts[c.Str("CommonTCPPort")]
			default:
				return c.Unmodelled("the ICMP test (Test-NetConnection without -Port or -CommonTCPPort)")
			}
			name := c.Str("ComputerName")
			ctx, cancel := context.WithTimeout(c.Ctx, tcpTestTimeout)
			defer cancel()
			addr := ""
			ok := false
			if ips, err := net.DefaultResolver.LookupHost(ctx, name); err == nil && len(ips) > 0 {
				addr = ips[0]
				var d net.Dialer
				if conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(addr, strconv.Itoa(port))); err == nil {
					ok = true
					_ = conn.Close() // only the connect is tested
				}
			}
			if c.Str("InformationLevel") == "Quiet" {
				c.Write(ok)
				return nil
			}
			if addr == "" {
				return c.Unmodelled("the detailed result of a name that does not resolve")
			}
			o := NewObject("TestNetConnectionResult")
			o.Str = fmt.Sprintf("ComputerName     : %s\r\nRemoteAddress    : %s\r\nRemotePort       : %d\r\nTcpTestSucceeded : %v", name, addr, port, map[bool]string{true: "True", false: "False"}[ok])
			c.Write(o.Set("ComputerName", name).Set("RemoteAddress", addr).Set("RemotePort", port).Set("TcpTestSucceeded", ok))
			return nil
		}}
}
