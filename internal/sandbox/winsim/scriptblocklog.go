package winsim

import (
	"crypto/rand"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Script block logging as Windows PowerShell 5.1 does it, whatever the
// policy says short of turning it off: CompiledScriptBlock.cs as it was when
// the Windows PowerShell sources moved to github.com/PowerShell/PowerShell
// (commit 60b3b304f2, March 2016, the 5.1 code base;
// src/System.Management.Automation/engine/runtime/CompiledScriptBlock.cs):
//
//   - PerformSecurityChecks marks a script block HasSuspiciousContent when
//     CheckSuspiciousContent finds a signature (SuspiciousSignature);
//     LogScriptBlockStart then logs the block's creation even when no
//     ScriptBlockLogging policy turned logging on (forceLogCreation);
//   - LogScriptBlockCreation logs nothing when the policy sets
//     EnableScriptBlockLogging to 0 (ScriptBlockLoggingExplicitlyDisabled),
//     and every block when it sets it to 1 (ShouldLogScriptBlockActivity);
//   - WriteScriptBlockToLog writes event 4104 (ScriptBlock_Compile_Detail)
//     to Microsoft-Windows-PowerShell/Operational at level Warning for a
//     suspicious block, Verbose otherwise, with MessageNumber, MessageTotal,
//     ScriptBlockText, ScriptBlockId and Path; a text of 20,000 characters
//     or more goes in len/size+1 segments of size 10,000 plus a random 0 to
//     9,999.
//
// The engine logs the script a powershell.exe runs (its -EncodedCommand,
// -Command or -File text: the top-level script block holds every nested
// block's text). Not modelled: the parser's own HasSuspiciousContent marks
// on syntax trees (only the signature list), nested blocks logged on their
// own, protected event logging (ProtectedEventLogging's CMS encryption).

// PowerShellOperationalLog is the event log script block logging writes to.
const PowerShellOperationalLog = "Microsoft-Windows-PowerShell/Operational"

// ScriptBlockLoggingKey is the policy key of script block logging
// (administrative template "Turn on PowerShell Script Block Logging";
// Utils.GetPolicySetting reads EnableScriptBlockLogging under it).
const ScriptBlockLoggingKey = `HKLM\SOFTWARE\Policies\Microsoft\Windows\PowerShell\ScriptBlockLogging`

// Event levels (winmeta.xml: win:Warning is 3, win:Verbose 5).
const (
	EventLevelWarning = 3
	EventLevelVerbose = 5
)

// EventScriptBlock is the event ID of a script block's creation.
const EventScriptBlock = 4104

// EventRecord is one event of a simulated event log.
type EventRecord struct {
	Log   string
	ID    int
	Level int
	Time  time.Time
	// Data are the event's named fields (4104: MessageNumber, MessageTotal,
	// ScriptBlockText, ScriptBlockId, Path).
	Data map[string]string
}

// eventLogs are the host's event logs, by name; they outlive reboots, as
// the .evtx files do.
type eventLogs struct {
	mu   sync.Mutex
	logs map[string][]EventRecord
}

// maxEventsPerLog bounds a log as Windows' maximum log size does (the
// oldest events are overwritten).
const maxEventsPerLog = 4000

func (e *eventLogs) write(r EventRecord) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.logs == nil {
		e.logs = map[string][]EventRecord{}
	}
	l := e.logs[r.Log]
	if len(l) >= maxEventsPerLog {
		l = append(l[:0], l[len(l)/2:]...)
	}
	e.logs[r.Log] = append(l, r)
}

// Events returns the events of the named log, oldest first.
func (h *Host) Events(log string) []EventRecord {
	h.events.mu.Lock()
	defer h.events.mu.Unlock()
	return append([]EventRecord(nil), h.events.logs[log]...)
}

// scriptBlockSegment is the length under which a script block is logged in
// one event (LogScriptBlockCreation's 20,000 characters).
const scriptBlockSegment = 20000

// logScriptBlock logs a script block's creation as LogScriptBlockStart
// and LogScriptBlockCreation do; path is the script file's, "" for a command.
func (h *Host) logScriptBlock(text, path string) {
	policy, set := h.reg.get(ScriptBlockLoggingKey, "EnableScriptBlockLogging")
	enabled := set && policy.Type == RegDWord && policy.DWord == 1
	disabled := set && policy.Type == RegDWord && policy.DWord == 0
	signature := SuspiciousSignature(text)
	if disabled || (!enabled && signature == "") {
		return
	}
	level := EventLevelVerbose
	if signature != "" {
		level = EventLevelWarning
	}
	var id [16]byte
	_, _ = rand.Read(id[:])
	blockID := fmt.Sprintf("%x-%x-%x-%x-%x", id[0:4], id[4:6], id[6:8], id[8:10], id[10:16])
	segments := []string{text}
	if len(text) >= scriptBlockSegment {
		size := 10000 + int(randUint32()%10000)
		segments = nil
		for i := 0; i < len(text)/size+1; i++ {
			segments = append(segments, text[i*size:min((i+1)*size, len(text))])
		}
	}
	now := time.Now()
	for i, s := range segments {
		h.events.write(EventRecord{Log: PowerShellOperationalLog, ID: EventScriptBlock, Level: level, Time: now,
			Data: map[string]string{
				"MessageNumber": fmt.Sprint(i + 1), "MessageTotal": fmt.Sprint(len(segments)),
				"ScriptBlockText": s, "ScriptBlockId": blockID, "Path": path,
			}})
	}
}

