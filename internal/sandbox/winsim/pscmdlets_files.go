package winsim

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/pwsh"
)

const mgmt = "https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.management/"
const util = "https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.utility/"

func ps(c *Call) *psHost { return c.Host.(*psHost) }

// encodings is FileSystemCmdletProviderEncoding (Windows PowerShell 5.1).
var encodings = []string{"Unknown", "String", "Unicode", "Byte", "BigEndianUnicode", "UTF8", "UTF7", "UTF32", "Ascii", "Default", "Oem", "BigEndianUTF32"}

// pathParams are the FileSystem cmdlets' -Path and -LiteralPath: String[]
// parameters, each mandatory in its own parameter set ("Path", the default,
// and "LiteralPath"), so naming both is AmbiguousParameterSet
// (about_Parameter_Sets; the cmdlets' [Parameter(ParameterSetName = ...)]
// declarations in PowerShell's source, e.g. RemoveItemCommand).
func pathParams(pos int) []*Param {
	return []*Param{P("Path", "System.String[]", pos, In("Path"), Mandatory), P("LiteralPath", "System.String[]", -1, Alias("PSPath"), In("LiteralPath"), Mandatory),
		P("Filter", "System.String", -1, Unmodelled), P("Include", "System.String[]", -1, Unmodelled),
		P("Exclude", "System.String[]", -1, Unmodelled), P("Credential", "System.Management.Automation.PSCredential", -1, Unmodelled)}
}

// itemPaths are the -Path or -LiteralPath values of the parameter set the
// call resolved to: each element of the array is one path.
func itemPaths(c *Call) []string {
	if c.Set == "LiteralPath" {
		return c.Strs("LiteralPath")
	}
	return c.Strs("Path")
}

// eachPath runs fn for each path of the call, as the provider cmdlets
// process each element of -Path or -LiteralPath in turn: a path on a drive
// the host does not have is a non-terminating DriveNotFound error (then the
// next path), wildcards in -Path are not modelled. noDrive, when set, runs
// after that error (Test-Path still answers False).
func eachPath(c *Call, fn func(p string, reg bool) error, noDrive func()) error {
	for _, p := range itemPaths(c) {
		if c.Set != "LiteralPath" && strings.ContainsAny(p, "*?[") {
			return c.Unmodelled("wildcards in -Path")
		}
		if drive, ok := missingDrive(p); ok {
			if err := c.Error(c.Fail(fmt.Sprintf("Cannot find drive. A drive with the name '%s' does not exist.", drive),
				"ObjectNotFound", drive, "DriveNotFoundException", "DriveNotFound", "System.Management.Automation.DriveNotFoundException")); err != nil {
				return err
			}
			if noDrive != nil {
				noDrive()
			}
			continue
		}
		if err := fn(p, isRegistry(p)); err != nil {
			return err
		}
	}
	return nil
}

// missingDrive reports a path on a drive other than the providers the host
// has: the FileSystem drive C: and the Registry's HKLM:.
func missingDrive(p string) (string, bool) {
	if len(p) >= 2 && p[1] == ':' && !strings.EqualFold(p[:1], "C") || (strings.Contains(p, ":") && !(len(p) >= 2 && p[1] == ':') && !isRegistry(p)) {
		return p[:strings.IndexByte(p, ':')], true
	}
	return "", false
}

// itemPath is the one path of a cmdlet that does not take several here (the
// registry cmdlets, Expand-Archive's String -Path): more than one is refused
// as not modelled; a missing drive is reported and gives "".
func itemPath(c *Call) (string, bool, error) {
	paths := itemPaths(c)
	if len(paths) != 1 {
		return "", false, c.Unmodelled(fmt.Sprintf("%d paths in one call", len(paths)))
	}
	var got string
	var reg bool
	err := eachPath(c, func(p string, r bool) error { got, reg = p, r; return nil }, nil)
	return got, reg, err
}

func isRegistry(p string) bool {
	l := strings.ToLower(p)
	return strings.HasPrefix(l, "hklm:") || strings.HasPrefix(l, `registry::`)
}

func pathNotFound(c *Call, p string) error {
	return c.Error(c.Fail(fmt.Sprintf("Cannot find path '%s' because it does not exist.", p), "ObjectNotFound", p,
		"ItemNotFoundException", "PathNotFound", "System.Management.Automation.ItemNotFoundException"))
}

