package pwsh

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// TextEncoding is a System.Text.Encoding the simulator models: how Windows
// PowerShell 5.1 and .NET Framework turn text into a file's bytes and back.
//
//	Encoding                 bytes                                    preamble (GetPreamble)
//	UTF8 ([Text.Encoding])   UTF-8                                    EF BB BF
//	UTF8 no BOM              UTF-8 (new UTF8Encoding($false))         none
//	Unicode                  UTF-16LE                                 FF FE
//	BigEndianUnicode         UTF-16BE                                 FE FF
//	UTF32                    UTF-32LE                                 FF FE 00 00
//	ASCII                    7-bit; anything else '?'                 none
//	Default (ANSI)           code page 1252 (en-US Windows Server)    none
//	OEM                      code page 437                            none
//
// Sources: https://learn.microsoft.com/en-us/dotnet/api/system.text.encoding
// (UTF8, Unicode, BigEndianUnicode, UTF32, ASCII, Default: "the system's
// active code page" on .NET Framework), .getpreamble, and
// https://learn.microsoft.com/en-us/dotnet/api/system.text.utf8encoding.-ctor
// (UTF8Encoding() and UTF8Encoding(false) emit no byte order mark).
// UTF-7 is real but not modelled: callers refuse it.
type TextEncoding struct {
	Name     string // the .NET WebName
	CodePage int
	kind     encKind
	bom      bool
}

type encKind int

const (
	encUTF8 encKind = iota
	encUTF16LE
	encUTF16BE
	encUTF32LE
	encASCII
	encCP1252
	encCP437
)

// The encodings, as .NET names them.
var (
	EncUTF8             = TextEncoding{Name: "utf-8", CodePage: 65001, kind: encUTF8, bom: true}
	EncUTF8NoBOM        = TextEncoding{Name: "utf-8", CodePage: 65001, kind: encUTF8}
	EncUnicode          = TextEncoding{Name: "utf-16", CodePage: 1200, kind: encUTF16LE, bom: true}
	EncBigEndianUnicode = TextEncoding{Name: "utf-16BE", CodePage: 1201, kind: encUTF16BE, bom: true}
	EncUTF32            = TextEncoding{Name: "utf-32", CodePage: 12000, kind: encUTF32LE, bom: true}
	EncASCII            = TextEncoding{Name: "us-ascii", CodePage: 20127, kind: encASCII}
	EncDefault          = TextEncoding{Name: "Windows-1252", CodePage: 1252, kind: encCP1252}
	EncOEM              = TextEncoding{Name: "IBM437", CodePage: 437, kind: encCP437}
)

// Preamble is Encoding.GetPreamble: the byte order mark a StreamWriter
// writes at the start of a file.
func (e TextEncoding) Preamble() []byte {
	if !e.bom {
		return nil
	}
	switch e.kind {
	case encUTF8:
		return []byte{0xEF, 0xBB, 0xBF}
	case encUTF16LE:
		return []byte{0xFF, 0xFE}
	case encUTF16BE:
		return []byte{0xFE, 0xFF}
	case encUTF32LE:
		return []byte{0xFF, 0xFE, 0x00, 0x00}
	}
	return nil
}

// Bytes is Encoding.GetBytes (no preamble). What a single-byte code page
// cannot hold becomes '?' (.NET's replacement fallback).
func (e TextEncoding) Bytes(text string) []byte {
	var b []byte
	switch e.kind {
	case encUTF8:
		return []byte(strings.ToValidUTF8(text, "\uFFFD"))
	case encUTF16LE, encUTF16BE:
		for _, u := range utf16.Encode([]rune(text)) {
			if e.kind == encUTF16LE {
				b = append(b, byte(u), byte(u>>8))
			} else {
				b = append(b, byte(u>>8), byte(u))
			}
		}
	case encUTF32LE:
		for _, r := range text {
			b = append(b, byte(r), byte(r>>8), byte(r>>16), byte(r>>24))
		}
	default:
		cm := e.charmap()
		for _, r := range text {
			switch {
			case r < 0x80:
				b = append(b, byte(r))
			case cm != nil:
				if c, ok := cm.EncodeRune(r); ok {
					b = append(b, c)
					continue
				}
				b = append(b, '?')
			default:
				b = append(b, '?')
			}
		}
	}
	return b
}

