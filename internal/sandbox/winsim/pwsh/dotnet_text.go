package pwsh

import (
	"strings"
	"unicode/utf16"
)

// System.Text.Encoding's ASCII and Unicode encodings
// (https://learn.microsoft.com/en-us/dotnet/api/system.text.encoding.ascii,
// https://learn.microsoft.com/en-us/dotnet/api/system.text.encoding.unicode):
// ASCIIEncoding replaces what is not 7-bit ASCII with '?' both ways;
// UnicodeEncoding is UTF-16 little-endian, GetBytes without a byte order
// mark, an odd last byte decoding as U+FFFD.

func asciiEncoding() *Object {
	o := NewObject("System.Text.ASCIIEncoding")
	o.Str = o.TypeName
	o.Set("EncodingName", "US-ASCII").Set("WebName", "us-ascii").Set("CodePage", 20127)
	o.Methods["getbytes"] = func(a []any) (any, error) {
		if len(a) != 1 {
			return nil, errOverload("GetBytes", len(a))
		}
		var b []byte
		for _, c := range toString(a[0]) {
			if c > 0x7F {
				c = '?'
			}
			b = append(b, byte(c))
		}
		return b, nil
	}
	o.Methods["getstring"] = func(a []any) (any, error) {
		b, err := bytesArg("GetString", a)
		if err != nil {
			return nil, err
		}
		var s strings.Builder
		for _, c := range b {
			if c > 0x7F {
				c = '?'
			}
			s.WriteByte(c)
		}
		return s.String(), nil
	}
	return o
}

func unicodeEncoding() *Object {
	o := NewObject("System.Text.UnicodeEncoding")
	o.Str = o.TypeName
	o.Set("EncodingName", "Unicode").Set("WebName", "utf-16").Set("CodePage", 1200)
	o.Methods["getbytes"] = func(a []any) (any, error) {
		if len(a) != 1 {
			return nil, errOverload("GetBytes", len(a))
		}
		u := utf16.Encode([]rune(toString(a[0])))
		b := make([]byte, 0, 2*len(u))
		for _, c := range u {
			b = append(b, byte(c), byte(c>>8))
		}
		return b, nil
	}
	o.Methods["getstring"] = func(a []any) (any, error) {
		b, err := bytesArg("GetString", a)
		if err != nil {
			return nil, err
		}
		u := make([]uint16, 0, len(b)/2)
		for i := 0; i+1 < len(b); i += 2 {
			u = append(u, uint16(b[i])|uint16(b[i+1])<<8)
		}
		s := string(utf16.Decode(u))
		if len(b)%2 == 1 {
			s += "\uFFFD"
		}
		return s, nil
	}
	return o
}

// bytesArg is the byte[] argument of GetString.
func bytesArg(method string, a []any) ([]byte, error) {
	if len(a) != 1 {
		return nil, errOverload(method, len(a))
	}
	b, ok := a[0].([]byte)
	if !ok {
		return nil, dotnetErr("System.Management.Automation.PSInvalidCastException", "Cannot convert argument \"bytes\" to type \"System.Byte[]\"")
	}
	return b, nil
}