// providerEncoding is the FileSystem provider's -Encoding
// (FileSystemCmdletProviderEncoding) in Windows PowerShell 5.1: without the
// parameter Set-Content and Add-Content write, and Get-Content reads, the ANSI
// code page (Default); String and Unicode are UTF-16LE, UTF8 has a byte order
// mark. Sources: about_Character_Encoding (5.1), "Character encoding in
// Windows PowerShell"
// (https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_character_encoding?view=powershell-5.1),
// and FileSystemProvider.cs GetEncodingFromEnum (PowerShell v6.0.0, the 5.1
// code). Byte, UTF7, BigEndianUTF32 and Unknown are real and not modelled.
func providerEncoding(c *Call) (pwsh.TextEncoding, error) {
	switch enc := c.Str("Encoding"); enc {
	case "", "Default":
		return pwsh.EncDefault, nil
	case "Ascii":
		return pwsh.EncASCII, nil
	case "Oem":
		return pwsh.EncOEM, nil
	case "UTF8":
		return pwsh.EncUTF8, nil
	case "String", "Unicode":
		return pwsh.EncUnicode, nil
	case "BigEndianUnicode":
		return pwsh.EncBigEndianUnicode, nil
	case "UTF32":
		return pwsh.EncUTF32, nil
	default:
		return pwsh.TextEncoding{}, c.Unmodelled("-Encoding " + enc)
	}
}

func contentCmdlet(name, class string, appendTo bool) *Cmdlet {
	return &Cmdlet{Name: name, Class: class, ShouldProcess: true,
		Source:    mgmt + strings.ToLower(name) + "?view=powershell-5.1",
		Behaviour: "writes the values, each followed by CRLF (none with -NoNewline), in -Encoding: Default (the ANSI code page 1252, also without -Encoding), Ascii, Oem (437), UTF8 (with a BOM), String/Unicode (UTF-16LE), BigEndianUnicode, UTF32 (each with a BOM at the file's start); Byte, UTF7, BigEndianUTF32, Unknown refused",
		Params: append(pathParams(0), P("Value", "System.Object[]", 1, Mandatory, Pipeline), P("NoNewline", "SwitchParameter", -1),
			P("Encoding", "Microsoft.PowerShell.Commands.FileSystemCmdletProviderEncoding", -1, Enum(encodings...)),
			P("Force", "SwitchParameter", -1, NoEffect("the file system models no read-only or hidden attributes, the only thing -Force overrides here")), P("PassThru", "SwitchParameter", -1, Unmodelled), P("Stream", "System.String", -1, Unmodelled)),
		DefaultSet: "Path",
		Run: func(c *Call) error {
			return eachPath(c, func(p string, reg bool) error { return writeContent(c, name, appendTo, p, reg) }, nil)
		}}
}

// writeContent is Set-Content or Add-Content on one path.
func writeContent(c *Call, name string, appendTo bool, p string, reg bool) error {
	if reg {
		return c.Unmodelled(name + " on the registry")
	}
	fs := ps(c).h.fs
	if ok, _ := fs.Stat(parentOf(fs.Clean(p))); !ok {
		return c.Error(c.Fail(fmt.Sprintf("Could not find a part of the path '%s'.", fs.Clean(p)), "ObjectNotFound", fs.Clean(p),
			"DirectoryNotFoundException", "GetContentWriterDirectoryNotFoundError", "System.IO.DirectoryNotFoundException"))
	}
	vals := c.Input
	if !c.HasInput {
		vals = itemsOf(c.Value("Value"))
	}
	var b strings.Builder
	for _, v := range vals {
		b.WriteString(Text(v))
		if !c.Switch("NoNewline") {
			b.WriteString("\r\n")
		}
	}
	enc, err := providerEncoding(c)
	if err != nil {
		return err
	}
	existing := 0
	if appendTo {
		if old, rerr := fs.ReadFile(p); rerr == nil {
			existing = len(old)
		}
	}
	data := enc.Encode(b.String(), existing)
	if werr := fs.WriteFile(p, data, appendTo); werr != nil {
		return c.Error(c.Fail(werr.Error(), "WriteError", p, "IOException", "SetContentWriterIOError", "System.IO.IOException"))
	}
	return nil
}

