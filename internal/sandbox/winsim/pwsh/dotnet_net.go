package pwsh

import (
	"math"
	"net/netip"
	"regexp"
)

// inetAtonForm is what IPAddress.Parse accepts besides a dotted quad and an
// IPv6 address (inet_aton's "10.1", "0x0A000001", octal parts): real, not
// modelled.
var inetAtonForm = regexp.MustCompile(`^(0[xX][0-9A-Fa-f]+|[0-9]+)(\.(0[xX][0-9A-Fa-f]+|[0-9]+)){0,3}$`)

func init() {
	registerType(&dotnetType{Full: "System.Net.IPAddress", Names: []string{"Net.IPAddress", "ipaddress"},
		Source: "https://learn.microsoft.com/en-us/dotnet/api/system.net.ipaddress",
		Methods: []string{"parse", "tryparse", "new", "isloopback", "hosttonetworkorder", "networktohostorder", "equals", "referenceequals",
			"isvalid", "isvalidutf8"},
		Props: map[string]func(*Runtime) (any, error){
			"any":      func(*Runtime) (any, error) { return ipAddress(netip.IPv4Unspecified()), nil },
			"loopback": func(*Runtime) (any, error) { return ipAddress(netip.AddrFrom4([4]byte{127, 0, 0, 1})), nil },
		},
		Static: map[string]func(*Runtime, []any) (any, error){
			// Parse(string): https://learn.microsoft.com/en-us/dotnet/api/system.net.ipaddress.parse
			"parse": func(_ *Runtime, a []any) (any, error) {
				if len(a) != 1 {
					return nil, errOverload("Parse", len(a))
				}
				if a[0] == nil {
					return nil, dotnetErr("System.ArgumentNullException", "Value cannot be null.\r\nParameter name: ipString")
				}
				s := toString(a[0])
				addr, err := netip.ParseAddr(s)
				if err == nil && addr.Zone() == "" {
					return ipAddress(addr), nil
				}
				if inetAtonForm.MatchString(s) {
					return nil, &Terminating{Rec: errUnsupported("[System.Net.IPAddress]::Parse of the inet_aton form '" + s + "'"), Script: true}
				}
				return nil, dotnetErr("System.FormatException", "An invalid IP address was specified.")
			},
			// new(byte[]) and new(long): https://learn.microsoft.com/en-us/dotnet/api/system.net.ipaddress.-ctor
			"new": func(_ *Runtime, a []any) (any, error) {
				if len(a) != 1 {
					if len(a) == 2 {
						return nil, &Terminating{Rec: errUnsupported("[System.Net.IPAddress]::new(byte[], long) (an IPv6 scope id)"), Script: true}
					}
					return nil, errOverload("new", len(a))
				}
				switch v := a[0].(type) {
				case int:
					if v < 0 || v > math.MaxUint32 {
						return nil, dotnetErr("System.ArgumentOutOfRangeException", "Specified argument was out of the range of valid values.\r\nParameter name: newAddress")
					}
					// The low four bytes, in memory (little-endian) order.
					return ipAddress(netip.AddrFrom4([4]byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)})), nil
				case nil:
					return nil, dotnetErr("System.ArgumentNullException", "Value cannot be null.\r\nParameter name: address")
				}
				conv, rec := convertTo(a[0], "System.Byte[]")
				if rec != nil {
					return nil, dotnetErr("System.Management.Automation.PSInvalidCastException", "Cannot convert argument \"address\", with value: \""+toString(a[0])+"\", for \"IPAddress\" to type \"System.Byte[]\": \""+rec.Message+"\"")
				}
				b := conv.([]byte)
				switch len(b) {
				case 4:
					return ipAddress(netip.AddrFrom4([4]byte(b))), nil
				case 16:
					return ipAddress(netip.AddrFrom16([16]byte(b))), nil
				}
				return nil, dotnetErr("System.ArgumentException", "An invalid IP address was specified.\r\nParameter name: address")
			},
		}})
	// [Math]::Pow: https://learn.microsoft.com/en-us/dotnet/api/system.math.pow
	if t, ok := lookupType("System.Math"); ok {
		t.Static["pow"] = func(_ *Runtime, a []any) (any, error) {
			if len(a) != 2 {
				return nil, errOverload("Pow", len(a))
			}
			x, ok1 := toNumber(a[0])
			y, ok2 := toNumber(a[1])
			if !ok1 || !ok2 {
				return nil, dotnetErr("System.Management.Automation.PSInvalidCastException", "Cannot convert the arguments of \"Pow\" to \"System.Double\".")
			}
			return math.Pow(toFloat(x), toFloat(y)), nil
		}
	}
}

// ipAddress is a System.Net.IPAddress: AddressFamily, ToString() the
// address's text, GetAddressBytes() a new byte[] (network order).
func ipAddress(addr netip.Addr) *Object {
	o := NewObject("System.Net.IPAddress")
	o.Str = addr.String()
	family := "InterNetwork"
	if addr.Is6() {
		family = "InterNetworkV6"
	}
	o.Set("AddressFamily", family)
	o.Set("IsIPv6LinkLocal", addr.Is6() && addr.IsLinkLocalUnicast())
	o.Methods["getaddressbytes"] = func(a []any) (any, error) {
		if len(a) != 0 {
			return nil, errOverload("GetAddressBytes", len(a))
		}
		return addr.AsSlice(), nil
	}
	o.Methods["tostring"] = func(a []any) (any, error) {
		if len(a) != 0 {
			return nil, errOverload("ToString", len(a))
		}
		return addr.String(), nil
	}
	return o
}
