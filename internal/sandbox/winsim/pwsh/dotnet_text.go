package pwsh

// System.Text.Encoding objects (https://learn.microsoft.com/en-us/dotnet/api/system.text.encoding):
// GetBytes and GetString in their TextEncoding (textenc.go), GetPreamble
// (https://learn.microsoft.com/en-us/dotnet/api/system.text.encoding.getpreamble),
// which is how File.WriteAllText(path, text, encoding) decides on a byte
// order mark. ASCIIEncoding replaces what is not 7-bit ASCII with '?' both
// ways; UnicodeEncoding is UTF-16 little-endian, an odd last byte decoding as
// U+FFFD.

var encodingTypes = map[encKind][2]string{
	encUTF8:    {"System.Text.UTF8Encoding", "Unicode (UTF-8)"},
	encUTF16LE: {"System.Text.UnicodeEncoding", "Unicode"},
	encUTF16BE: {"System.Text.UnicodeEncoding", "Unicode (Big-Endian)"},
	encUTF32LE: {"System.Text.UTF32Encoding", "Unicode (UTF-32)"},
	encASCII:   {"System.Text.ASCIIEncoding", "US-ASCII"},
	encCP1252:  {"System.Text.SBCSCodePageEncoding", "Western European (Windows)"},
	encCP437:   {"System.Text.SBCSCodePageEncoding", "OEM United States"},
}

func encodingObject(e TextEncoding) *Object {
	names := encodingTypes[e.kind]
	o := NewObject(names[0])
	o.Str = names[0]
	enc := e
	o.enc = &enc
	o.Set("EncodingName", names[1]).Set("WebName", e.Name).Set("CodePage", e.CodePage)
	o.Methods["getbytes"] = func(a []any) (any, error) {
		if len(a) != 1 {
			return nil, errOverload("GetBytes", len(a))
		}
		return e.Bytes(toString(a[0])), nil
	}
	o.Methods["getstring"] = func(a []any) (any, error) {
		b, err := bytesArg("GetString", a)
		if err != nil {
			return nil, err
		}
		return e.String(b), nil
	}
	o.Methods["getpreamble"] = func(a []any) (any, error) {
		if len(a) != 0 {
			return nil, errOverload("GetPreamble", len(a))
		}
		p := e.Preamble()
		if p == nil {
			p = []byte{}
		}
		return p, nil
	}
	return o
}

func utf8Encoding() *Object    { return encodingObject(EncUTF8) }
func asciiEncoding() *Object   { return encodingObject(EncASCII) }
func unicodeEncoding() *Object { return encodingObject(EncUnicode) }

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