func itemsOf(v any) []any {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		return x
	}
	return []any{v}
}

var hashAlgorithms = []string{"SHA1", "SHA256", "SHA384", "SHA512", "MACTripleDES", "MD5", "RIPEMD160"}

func fileCmdlets() []*Cmdlet {
	return []*Cmdlet{
		contentCmdlet("Set-Content", "Microsoft.PowerShell.Commands.SetContentCommand", false),
		contentCmdlet("Add-Content", "Microsoft.PowerShell.Commands.AddContentCommand", true),
		{Name: "Get-Content", Class: "Microsoft.PowerShell.Commands.GetContentCommand", Aliases: []string{"cat", "gc", "type"},
			Source: mgmt + "get-content?view=powershell-5.1", Behaviour: "the file's lines (CRLF, LF or CR), or with -Raw the whole text; a UTF-8, UTF-16 or UTF-32 byte order mark picks the encoding (and is dropped), else the ANSI code page 1252",
			Params: append(pathParams(0), P("Raw", "SwitchParameter", -1), P("Encoding", "Microsoft.PowerShell.Commands.FileSystemCmdletProviderEncoding", -1, Enum(encodings...), Unmodelled),
				P("TotalCount", "System.Int64", -1, Alias("First", "Head"), Unmodelled), P("Tail", "System.Int32", -1, Alias("Last"), Unmodelled),
				P("ReadCount", "System.Int64", -1, Unmodelled), P("Delimiter", "System.String", -1, Unmodelled), P("Wait", "SwitchParameter", -1, Unmodelled),
				P("Force", "SwitchParameter", -1, NoEffect("the file system models no read-only or hidden attributes, the only thing -Force overrides here")), P("Stream", "System.String", -1, Unmodelled)),
			DefaultSet: "Path",
			Run: func(c *Call) error {
				return eachPath(c, func(p string, reg bool) error { return getContent(c, p, reg) }, nil)
			}},
		{Name: "New-Item", Class: "Microsoft.PowerShell.Commands.NewItemCommand", Aliases: []string{"ni"}, ShouldProcess: true,
			Source: mgmt + "new-item?view=powershell-5.1", Behaviour: "-ItemType Directory (parents created; an existing one is an error without -Force) or File (with -Value); outputs the item",
			// NewItemCommand: sets "pathSet" (the default: -Path mandatory)
			// and "nameSet" (-Name mandatory, -Path optional).
			DefaultSet: "pathSet",
			Params: []*Param{P("Path", "System.String[]", 0, MandatoryIn("pathSet")), P("Name", "System.String", -1, In("nameSet"), Mandatory), P("ItemType", "System.String", -1, Alias("Type")),
				P("Value", "System.Object", -1, Pipeline), P("Force", "SwitchParameter", -1), P("Credential", "System.Management.Automation.PSCredential", -1, Unmodelled)},
			Run: runNewItem},
		{Name: "Test-Path", Class: "Microsoft.PowerShell.Commands.TestPathCommand",
			Source: mgmt + "test-path?view=powershell-5.1", Behaviour: "True or False; -PathType Leaf/Container; registry keys the host models",
			Params: append(pathParams(0), P("PathType", "Microsoft.PowerShell.Commands.TestPathType", -1, Alias("Type"), Enum("Any", "Container", "Leaf")),
				P("IsValid", "SwitchParameter", -1, Unmodelled), P("OlderThan", "System.DateTime", -1, Unmodelled), P("NewerThan", "System.DateTime", -1, Unmodelled)),
			DefaultSet: "Path",
			Run: func(c *Call) error {
				return eachPath(c, func(p string, reg bool) error { return testPath(c, p, reg) }, func() { c.Write(false) })
			}},
		{Name: "Remove-Item", Class: "Microsoft.PowerShell.Commands.RemoveItemCommand", Aliases: []string{"rm", "del", "erase", "ri", "rd", "rmdir"}, ShouldProcess: true,
			Source: mgmt + "remove-item?view=powershell-5.1", Behaviour: "deletes a file, or a directory (its contents with -Recurse); a missing path is an error",
			Params:     append(pathParams(0), P("Recurse", "SwitchParameter", -1), P("Force", "SwitchParameter", -1, NoEffect("the file system models no read-only or hidden attributes, the only thing -Force overrides here")), P("Stream", "System.String[]", -1, Unmodelled)),
			DefaultSet: "Path",
			Run: func(c *Call) error {
				return eachPath(c, func(p string, reg bool) error { return removeItem(c, p, reg) }, nil)
			}},
		moveCopy("Move-Item", "Microsoft.PowerShell.Commands.MoveItemCommand", []string{"mv", "move", "mi"}),
		moveCopy("Copy-Item", "Microsoft.PowerShell.Commands.CopyItemCommand", []string{"cp", "copy", "cpi"}),
		{Name: "Get-FileHash", Class: "Microsoft.PowerShell.Commands.GetFileHashCommand",
			Source: util + "get-filehash?view=powershell-5.1", Behaviour: "an object with Algorithm, Hash (upper-case hex of the real bytes) and Path; SHA1, SHA256, SHA384, SHA512, MD5",
			// GetFileHashCommand: sets "Path" (default), "LiteralPath" and "Stream".
			DefaultSet: "Path",
			Params: []*Param{P("Path", "System.String[]", 0, In("Path"), Mandatory), P("LiteralPath", "System.String[]", -1, Alias("PSPath"), In("LiteralPath"), Mandatory),
				P("InputStream", "System.IO.Stream", -1, In("Stream"), Mandatory, Unmodelled), P("Algorithm", "System.String", -1, Set(hashAlgorithms...))},
			Run: func(c *Call) error {
				alg := c.Str("Algorithm")
				if alg == "" {
					alg = "SHA256"
				}
				var h hash.Hash
				switch alg {
				case "SHA1":
					h = sha1.New()
				case "SHA256":
					h = sha256.New()
				case "SHA384":
					h = sha512.New384()
				case "SHA512":
					h = sha512.New()
				case "MD5":
					h = md5.New()
				default:
					return c.Unmodelled("-Algorithm " + alg)
				}
				return eachPath(c, func(p string, reg bool) error { return fileHash(c, alg, h, p, reg) }, nil)
			}},
	}
}

