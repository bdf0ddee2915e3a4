package winsim

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
	"time"
)

// downloadTimeout bounds one Invoke-WebRequest of the simulated guest.
const downloadTimeout = 2 * time.Minute

// imageCmdlet runs the statements a golden image build uses beyond files and
// services: downloads, archive extraction and Windows features. handled is
// false for anything else.
func (e *psEnv) imageCmdlet(name string, a cmdArgs) (objs []psObj, handled bool, err error) {
	switch name {
	case "invoke-webrequest", "iwr":
		return nil, true, e.invokeWebRequest(a)
	case "expand-archive":
		src, _, err := e.str(a, 0, "path", "literalpath")
		if err != nil {
			return nil, true, err
		}
		dst, _, err := e.str(a, 1, "destinationpath")
		if err != nil {
			return nil, true, err
		}
		return nil, true, e.extract(src, dst, "zip")
	case "tar.exe", "tar":
		return nil, true, e.tarExtract(a)
	case "get-windowsfeature":
		n, _, err := e.str(a, 0, "name")
		if err != nil {
			return nil, true, err
		}
		state := e.h.features.get(n)
		if state == "" {
			state = "Available"
		}
		installed := "False"
		if state == FeatureInstalled {
			installed = "True"
		}
		return []psObj{{text: n, props: map[string]string{"Name": n, "InstallState": state, "Installed": installed}}}, true, nil
	case "install-windowsfeature", "add-windowsfeature":
		n, _, err := e.str(a, 0, "name")
		if err != nil {
			return nil, true, err
		}
		restart, err := e.h.features.install(n)
		if err != nil {
			return nil, true, err
		}
		needed := "No"
		if restart {
			needed = "Yes"
		}
		return []psObj{{text: "True", props: map[string]string{"Success": "True", "RestartNeeded": needed, "ExitCode": "Success"}}}, true, nil
	}
	return nil, false, nil
}

// invokeWebRequest really downloads: the sandbox's artifact servers run on
// this machine, and a wrong URL must fail the way it fails on Windows.
func (e *psEnv) invokeWebRequest(a cmdArgs) error {
	uri, _, err := e.str(a, 0, "uri")
	if err != nil {
		return err
	}
	out, _, err := e.str(a, len(a.positional), "outfile")
	if err != nil || out == "" {
		return &psErr{msg: "Invoke-WebRequest: -OutFile is required by the simulated host", command: "Invoke-WebRequest"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), downloadTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, uri, nil)
	if err != nil {
		return webError(uri, err.Error())
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return webError(uri, "Unable to connect to the remote server")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return webError(uri, fmt.Sprintf("The remote server returned an error: (%d) %s.", resp.StatusCode, http.StatusText(resp.StatusCode)))
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return webError(uri, "The underlying connection was closed: "+err.Error())
	}
	return e.h.fs.WriteFile(out, body, false)
}

func webError(uri, msg string) error {
	return &psErr{msg: msg, command: "Invoke-WebRequest",
		category: fmt.Sprintf("InvalidOperation: (System.Net.HttpWebRequest:HttpWebRequest) [Invoke-WebRequest], WebException (%s)", uri),
		id:       "WebCmdletWebResponseException,Microsoft.PowerShell.Commands.InvokeWebRequestCommand"}
}

// tarExtract runs `tar.exe -xzf <archive> -C <dir>` (tar.exe ships with
// Windows Server 2019 and later).
func (e *psEnv) tarExtract(a cmdArgs) error {
	var archive, dir string
	words := a.positional
	for i := 0; i < len(words); i++ {
		v, err := e.arg(words[i])
		if err != nil {
			return err
		}
		words[i] = v
	}
	// parseArgs reads "-xzf" and "-C" as named parameters.
	if v, ok := a.named["xzf"]; ok {
		archive, _ = e.arg(v)
	}
	if v, ok := a.named["c"]; ok {
		dir, _ = e.arg(v)
	}
	if archive == "" && len(words) > 0 {
		archive = words[0]
	}
	if archive == "" || dir == "" {
		return &psErr{msg: "tar.exe: the simulated host understands tar.exe -xzf <archive> -C <directory>", command: "tar.exe"}
	}
	return e.extract(archive, dir, "tar")
}

// extract unpacks a .zip or .tar.gz from the virtual filesystem into dir.
func (e *psEnv) extract(archive, dir, kind string) error {
	data, err := e.h.fs.ReadFile(archive)
	if err != nil {
		return notFound("Expand-Archive", e.h.fs.Clean(archive), "ExpandArchiveCommand")
	}
	write := func(name string, body []byte) error {
		name = strings.TrimPrefix(path.Clean("/"+strings.ReplaceAll(name, `\`, "/")), "/")
		if name == "" || name == "." {
			return nil
		}
		return e.h.fs.WriteFile(strings.TrimRight(dir, `\`)+`\`+strings.ReplaceAll(name, "/", `\`), body, false)
	}
	bad := &psErr{msg: fmt.Sprintf("%s is not a valid %s archive.", archive, kind), command: "Expand-Archive"}
	if kind == "zip" {
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return bad
		}
		for _, f := range zr.File {
			if f.FileInfo().IsDir() {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				return bad
			}
			body, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				return bad
			}
			if err := write(f.Name, body); err != nil {
				return err
			}
		}
		return nil
	}
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return bad
	}
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return bad
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			return bad
		}
		if err := write(hdr.Name, body); err != nil {
			return err
		}
	}
}