func (e TextEncoding) charmap() *charmap.Charmap {
	switch e.kind {
	case encCP1252:
		return charmap.Windows1252
	case encCP437:
		return charmap.CodePage437
	}
	return nil
}

// String is Encoding.GetString (a preamble in b is text, as in .NET).
func (e TextEncoding) String(b []byte) string {
	switch e.kind {
	case encUTF8:
		return strings.ToValidUTF8(string(b), "\uFFFD")
	case encUTF16LE, encUTF16BE:
		u := make([]uint16, 0, len(b)/2)
		for i := 0; i+1 < len(b); i += 2 {
			if e.kind == encUTF16LE {
				u = append(u, uint16(b[i])|uint16(b[i+1])<<8)
			} else {
				u = append(u, uint16(b[i])<<8|uint16(b[i+1]))
			}
		}
		s := string(utf16.Decode(u))
		if len(b)%2 == 1 {
			s += "\uFFFD"
		}
		return s
	case encUTF32LE:
		var s strings.Builder
		for i := 0; i+3 < len(b); i += 4 {
			r := rune(uint32(b[i]) | uint32(b[i+1])<<8 | uint32(b[i+2])<<16 | uint32(b[i+3])<<24)
			if !utf8.ValidRune(r) {
				r = utf8.RuneError
			}
			s.WriteRune(r)
		}
		return s.String()
	}
	cm := e.charmap()
	var s strings.Builder
	for _, c := range b {
		switch {
		case c < 0x80:
			s.WriteByte(c)
		case cm != nil:
			s.WriteRune(cm.DecodeByte(c))
		default:
			s.WriteByte('?')
		}
	}
	return s.String()
}

// Encode is what a StreamWriter in enc writes for text into a file that
// holds `existing` bytes before it: the preamble only at position 0
// (StreamWriter writes it when the stream's position is 0).
func (e TextEncoding) Encode(text string, existing int) []byte {
	if existing > 0 {
		return e.Bytes(text)
	}
	return append(e.Preamble(), e.Bytes(text)...)
}

// DecodeText is how a StreamReader with detectEncodingFromByteOrderMarks
// true reads a file (Get-Content, [IO.File]::ReadAllText, OpenText): a
// UTF-32LE, UTF-8, UTF-16LE or UTF-16BE byte order mark picks the encoding
// and is dropped; without one the text is read in fallback.
// Source: https://learn.microsoft.com/en-us/dotnet/api/system.io.streamreader.-ctor
// ("The detectEncodingFromByteOrderMarks parameter detects the encoding by
// looking at the first four bytes of the stream. It automatically recognizes
// UTF-8, little-endian UTF-16, big-endian UTF-16, little-endian UTF-32, and
// big-endian UTF-32 text if the file starts with the appropriate byte order
// marks.")
func DecodeText(b []byte, fallback TextEncoding) string {
	switch {
	case len(b) >= 4 && b[0] == 0xFF && b[1] == 0xFE && b[2] == 0 && b[3] == 0:
		return EncUTF32.String(b[4:])
	case len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF:
		return EncUTF8.String(b[3:])
	case len(b) >= 2 && b[0] == 0xFF && b[1] == 0xFE:
		return EncUnicode.String(b[2:])
	case len(b) >= 2 && b[0] == 0xFE && b[1] == 0xFF:
		return EncBigEndianUnicode.String(b[2:])
	}
	return fallback.String(b)
}

// encodingOf is the TextEncoding an Encoding object stands for.
func encodingOf(v any) (TextEncoding, bool) {
	if o, ok := v.(*Object); ok && o.enc != nil {
		return *o.enc, true
	}
	return TextEncoding{}, false
}