// fileHash is Get-FileHash of one path.
func fileHash(c *Call, alg string, h hash.Hash, p string, reg bool) error {
	h.Reset()
	fs := ps(c).h.fs
	if derr := ps(c).h.checkRead(ps(c).ctx, p); !reg && derr != nil {
		return c.Error(c.Fail(derr.Error(), "PermissionDenied", fs.Clean(p), "UnauthorizedAccessException", "UnauthorizedAccessError,Microsoft.PowerShell.Commands.GetFileHashCommand", "System.UnauthorizedAccessException"))
	}
	b, rerr := fs.ReadFile(p)
	if reg || rerr != nil {
		return pathNotFound(c, fs.Clean(p))
	}
	h.Write(b)
	o := NewObject("Microsoft.Powershell.Utility.FileHash")
	sum := strings.ToUpper(hex.EncodeToString(h.Sum(nil)))
	o.Str = alg + " " + sum + " " + fs.Clean(p)
	c.Write(o.Set("Algorithm", alg).Set("Hash", sum).Set("Path", fs.Clean(p)))
	return nil
}

func moveCopy(name, class string, aliases []string) *Cmdlet {
	params := append(pathParams(0), P("Destination", "System.String", 1), P("Force", "SwitchParameter", -1), P("PassThru", "SwitchParameter", -1, Unmodelled))
	if name == "Copy-Item" {
		params = append(params, P("Recurse", "SwitchParameter", -1), P("Container", "SwitchParameter", -1, Unmodelled), P("FromSession", "System.Management.Automation.Runspaces.PSSession", -1, Unmodelled), P("ToSession", "System.Management.Automation.Runspaces.PSSession", -1, Unmodelled))
	}
	return &Cmdlet{Name: name, Class: class, Aliases: aliases, ShouldProcess: true,
		Source: mgmt + strings.ToLower(name) + "?view=powershell-5.1", Behaviour: "moves/copies a file (into a directory destination, or to a path whose directory exists, else DirectoryNotFoundException); an existing destination file needs -Force to be replaced (Move-Item)",
		Params: params, DefaultSet: "Path",
		Run: func(c *Call) error {
			return eachPath(c, func(src string, reg bool) error { return moveCopyItem(c, name, src, reg) }, nil)
		}}
}

