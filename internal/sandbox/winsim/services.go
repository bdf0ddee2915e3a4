package winsim

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
)

// Service states and startup types, spelled as Get-Service prints them
// (System.ServiceProcess.ServiceControllerStatus / ServiceStartMode).
const (
	StatusRunning      = "Running"
	StatusStopped      = "Stopped"
	StatusStartPending = "StartPending"
	StatusStopPending  = "StopPending"

	StartupAutomatic = "Automatic"
	StartupManual    = "Manual"
	StartupDisabled  = "Disabled"
)

// Service start types as the registry's Start value holds them
// (https://learn.microsoft.com/windows/win32/api/winsvc/nf-winsvc-createservicew, dwStartType).
const (
	serviceAutoStart   = 2
	serviceDemandStart = 3
	serviceDisabled    = 4
)

// serviceTable is the service control manager's database: the subkeys of
// HKLM\SYSTEM\CurrentControlSet\Services that have an ImagePath, as on
// Windows, so that what nssm or sc.exe write there is what the SCM reads.
// The run-time state (Running, Stopped ...) is the SCM's memory and starts
// over at every boot.
type serviceTable struct {
	reg *registry

	mu      sync.Mutex
	deleted map[string]bool // marked for deletion while running (ERROR_SERVICE_MARKED_FOR_DELETE)
	status  func(name string) string
}

