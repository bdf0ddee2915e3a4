package kubeletsim

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// ReadDir lists the files directly in dir.
func (m memFS) ReadDir(dir string) ([]string, error) {
	prefix := strings.ToLower(strings.TrimRight(dir, `\`)) + `\`
	var names []string
	for p := range m {
		if rest, ok := strings.CutPrefix(p, prefix); ok && !strings.Contains(rest, `\`) {
			names = append(names, rest)
		}
	}
	if len(names) == 0 {
		return nil, errors.New("The system cannot find the path specified.")
	}
	return names, nil
}

func TestContainerdCNISettings(t *testing.T) {
	files := memFS{
		`c:\program files\containerd\config.toml`: []byte("version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".cni]\n  bin_dir = 'C:\\opt\\cni\\bin'\n  conf_dir = \"C:\\\\etc\\\\cni\\\\net.d\"\n"),
		`c:\k\containerd3.toml`:                   []byte("version = 3\n[plugins.'io.containerd.cri.v1.runtime'.cni]\n  bin_dirs = ['C:\\cni\\bin', 'D:\\more']\n  conf_dir = 'C:\\cni\\conf'\n"),
		`c:\k\other.toml`:                         []byte("version = 3\n[plugins.\"io.containerd.grpc.v1.cri\".cni]\n  bin_dir = 'C:\\ignored'\n"),
	}
	for _, tc := range []struct {
		args []string
		want cniSettings
	}{
		{[]string{"--run-service"}, cniSettings{BinDirs: []string{`C:\opt\cni\bin`}, ConfDir: `C:\etc\cni\net.d`}},
		{[]string{"--config", `C:\k\containerd3.toml`}, cniSettings{BinDirs: []string{`C:\cni\bin`, `D:\more`}, ConfDir: `C:\cni\conf`}},
		// version 3 reads the new plugin name only.
		{[]string{`--config=C:\k\other.toml`}, cniSettings{BinDirs: []string{defaultCNIBinDir}, ConfDir: defaultCNIConfDir}},
		{[]string{`--config=C:\k\none.toml`}, cniSettings{BinDirs: []string{defaultCNIBinDir}, ConfDir: defaultCNIConfDir}},
	} {
		got, err := containerdCNISettings(files, tc.args)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v: %+v %v, want %+v", tc.args, got, err, tc.want)
		}
	}
}

func TestNetworkStatus(t *testing.T) {
	s := cniSettings{BinDirs: []string{`C:\opt\cni\bin`}, ConfDir: `C:\etc\cni\net.d`}
	files := memFS{}
	if _, err := networkStatus(files, s); err == nil || err.Error() != "cni plugin not initialized" {
		t.Fatalf("no config: %v", err)
	}
	files[`c:\etc\cni\net.d\readme.txt`] = []byte("not a config")
	files[`c:\etc\cni\net.d\10-flannel.conflist`] = []byte(`{"cniVersion":"0.3.0","name":"vxlan0","plugins":[{"type":"flannel","delegate":{"type":"win-overlay"}}]}`)
	files[`c:\etc\cni\net.d\20-other.conf`] = []byte(`{"cniVersion":"0.3.0","name":"x","type":"nat"}`)
	if _, err := networkStatus(files, s); err == nil || err.Error() != `failed to find plugin "flannel" in path [C:\opt\cni\bin]` {
		t.Fatalf("no plugin: %v", err)
	}
	files[`c:\opt\cni\bin\flannel.exe`] = []byte("MZ")
	net, err := networkStatus(files, s)
	if err != nil || net.Name != "vxlan0" {
		t.Fatalf("ready: %+v %v", net, err)
	}
	// The delegate is needed at the first sandbox, not for Ready.
	if err := sandboxNetworkError(files, s, net); err == nil || !strings.Contains(err.Error(), `failed to find plugin "win-overlay"`) {
		t.Errorf("sandbox: %v", err)
	}
	files[`c:\opt\cni\bin\win-overlay.exe`] = []byte("MZ")
	if err := sandboxNetworkError(files, s, net); err != nil {
		t.Errorf("sandbox: %v", err)
	}
	// go-cni loads the first file in lexical order only: a broken first
	// file is not skipped.
	files[`c:\etc\cni\net.d\05-broken.conf`] = []byte(`{`)
	if _, err := networkStatus(files, s); err == nil {
		t.Errorf("broken first config: ready")
	}
}

// TestCNIConfigEncodings: containerd's CNI loader (libcni) reads the conflist
// with encoding/json, which takes no byte order mark: a UTF-8 BOM
// (Set-Content -Encoding UTF8) and UTF-16LE (Out-File, >) fail on their
// first byte, as encoding/json's scanner reports it.
func TestCNIConfigEncodings(t *testing.T) {
	s := cniSettings{BinDirs: []string{`C:\opt\cni\bin`}, ConfDir: `C:\etc\cni\net.d`}
	conf := `{"cniVersion":"0.3.0","name":"vxlan0","plugins":[{"type":"flannel","delegate":{"type":"win-overlay"}}]}`
	var utf16 []byte
	for _, c := range "\ufeff" + conf {
		utf16 = append(utf16, byte(c), byte(c>>8))
	}
	for _, tc := range []struct {
		name    string
		data    []byte
		wantErr string
	}{
		{"utf-8", []byte(conf), ""},
		{"utf-8 bom", append([]byte{0xEF, 0xBB, 0xBF}, conf...), "invalid character 'ï' looking for beginning of value"},
		{"utf-16le", utf16, "invalid character 'ÿ' looking for beginning of value"},
	} {
		files := memFS{`c:\etc\cni\net.d\10-flannel.conflist`: tc.data, `c:\opt\cni\bin\flannel.exe`: []byte("MZ")}
		_, err := loadCNINetwork(files, s.ConfDir)
		if _, serr := networkStatus(files, s); (serr == nil) != (tc.wantErr == "") {
			t.Errorf("%s: status %v", tc.name, serr) // the node is NotReady: "cni plugin not initialized"
		}
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.wantErr)
		}
	}
}