// moveCopyItem is Move-Item or Copy-Item of one source path.
func moveCopyItem(c *Call, name, src string, reg bool) error {
	if reg {
		return c.Unmodelled(name + " on the registry")
	}
	fs := ps(c).h.fs
	dst := c.Str("Destination")
	if !c.Has("Destination") {
		dst = fs.Clean(".")
	}
	if ok, _ := fs.Stat(src); !ok {
		return pathNotFound(c, fs.Clean(src))
	}
	// The destination is a directory to copy into, or a file whose
	// directory must exist: FileSystemProvider's File.Copy/MoveTo
	// raise DirectoryNotFoundException, reported as
	// CopyFileInfoItemIOError/MoveFileInfoItemIOError (an IOException)
	// on the source file.
	if isDir, _ := statDir(fs, dst); !isDir {
		if ok, dir := fs.Stat(parentOf(fs.Clean(dst))); !ok || !dir {
			verb := strings.TrimSuffix(name, "-Item")
			rec := c.Fail(fmt.Sprintf("Could not find a part of the path '%s'.", fs.Clean(dst)), "WriteError", fs.Clean(src),
				"DirectoryNotFoundException", verb+"FileInfoItemIOError", "System.IO.DirectoryNotFoundException")
			rec.TargetType = "FileInfo"
			return c.Error(rec)
		}
	}
	if name == "Copy-Item" {
		if isDir, _ := statDir(fs, src); isDir {
			// Copying a directory (its contents only with -Recurse) is
			// not modelled: vfs.Copy copies one file.
			return c.Unmodelled(map[bool]string{true: "Copy-Item -Recurse of a directory", false: "Copy-Item of a directory"}[c.Switch("Recurse")])
		}
		if cerr := fs.Copy(src, dst); cerr != nil {
			return c.Error(c.Fail(cerr.Error(), "WriteError", src, "IOException", "CopyFileInfoItemIOError", "System.IO.IOException"))
		}
		return nil
	}
	if merr := fs.Move(src, dst, c.Switch("Force")); merr != nil {
		return c.Error(c.Fail("Cannot create a file when that file already exists.", "WriteError", src, "IOException", "MoveFileInfoItemIOError", "System.IO.IOException"))
	}
	return nil
}