func randUint32() uint32 {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// suspiciousSignatures is CheckSuspiciousContent's signature set
// (CompiledScriptBlock.cs, "signatures").
var suspiciousSignatures = []string{
	// Add-Type, dynamic assemblies, reflection on types.
	"Add-Type", "DllImport", "DefineDynamicAssembly", "DefineDynamicModule", "DefineType",
	"DefineConstructor", "CreateType", "DefineLiteral", "DefineEnum", "DefineField", "ILGenerator",
	"Emit", "UnverifiableCodeAttribute", "DefinePInvokeMethod", "GetTypes", "GetAssemblies",
	"Methods", "Properties", "GetConstructor", "GetConstructors", "GetDefaultMembers", "GetEvent",
	"GetEvents", "GetField", "GetFields", "GetInterface", "GetInterfaceMap", "GetInterfaces",
	"GetMember", "GetMembers", "GetMethod", "GetMethods", "GetNestedType", "GetNestedTypes",
	"GetProperties", "GetProperty", "InvokeMember", "MakeArrayType", "MakeByRefType",
	"MakeGenericType", "MakePointerType", "DeclaringMethod", "DeclaringType", "ReflectedType",
	"TypeHandle", "TypeInitializer", "UnderlyingSystemType",
	// System.Runtime.InteropServices.
	"InteropServices", "Marshal", "AllocHGlobal", "PtrToStructure", "StructureToPtr",
	"FreeHGlobal", "IntPtr",
	// General obfuscation.
	"MemoryStream", "DeflateStream", "FromBase64String", "EncodedCommand", "Bypass",
	"ToBase64String", "ExpandString", "GetPowerShell",
	// Win32 API calls.
	"OpenProcess", "VirtualAlloc", "VirtualFree", "WriteProcessMemory", "CreateUserThread",
	"CloseHandle", "GetDelegateForFunctionPointer", "kernel32", "CreateThread", "memcpy",
	"LoadLibrary", "GetModuleHandle", "GetProcAddress", "VirtualProtect", "FreeLibrary",
	"ReadProcessMemory", "CreateRemoteThread", "AdjustTokenPrivileges", "WriteByte", "WriteInt32",
	"OpenThreadToken", "PtrToString", "ZeroFreeGlobalAllocUnicode", "OpenProcessToken",
	"GetTokenInformation", "SetThreadToken", "ImpersonateLoggedOnUser", "RevertToSelf",
	"GetLogonSessionData", "CreateProcessWithToken", "DuplicateTokenEx", "OpenWindowStation",
	"OpenDesktop", "MiniDumpWriteDump", "AddSecurityPackage", "EnumerateSecurityPackages",
	"GetProcessHandle", "DangerousGetHandle",
	// Cryptography.
	"CryptoServiceProvider", "Cryptography", "RijndaelManaged", "SHA1Managed", "CryptoStream",
	"CreateEncryptor", "CreateDecryptor", "TransformFinalBlock", "DeviceIoControl",
	"SetInformationProcess", "PasswordDeriveBytes",
	// Keylogging.
	"GetAsyncKeyState", "GetKeyboardState", "GetForegroundWindow",
	// Internal types.
	"BindingFlags", "NonPublic",
	// Logging settings.
	"ScriptBlockLogging", "LogPipelineExecutionDetails", "ProtectedEventLogging",
}

// SuspiciousSignature returns the signature CheckSuspiciousContent finds in
// text, or "". Windows PowerShell 5.1 splits the text into words of ASCII
// letters and '-' (TokenizeWordElements: any other character ends a word)
// and looks each word of four characters or more up in its signature set,
// case-insensitively: a signature must be a whole word. So a signature with
// a digit never matches ("FromBase64String" reads as the words "FromBase"
// and "String"; likewise "kernel32", "SHA1Managed", "WriteInt32"), and
// "Add-Type" does not match inside "Add-TypeX". (PowerShell 6 and later
// look for the signatures inside words instead: PowerShell/PowerShell#5302.)
func SuspiciousSignature(text string) string {
	words := strings.FieldsFunc(text, func(r rune) bool {
		return !((r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || r == '-')
	})
	for _, w := range words {
		if len(w) < 4 {
			continue
		}
		for _, sig := range suspiciousSignatures {
			if strings.EqualFold(w, sig) {
				return sig
			}
		}
	}
	return ""
}