func serviceKey(name string) string { return ServicesKey + `\` + name }

// importServicesJSON moves a services.json written by an older simulator
// (disks of templates built before the registry) into the registry, once.
func (t *serviceTable) importServicesJSON(path string) error {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var list []Service
	if err := json.Unmarshal(b, &list); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	for _, s := range list {
		if _, ok := t.get(s.Name); !ok {
			if err := t.create(s); err != nil {
				return err
			}
		}
	}
	return os.Rename(path, path+".imported")
}

func startTypeOf(startup string) uint32 {
	switch startup {
	case StartupManual:
		return serviceDemandStart
	case StartupDisabled:
		return serviceDisabled
	}
	return serviceAutoStart
}

func startupOf(start uint32) string {
	switch start {
	case serviceDemandStart:
		return StartupManual
	case serviceDisabled:
		return StartupDisabled
	}
	return StartupAutomatic
}

// configValues are the registry values CreateService/ChangeServiceConfig write.
func configValues(s Service) map[string]RegValue {
	v := map[string]RegValue{
		"ImagePath":    {Type: RegExpandSZ, Str: s.BinaryPathName},
		"DisplayName":  {Type: RegSZ, Str: s.DisplayName},
		"Start":        {Type: RegDWord, DWord: startTypeOf(s.StartupType)},
		"Type":         {Type: RegDWord, DWord: 0x10}, // SERVICE_WIN32_OWN_PROCESS
		"ErrorControl": {Type: RegDWord, DWord: 1},    // SERVICE_ERROR_NORMAL
		"ObjectName":   {Type: RegSZ, Str: s.ObjectName},
	}
	if s.DelayedAutoStart {
		v["DelayedAutostart"] = RegValue{Type: RegDWord, DWord: 1}
	}
	if s.Description != "" {
		v["Description"] = RegValue{Type: RegSZ, Str: s.Description}
	}
	if len(s.DependOnService) > 0 {
		v["DependOnService"] = RegValue{Type: RegMultiSZ, Multi: s.DependOnService}
	}
	if len(s.Environment) > 0 {
		v["Environment"] = RegValue{Type: RegMultiSZ, Multi: s.Environment}
	}
	return v
}

func (t *serviceTable) isService(name string) bool {
	_, ok := t.reg.get(serviceKey(name), "ImagePath")
	return ok
}

func (t *serviceTable) list() []Service {
	var out []Service
	for _, n := range t.reg.subkeys(ServicesKey) {
		if s, ok := t.get(n); ok {
			out = append(out, s)
		}
	}
	return out
}

func (t *serviceTable) get(name string) (Service, bool) {
	vals, ok := t.reg.values(serviceKey(name))
	if !ok {
		return Service{}, false
	}
	find := func(n string) RegValue {
		for k, v := range vals {
			if strings.EqualFold(k, n) {
				return v
			}
		}
		return RegValue{}
	}
	img := find("ImagePath")
	if img.Type == "" {
		return Service{}, false
	}
	// The key's name as created is the service's name.
	canonical := name
	for _, n := range t.reg.subkeys(ServicesKey) {
		if strings.EqualFold(n, name) {
			canonical = n
		}
	}
	s := Service{
		Name:             canonical,
		DisplayName:      find("DisplayName").Str,
		BinaryPathName:   img.Str,
		StartupType:      startupOf(find("Start").DWord),
		DelayedAutoStart: find("DelayedAutostart").DWord == 1,
		Description:      find("Description").Str,
		DependOnService:  find("DependOnService").Multi,
		Environment:      find("Environment").Multi,
		ObjectName:       find("ObjectName").Str,
		Status:           StatusStopped,
	}
	if s.DisplayName == "" {
		s.DisplayName = s.Name
	}
	if t.status != nil {
		s.Status = t.status(s.Name)
	}
	return s, true
}

// noService is the error for a name the SCM does not know: Get-Service's
// message, code 1060.
func noService(name string) error {
	return &ServiceError{Service: name, Op: "open", Err: errServiceDoesNotExist,
		Msg: fmt.Sprintf("Cannot find any service with service name '%s'.", name)}
}

// create is CreateService: a new key under Services.
func (t *serviceTable) create(s Service) error {
	if t.isService(s.Name) {
		code := errServiceExists
		if t.markedForDelete(s.Name) {
			code = errServiceMarkedForDelete
		}
		return &ServiceError{Service: s.Name, Op: "create", Err: code,
			Msg: fmt.Sprintf("Service '%s' cannot be created due to the following error: %s", s.Name, strings.TrimSuffix(code.Message, "."))}
	}
	if s.DisplayName == "" {
		s.DisplayName = s.Name
	}
	if s.StartupType == "" {
		s.StartupType = StartupAutomatic
	}
	if s.ObjectName == "" {
		s.ObjectName = "LocalSystem"
	}
	if err := t.reg.createKey(serviceKey(s.Name)); err != nil {
		return err
	}
	return t.reg.setMany(serviceKey(s.Name), configValues(s))
}

// update is ChangeServiceConfig: fn edits the configuration (Status is the
// SCM's and not written).
func (t *serviceTable) update(name string, fn func(*Service) error) (Service, error) {
	s, ok := t.get(name)
	if !ok {
		return Service{}, noService(name)
	}
	if t.markedForDelete(name) {
		return s, &ServiceError{Service: s.Name, DisplayName: s.DisplayName, Op: "config", Err: errServiceMarkedForDelete}
	}
	if err := fn(&s); err != nil {
		return s, err
	}
	vals := configValues(s)
	for _, n := range []string{"DelayedAutostart", "Description", "DependOnService", "Environment"} {
		if _, ok := vals[n]; !ok {
			if _, err := t.reg.deleteValue(serviceKey(s.Name), n); err != nil {
				return s, err
			}
		}
	}
	if err := t.reg.setMany(serviceKey(s.Name), vals); err != nil {
		return s, err
	}
	s, _ = t.get(name)
	return s, nil
}

// remove is DeleteService: the key goes at once when the service is
// stopped; a running service is marked for deletion and goes when it stops
// (https://learn.microsoft.com/windows/win32/api/winsvc/nf-winsvc-deleteservice).
func (t *serviceTable) remove(name string) error {
	s, ok := t.get(name)
	if !ok {
		return noService(name)
	}
	if t.markedForDelete(name) {
		return &ServiceError{Service: s.Name, DisplayName: s.DisplayName, Op: "delete", Err: errServiceMarkedForDelete}
	}
	if s.Status != StatusStopped {
		t.mu.Lock()
		if t.deleted == nil {
			t.deleted = map[string]bool{}
		}
		t.deleted[strings.ToLower(name)] = true
		t.mu.Unlock()
		return nil
	}
	return t.reg.deleteKey(serviceKey(s.Name))
}

func (t *serviceTable) markedForDelete(name string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.deleted[strings.ToLower(name)]
}

// stopped finishes a deletion that waited for the service to stop.
func (t *serviceTable) stopped(name string) {
	t.mu.Lock()
	del := t.deleted[strings.ToLower(name)]
	delete(t.deleted, strings.ToLower(name))
	t.mu.Unlock()
	if del {
		_ = t.reg.deleteKey(serviceKey(name))
	}
}

// Win32 errors of the service control manager
// (https://learn.microsoft.com/windows/win32/debug/system-error-codes--1000-1299-).
var (
	errFileNotFound           = &ErrorCode{Code: 2, Message: "The system cannot find the file specified."}
	errInvalidParameter       = &ErrorCode{Code: 87, Message: "The parameter is incorrect."}
	errDependentServices      = &ErrorCode{Code: 1051, Message: "A stop control has been sent to a service that other running services are dependent on."}
	errServiceRequestTimeout  = &ErrorCode{Code: 1053, Message: "The service did not respond to the start or control request in a timely fashion."}
	errServiceAlreadyRunning  = &ErrorCode{Code: 1056, Message: "An instance of the service is already running."}
	errServiceDisabled        = &ErrorCode{Code: 1058, Message: "The service cannot be started, either because it is disabled or because it has no enabled devices associated with it."}
	errServiceDoesNotExist    = &ErrorCode{Code: 1060, Message: "The specified service does not exist as an installed service."}
	errServiceNotActive       = &ErrorCode{Code: 1062, Message: "The service has not been started."}
	errProcessAborted         = &ErrorCode{Code: 1067, Message: "The process terminated unexpectedly."}
	errServiceDependencyFail  = &ErrorCode{Code: 1068, Message: "The dependency service or group failed to start."}
	errServiceMarkedForDelete = &ErrorCode{Code: 1072, Message: "The specified service has been marked for deletion."}
	errServiceExists          = &ErrorCode{Code: 1073, Message: "The specified service already exists."}
	errDependencyDeleted      = &ErrorCode{Code: 1075, Message: "The dependency service does not exist or has been marked for deletion."}
	errCircularDependency     = &ErrorCode{Code: 1059, Message: "Circular service dependency was specified."}
)

// ServiceError is a failed service operation: the Win32 error the service
// control manager reported (Err, nil when the simulator refused to pretend)
// and the message the PowerShell cmdlet prints (Error). sc.exe prints
// Err.Code and Err.Message instead.
type ServiceError struct {
	Service     string
	DisplayName string
	Op          string // open, create, config, delete, start, stop
	Err         *ErrorCode
	// Msg overrides the cmdlet message.
	Msg string
	// Refused says why the simulator would not run the service: a program
	// it does not model. Such a start never succeeds.
	Refused string
}

// Code is the Win32 error code (0 when the simulator refused).
func (e *ServiceError) Code() int {
	if e.Err == nil {
		return 0
	}
	return e.Err.Code
}

func (e *ServiceError) Unwrap() error {
	if e.Err == nil {
		return nil
	}
	return e.Err
}

// Error is the message of Start-Service, Stop-Service ... (Microsoft.PowerShell.Commands.ServiceCommandException).
func (e *ServiceError) Error() string {
	if e.Msg != "" {
		return e.Msg
	}
	disp := e.DisplayName
	if disp == "" {
		disp = e.Service
	}
	switch e.Op {
	case "start":
		if e.Refused != "" {
			return fmt.Sprintf("Service '%s (%s)' cannot be started due to the following error: %s", disp, e.Service, e.Refused)
		}
		return fmt.Sprintf("Service '%s (%s)' cannot be started due to the following error: Cannot start service %s on computer '.'.", disp, e.Service, e.Service)
	case "stop":
		if e.Refused != "" {
			return fmt.Sprintf("Service '%s (%s)' cannot be stopped due to the following error: %s", disp, e.Service, e.Refused)
		}
		if e.Err == errDependentServices {
			return fmt.Sprintf("Cannot stop service '%s (%s)' because it has dependent services. It can only be stopped if the Force flag is set.", disp, e.Service)
		}
		return fmt.Sprintf("Service '%s (%s)' cannot be stopped due to the following error: Cannot stop %s service on computer '.'.", disp, e.Service, e.Service)
	}
	if e.Err != nil {
		return e.Err.Message
	}
	return e.Refused
}