// runNewItem creates an item at each -Path (with -Name: each -Path joined
// with it, the current location when there is no -Path).
func runNewItem(c *Call) error {
	paths := c.Strs("Path")
	if c.Set == "nameSet" {
		if len(paths) == 0 {
			paths = []string{"."}
		}
		for i, p := range paths {
			paths[i] = strings.TrimRight(p, `\/`) + `\` + c.Str("Name")
		}
	}
	for _, p := range paths {
		if err := newItemAt(c, p); err != nil {
			return err
		}
	}
	return nil
}

func newItemAt(c *Call, p string) error {
	fs := ps(c).h.fs
	if len(p) >= 2 && p[1] == ':' && !strings.EqualFold(p[:1], "C") {
		return c.Error(c.Fail(fmt.Sprintf("Cannot find drive. A drive with the name '%s' does not exist.", p[:1]),
			"ObjectNotFound", p[:1], "DriveNotFoundException", "DriveNotFound", "System.Management.Automation.DriveNotFoundException"))
	}
	if isRegistry(p) {
		return c.Unmodelled("New-Item in the registry")
	}
	clean := fs.Clean(p)
	exists, _ := fs.Stat(clean)
	typ := strings.ToLower(c.Str("ItemType"))
	item := NewObject("System.IO.DirectoryInfo")
	item.Str = clean
	item.Set("FullName", clean).Set("Name", clean[strings.LastIndexByte(clean, '\\')+1:])
	switch typ {
	case "directory":
		if exists && !c.Switch("Force") {
			return c.Error(c.Fail(fmt.Sprintf("An item with the specified name %s already exists.", clean), "ResourceExists", clean, "IOException", "DirectoryExist", "System.IO.IOException"))
		}
		if err := fs.MkdirAll(clean); err != nil {
			return c.Error(c.Fail(err.Error(), "WriteError", clean, "IOException", "NewItemIOError", "System.IO.IOException"))
		}
	case "", "file":
		if exists && !c.Switch("Force") {
			return c.Error(c.Fail(fmt.Sprintf("The file '%s' already exists.", clean), "WriteError", clean, "IOException", "NewItemIOError", "System.IO.IOException"))
		}
		if ok, _ := fs.Stat(parentOf(clean)); !ok && !c.Switch("Force") {
			return c.Error(c.Fail(fmt.Sprintf("Could not find a part of the path '%s'.", clean), "WriteError", clean, "DirectoryNotFoundException", "NewItemIOError", "System.IO.DirectoryNotFoundException"))
		}
		if err := fs.WriteFile(clean, []byte(Text(c.Value("Value"))), false); err != nil {
			return c.Error(c.Fail(err.Error(), "WriteError", clean, "IOException", "NewItemIOError", "System.IO.IOException"))
		}
		item.TypeName = "System.IO.FileInfo"
	default:
		return c.Unmodelled("-ItemType " + c.Str("ItemType"))
	}
	c.Write(item)
	return nil
}

// statDir reports whether a path is an existing directory.
func statDir(fs *vfs, p string) (bool, bool) {
	ok, dir := fs.Stat(p)
	return ok && dir, ok
}

// getContent is Get-Content on one path.
func getContent(c *Call, p string, reg bool) error {
	if reg {
		return c.Unmodelled("Get-Content on the registry")
	}
	fs := ps(c).h.fs
	if derr := ps(c).h.checkRead(ps(c).ctx, p); derr != nil {
		return c.Error(c.Fail(derr.Error(), "PermissionDenied", fs.Clean(p), "UnauthorizedAccessException", "GetContentReaderUnauthorizedAccessError", "System.UnauthorizedAccessException"))
	}
	b, rerr := fs.ReadFile(p)
	if rerr != nil {
		return pathNotFound(c, fs.Clean(p))
	}
	// StreamReader(stream, Default) detects byte order marks.
	text := pwsh.DecodeText(b, pwsh.EncDefault)
	if c.Switch("Raw") {
		// -Raw reads the whole stream as one block, added only when it is
		// not empty: an empty file (or one holding only a byte order mark)
		// writes nothing, so `$x = Get-Content -Raw` is $null, not ""
		// (FileSystemContentReaderWriter.ReadDelimited with _isRawStream:
		// "if (contentRead.Length > 0) blocks.Add(contentRead)";
		// PowerShell/PowerShell src/System.Management.Automation/
		// namespaces/FileSystemContentStream.cs).
		if text != "" {
			c.Write(text)
		}
		return nil
	}
	if text == "" {
		return nil
	}
	for _, l := range strings.Split(strings.TrimSuffix(strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n"), "\n"), "\n") {
		c.Write(l)
	}
	return nil
}

// testPath is Test-Path on one path: one Boolean each.
func testPath(c *Call, p string, reg bool) error {
	if reg {
		_, ok := ps(c).h.registryKey(p)
		c.Write(ok && c.Str("PathType") != "Leaf")
		return nil
	}
	exists, dir := ps(c).h.fs.Stat(p)
	switch c.Str("PathType") {
	case "Leaf":
		exists = exists && !dir
	case "Container":
		exists = exists && dir
	}
	c.Write(exists)
	return nil
}

// removeItem is Remove-Item on one path.
func removeItem(c *Call, p string, reg bool) error {
	if reg {
		return c.Unmodelled("Remove-Item on the registry")
	}
	fs := ps(c).h.fs
	exists, dir := fs.Stat(p)
	if !exists {
		return pathNotFound(c, fs.Clean(p))
	}
	if dir && !c.Switch("Recurse") {
		if entries, _ := fs.List(p); len(entries) > 0 {
			// -NonInteractive cannot confirm removing a non-empty directory.
			return c.Unmodelled("Remove-Item of a non-empty directory without -Recurse (Windows would ask to confirm)")
		}
	}
	if rerr := fs.Remove(p, c.Switch("Recurse")); rerr != nil {
		return c.Error(c.Fail(rerr.Error(), "WriteError", p, "IOException", "RemoveFileSystemItemIOError", "System.IO.IOException"))
	}
	return nil
}
