package winsim

import (
	"crypto/rand"
	"encoding/xml"
	"fmt"
	"html"
	"net/http"
	"strings"
)

// WS-Management action and namespace URIs ([MS-WSMV]).
const (
	nsShell    = "http://schemas.microsoft.com/wbem/wsman/1/windows/shell"
	nsTransfer = "http://schemas.xmlsoap.org/ws/2004/09/transfer"

	actionCreate   = nsTransfer + "/Create"
	actionDelete   = nsTransfer + "/Delete"
	actionCommand  = nsShell + "/Command"
	actionSend     = nsShell + "/Send"
	actionReceive  = nsShell + "/Receive"
	actionSignal   = nsShell + "/Signal"
	actionFault    = "http://schemas.dmtf.org/wbem/wsman/1/wsman/fault"
	stateDone      = nsShell + "/CommandState/Done"
	stateRunning   = nsShell + "/CommandState/Running"
	signalTerm     = nsShell + "/signal/terminate"
	signalCtrlC    = nsShell + "/signal/ctrl_c"
	soapContent    = "application/soap+xml;charset=UTF-8"
	anonymousReply = "http://schemas.xmlsoap.org/ws/2004/08/addressing/role/anonymous"
)

// WSManFault codes (the f:WSManFault Code attribute) the client may see.
const (
	faultCodeTimedOut         = 2150858793
	faultCodeInvalidSelectors = 2150858843
	faultCodeEncodingLimit    = 2150858809
	faultCodeAccessDenied     = 5
	faultCodeActionNotSupport = 2150858771
	faultCodeInvalidCommandID = 2150858853
)

type wsNamed struct {
	Name  string `xml:"Name,attr"`
	Value string `xml:",chardata"`
}

// envelope is the subset of a WS-Management request the simulator reads.
type envelope struct {
	Header struct {
		Action           string    `xml:"Action"`
		MessageID        string    `xml:"MessageID"`
		OperationTimeout string    `xml:"OperationTimeout"`
		ResourceURI      string    `xml:"ResourceURI"`
		Selectors        []wsNamed `xml:"SelectorSet>Selector"`
		Options          []wsNamed `xml:"OptionSet>Option"`
	} `xml:"Header"`
	Body struct {
		Shell *struct {
			InputStreams  string `xml:"InputStreams"`
			OutputStreams string `xml:"OutputStreams"`
		} `xml:"Shell"`
		CommandLine *struct {
			Command   string   `xml:"Command"`
			Arguments []string `xml:"Arguments"`
		} `xml:"CommandLine"`
		Send *struct {
			Streams []struct {
				Name      string `xml:"Name,attr"`
				CommandID string `xml:"CommandId,attr"`
				End       string `xml:"End,attr"`
				Data      string `xml:",chardata"`
			} `xml:"Stream"`
		} `xml:"Send"`
		Receive *struct {
			DesiredStream struct {
				CommandID string `xml:"CommandId,attr"`
				Streams   string `xml:",chardata"`
			} `xml:"DesiredStream"`
		} `xml:"Receive"`
		Signal *struct {
			CommandID string `xml:"CommandId,attr"`
			Code      string `xml:"Code"`
		} `xml:"Signal"`
	} `xml:"Body"`
}

func parseEnvelope(body []byte) (*envelope, error) {
	var env envelope
	if err := xml.Unmarshal(body, &env); err != nil {
		return nil, err
	}
	return &env, nil
}

func (e *envelope) selector(name string) string {
	for _, s := range e.Header.Selectors {
		if strings.EqualFold(s.Name, name) {
			return strings.TrimSpace(s.Value)
		}
	}
	return ""
}

// newGUID returns an upper-case GUID as Windows prints them.
func newGUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return strings.ToUpper(fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]))
}

// writeSOAP sends a successful response envelope.
func writeSOAP(w http.ResponseWriter, action, relatesTo, body string) {
	w.Header().Set("Content-Type", soapContent)
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, envelopeTemplate, action, newGUID(), html.EscapeString(relatesTo), body)
}

const envelopeTemplate = `<s:Envelope xml:lang="en-US" xmlns:s="http://www.w3.org/2003/05/soap-envelope" xmlns:a="http://schemas.xmlsoap.org/ws/2004/08/addressing" xmlns:x="http://schemas.xmlsoap.org/ws/2004/09/transfer" xmlns:w="http://schemas.dmtf.org/wbem/wsman/1/wsman.xsd" xmlns:rsp="http://schemas.microsoft.com/wbem/wsman/1/windows/shell" xmlns:p="http://schemas.microsoft.com/wbem/wsman/1/wsman.xsd"><s:Header><a:Action>%s</a:Action><a:MessageID>uuid:%s</a:MessageID><a:To>` + anonymousReply + `</a:To><a:RelatesTo>%s</a:RelatesTo></s:Header><s:Body>%s</s:Body></s:Envelope>`

// wsFault is a SOAP fault as WinRM sends it: HTTP 500 (401 for access denied).
type wsFault struct {
	status  int
	code    string // s:Sender or s:Receiver
	subcode string // e.g. w:TimedOut
	wsCode  uint32
	message string
}

func (h *Host) writeFault(w http.ResponseWriter, relatesTo string, f wsFault) {
	if f.status == 0 {
		f.status = http.StatusInternalServerError
	}
	msg := html.EscapeString(f.message)
	body := fmt.Sprintf(`<s:Fault><s:Code><s:Value>%s</s:Value><s:Subcode><s:Value>%s</s:Value></s:Subcode></s:Code>`+
		`<s:Reason><s:Text xml:lang="en-US">%s</s:Text></s:Reason><s:Detail>`+
		`<f:WSManFault xmlns:f="http://schemas.microsoft.com/wbem/wsman/1/wsmanfault" Code="%d" Machine="%s"><f:Message>%s</f:Message></f:WSManFault>`+
		`</s:Detail></s:Fault>`, f.code, f.subcode, msg, f.wsCode, html.EscapeString(h.cfg.ComputerName), msg)
	w.Header().Set("Content-Type", soapContent)
	w.WriteHeader(f.status)
	fmt.Fprintf(w, envelopeTemplate, actionFault, newGUID(), html.EscapeString(relatesTo), body)
}

var (
	faultTimedOut = wsFault{code: "s:Receiver", subcode: "w:TimedOut", wsCode: faultCodeTimedOut,
		message: "The WS-Management service cannot complete the operation within the time specified in OperationTimeout.  "}
	faultEncodingLimit = wsFault{code: "s:Sender", subcode: "w:EncodingLimit", wsCode: faultCodeEncodingLimit,
		message: "The WS-Management service cannot process the request because the request packet size exceeds the maximum envelope size (MaxEnvelopeSizekb)."}
	faultAction = wsFault{code: "s:Sender", subcode: "a:ActionNotSupported", wsCode: faultCodeActionNotSupport,
		message: "The WS-Management service cannot process the request because the action is not supported."}
	faultBadRequest = wsFault{code: "s:Sender", subcode: "w:SchemaValidationError", wsCode: 2150858817,
		message: "The WS-Management service cannot process the request because the XML is invalid."}
)

func faultInvalidSelectors(shellID string) wsFault {
	return wsFault{code: "s:Sender", subcode: "w:InvalidSelectors", wsCode: faultCodeInvalidSelectors,
		message: fmt.Sprintf("The WS-Management service cannot process the request because the request contained invalid selectors for the resource. (ShellId %q)", shellID)}
}

func faultInvalidCommand(id string) wsFault {
	return wsFault{code: "s:Sender", subcode: "w:InvalidParameter", wsCode: faultCodeInvalidCommandID,
		message: fmt.Sprintf("The request for the Windows Remote Shell with ShellId failed because the command %q was not found.", id)}
}
