package remote_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wincluster/terraform-provider-windows/internal/remote"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim"
	"github.com/wincluster/terraform-provider-windows/internal/sandbox/winsim/winsimtest"
)

func TestRunScript(t *testing.T) {
	f := startHost(t, nil)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			tr := connect(t, v.config(f))
			ctx := testCtx(t)
			res, err := tr.Run(ctx, "Write-Output $env:COMPUTERNAME\n(Get-ItemProperty -Path 'HKLM:\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion').UBR")
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Fields(res.Stdout); len(got) != 2 || got[0] != "WIN-TEST" || got[1] != "2340" {
				t.Fatalf("stdout = %q", res.Stdout)
			}

			res, err = tr.Run(ctx, "Write-Output 'half way'\nexit 7")
			var ee *remote.ExitError
			if !errors.As(err, &ee) || ee.ExitCode != 7 || res.ExitCode != 7 {
				t.Fatalf("exit 7: res %+v err %v", res, err)
			}
			if !strings.Contains(err.Error(), "code 7") || !strings.Contains(err.Error(), "half way") {
				t.Fatalf("error text %q lacks the code or the output tail", err)
			}
		})
	}
}

func TestCLIXMLErrorsDecoded(t *testing.T) {
	f := startHost(t, nil)
	for _, v := range []variant{httpNTLM, sshPassword} {
		t.Run(v.name, func(t *testing.T) {
			tr := connect(t, v.config(f))
			_, err := tr.Run(testCtx(t), "Write-Error 'kubelet.exe: access is denied'")
			var ee *remote.ExitError
			if !errors.As(err, &ee) || ee.ExitCode != 1 {
				t.Fatalf("err = %v, want exit code 1", err)
			}
			for _, bad := range []string{"CLIXML", "_x000D_", "<Objs", "Preparing modules"} {
				if strings.Contains(ee.Stderr, bad) {
					t.Fatalf("stderr not decoded (%q present):\n%s", bad, ee.Stderr)
				}
			}
			if !strings.Contains(ee.Stderr, "Write-Error : kubelet.exe: access is denied\n") {
				t.Fatalf("stderr = %q", ee.Stderr)
			}
		})
	}
}

func TestDecodeCLIXML(t *testing.T) {
	in := "#< CLIXML\r\n<Objs Version=\"1.1.0.1\" xmlns=\"http://schemas.microsoft.com/powershell/2004/04\">" +
		"<Obj S=\"progress\" RefId=\"0\"><TN RefId=\"0\"><T>x</T></TN></Obj>" +
		"<S S=\"Error\">boom &amp; bust_x000D__x000A_</S><S S=\"Error\">line_x005F_x two_x000D__x000A_</S>" +
		"<S S=\"warning\">careful_x000D__x000A_</S></Objs>"
	want := "boom & bust\nline_x two\nWARNING: careful\n"
	if got := remote.DecodeCLIXML(in); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := remote.DecodeCLIXML("plain text"); got != "plain text" {
		t.Fatalf("plain text changed: %q", got)
	}
}

// longScript builds a script of about n characters that writes a known output.
func longScript(n int) (script, want string) {
	var b strings.Builder
	b.WriteString("$ErrorActionPreference = 'Stop'\n")
	// Set-Content does not create directories (on Windows as on the simulated host).
	b.WriteString("New-Item -ItemType Directory -Force -Path 'C:\\big' | Out-Null\n")
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "Set-Content -Path 'C:\\big\\line%d.txt' -Value 'padding padding padding padding padding %d'\n", i%50, i)
	}
	b.WriteString("Write-Output 'done with the long script'\n")
	return b.String(), "done with the long script"
}

func TestLargeScripts(t *testing.T) {
	f := startHost(t, nil)
	for _, v := range []variant{httpNTLM, sshPassword} {
		for _, n := range []int{2000, 5000, 20000} {
			t.Run(fmt.Sprintf("%s/%d", v.name, n), func(t *testing.T) {
				tr := connect(t, v.config(f))
				script, want := longScript(n)
				res, err := tr.Run(testCtx(t), script)
				if err != nil {
					t.Fatal(err)
				}
				if strings.TrimSpace(res.Stdout) != want {
					t.Fatalf("stdout %q", res.Stdout)
				}
			})
		}
	}
	// The long ones went through -File, which the host logs as the file's text.
	var viaFile int
	for _, r := range f.Host.Scripts() {
		if strings.HasPrefix(r.Text, "\ufeff$ErrorActionPreference") || strings.Contains(r.Text, "done with the long script") && len(r.Text) > 4000 {
			viaFile++
		}
	}
	if viaFile < 4 {
		t.Fatalf("expected the long scripts to be uploaded and run with -File, saw %d", viaFile)
	}
}

func randomFile(t testing.TB, n int) ([]byte, string) {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return b, hex.EncodeToString(s[:])
}

func TestUpload(t *testing.T) {
	f := startHost(t, nil)
	data, sum := randomFile(t, 1<<20)
	for _, v := range []variant{httpNTLM, httpsBasic, httpsNTLM, sshPassword} {
		t.Run(v.name, func(t *testing.T) {
			tr := connect(t, v.config(f))
			ctx := testCtx(t)
			dest := `C:\k\` + v.name + `\kubelet.exe`
			start := time.Now()
			skipped, err := tr.Upload(ctx, bytes.NewReader(data), int64(len(data)), sum, dest)
			if err != nil || skipped {
				t.Fatalf("upload: skipped %v err %v", skipped, err)
			}
			t.Logf("1 MiB in %v", time.Since(start))
			got, err := f.Host.ReadFile(dest)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("file on host differs (err %v, %d bytes)", err, len(got))
			}
			skipped, err = tr.Upload(ctx, bytes.NewReader(data), int64(len(data)), strings.ToUpper(sum), dest)
			if err != nil || !skipped {
				t.Fatalf("second upload: skipped %v err %v, want skipped", skipped, err)
			}
			// No temporary files left beside it.
			for _, fi := range listDir(t, f.Host, `C:\k\`+v.name) {
				if fi != "kubelet.exe" {
					t.Fatalf("left behind: %s", fi)
				}
			}
		})
	}
}

func listDir(t *testing.T, h *winsim.Host, dir string) []string {
	t.Helper()
	var names []string
	deadline := time.Now().Add(5 * time.Second)
	for {
		names = names[:0]
		entries, _ := readDirNames(h.DiskPath(dir))
		names = append(names, entries...)
		if len(names) <= 1 || time.Now().After(deadline) {
			return names
		}
		time.Sleep(50 * time.Millisecond) // temporary files are removed in the background
	}
}

func TestUploadHashMismatch(t *testing.T) {
	f := startHost(t, nil)
	data, _ := randomFile(t, 200<<10)
	_, wrong := randomFile(t, 10)
	for _, v := range []variant{httpsBasic, sshPassword} {
		t.Run(v.name, func(t *testing.T) {
			tr := connect(t, v.config(f))
			dest := `C:\k\mismatch-` + v.name + `.bin`
			_, err := tr.Upload(testCtx(t), bytes.NewReader(data), int64(len(data)), wrong, dest)
			var hm *remote.HashMismatchError
			if !errors.As(err, &hm) || hm.Want != wrong {
				t.Fatalf("err = %v, want a HashMismatchError", err)
			}
			if f.Host.FileExists(dest) {
				t.Fatal("a file with the wrong hash was moved into place")
			}
		})
	}
}

func TestAuthFailure(t *testing.T) {
	f := startHost(t, nil)
	for _, v := range []variant{httpsBasic, httpNTLM, httpsNTLM, sshPassword} {
		t.Run(v.name, func(t *testing.T) {
			cfg := v.config(f)
			cfg.Password = "not-the-password"
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			start := time.Now()
			_, err := remote.Connect(ctx, cfg)
			var ce *remote.ConnectError
			if !errors.As(err, &ce) || ce.Step != remote.StepAuth {
				t.Fatalf("err = %v, want an auth ConnectError", err)
			}
			if time.Since(start) > 3*time.Second {
				t.Fatalf("auth failure was retried for %v", time.Since(start))
			}
			if strings.Contains(err.Error(), "not-the-password") {
				t.Fatal("the password appears in the error")
			}
			if !strings.Contains(err.Error(), fmt.Sprint(cfg.Port)) || !strings.Contains(err.Error(), "check the user name") {
				t.Fatalf("error lacks port or hint: %v", err)
			}
		})
	}
	t.Run("fault-fail-auth", func(t *testing.T) {
		f.Host.SetFaults(winsim.Faults{FailAuth: true})
		defer f.Host.SetFaults(winsim.Faults{})
		_, err := remote.Connect(testCtx(t), httpNTLM.config(f))
		var ce *remote.ConnectError
		if !errors.As(err, &ce) || ce.Step != remote.StepAuth {
			t.Fatalf("err = %v, want auth failure from the fault", err)
		}
	})
}

func TestHTTPSVerification(t *testing.T) {
	f := startHost(t, nil)
	base := httpsBasic.config(f)

	t.Run("ca-ok", func(t *testing.T) {
		connect(t, base)
	})
	t.Run("unknown-ca", func(t *testing.T) {
		cfg := base
		cfg.CACertPEM = winsimtest.NewCA(t).CertPEM
		_, err := remote.Connect(testCtx(t), cfg)
		var ce *remote.ConnectError
		if !errors.As(err, &ce) || ce.Step != remote.StepTLS {
			t.Fatalf("err = %v, want a TLS ConnectError", err)
		}
	})
	t.Run("name-mismatch", func(t *testing.T) {
		cfg := base
		cfg.TLSServerName = "some-other-host"
		_, err := remote.Connect(testCtx(t), cfg)
		var ce *remote.ConnectError
		if !errors.As(err, &ce) || ce.Step != remote.StepTLS {
			t.Fatalf("err = %v, want a TLS ConnectError", err)
		}
	})
	t.Run("template-certificate", func(t *testing.T) {
		// The certificate a prepared template's clones share: issued by
		// the trusted CA, but for the template's name.
		ca := winsimtest.NewCA(t)
		cert, key, err := ca.IssueServing("WIN2022-PREP", "win2022-prep")
		if err != nil {
			t.Fatal(err)
		}
		g := startHost(t, func(c *winsim.HostConfig) { c.TLSCertPEM, c.TLSKeyPEM = cert, key })
		cfg := httpsBasic.config(g)
		cfg.CACertPEM = ca.CertPEM
		_, err = remote.Connect(testCtx(t), cfg)
		var ce *remote.ConnectError
		if !errors.As(err, &ce) || ce.Step != remote.StepTLS {
			t.Fatalf("err = %v, want a TLS ConnectError", err)
		}
		for _, want := range []string{"issued for WIN2022-PREP", "not for this guest (" + cfg.Host + ")", "every clone presents the same certificate and holds its private key",
			"vmtools transport", "HTTP listener with NTLM message encryption", "its own certificate at its first boot"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the error lacks %q:\n%v", want, err)
			}
		}
	})
	t.Run("insecure-opt-in", func(t *testing.T) {
		cfg := base
		cfg.CACertPEM = nil
		cfg.Insecure = true
		connect(t, cfg)
	})
}

func TestSSHHostKey(t *testing.T) {
	f := startHost(t, nil)
	t.Run("pinned-mismatch", func(t *testing.T) {
		cfg := sshPassword.config(f)
		_, other := winsimtest.NewSSHKey(t)
		cfg.HostKey = string(sshAuthorizedKey(other))
		_, err := remote.Connect(testCtx(t), cfg)
		var hk *remote.HostKeyError
		if !errors.As(err, &hk) || !hk.Required || !strings.Contains(err.Error(), "HOST KEY MISMATCH") {
			t.Fatalf("err = %v, want a HostKeyError", err)
		}
	})
	t.Run("trust-on-first-use", func(t *testing.T) {
		keys := &remote.HostKeys{}
		cfg := sshPassword.config(f)
		cfg.HostKey, cfg.HostKeys = "", keys
		connect(t, cfg) // records
		if got, want := keys.Key(), strings.TrimSpace(string(sshAuthorizedKey(f.HostKey))); got != want {
			t.Fatalf("recorded %q, want the host's key %q", got, want)
		}
		if got := cfg.TrustedHostKey(); got != keys.Key() {
			t.Fatalf("TrustedHostKey() = %q", got)
		}
		connect(t, cfg) // matches

		// Another machine answers with the recorded trust: a reinstalled
		// host or an attacker.
		g := startHost(t, nil)
		cfg2 := sshPassword.config(g)
		cfg2.HostKey, cfg2.HostKeys = "", keys
		start := time.Now()
		_, err := remote.Connect(testCtx(t), cfg2)
		var hk *remote.HostKeyError
		if !errors.As(err, &hk) || hk.Required || hk.Presented != strings.TrimSpace(string(sshAuthorizedKey(g.HostKey))) {
			t.Fatalf("err = %v, want a HostKeyError naming the key presented", err)
		}
		if time.Since(start) > 3*time.Second {
			t.Fatal("a changed host key was retried")
		}
	})
	t.Run("required-recorded-key", func(t *testing.T) {
		// A key recorded at an earlier run is required; its comment does
		// not matter.
		cfg := sshPassword.config(f)
		cfg.HostKey = strings.TrimSpace(string(sshAuthorizedKey(f.HostKey))) + " recorded-earlier"
		connect(t, cfg)
		if cfg.TrustedHostKey() != cfg.HostKey {
			t.Fatalf("TrustedHostKey() = %q", cfg.TrustedHostKey())
		}
	})
	t.Run("no-policy-refused", func(t *testing.T) {
		cfg := sshPassword.config(f)
		cfg.HostKey = ""
		if _, err := remote.Connect(testCtx(t), cfg); err == nil {
			t.Fatal("connected without any host key policy")
		}
	})
}

func TestCancellationWhileStepHangs(t *testing.T) {
	f := startHost(t, func(c *winsim.HostConfig) {
		c.Faults.Steps = []winsim.StepFault{{Step: "install-containerd", Hang: true}}
	})
	cancelled := 0
	for _, v := range []variant{httpNTLM, httpsNTLM, sshPassword} {
		t.Run(v.name, func(t *testing.T) {
			tr := connect(t, v.config(f))
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			start := time.Now()
			_, err := tr.Run(ctx, "# step: install-containerd\nWrite-Output 'never'")
			elapsed := time.Since(start)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want the context's deadline", err)
			}
			if elapsed > 3*time.Second {
				t.Fatalf("cancellation took %v", elapsed)
			}
			t.Logf("returned %v after the 1s deadline", elapsed-time.Second)
			// The transport stays usable.
			if _, err := tr.Run(testCtx(t), "Write-Output 'still here'"); err != nil {
				t.Fatal(err)
			}
			// The hung command was terminated on the host (WinRM Signal, SSH
			// channel close), not left running.
			waitFor(t, 15*time.Second, func() bool {
				n := 0
				for _, r := range f.Host.Scripts() {
					if r.Step == "install-containerd" {
						n++
					}
				}
				return n >= cancelled+1
			})
			cancelled++
		})
	}
}

func TestConnectWaitsForBoot(t *testing.T) {
	f := startHost(t, func(c *winsim.HostConfig) { c.BootDelay = 1500 * time.Millisecond })
	for _, v := range []variant{httpsNTLM, sshPassword} {
		t.Run(v.name, func(t *testing.T) {
			connect(t, v.config(f))
		})
	}
	t.Run("gives-up-at-deadline", func(t *testing.T) {
		g := startHost(t, func(c *winsim.HostConfig) { c.Faults.RefuseConnections = true })
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		defer cancel()
		_, err := remote.Connect(ctx, httpNTLM.config(g))
		var ce *remote.ConnectError
		if !errors.As(err, &ce) || ce.Step != remote.StepDial || ce.Attempts < 2 {
			t.Fatalf("err = %v, want a dial ConnectError after several attempts", err)
		}
		if !strings.Contains(err.Error(), "firewall") {
			t.Fatalf("no hint in %v", err)
		}
	})
}

func TestNonZeroStepFault(t *testing.T) {
	f := startHost(t, func(c *winsim.HostConfig) {
		c.Faults.Steps = []winsim.StepFault{{Step: "join", ExitCode: 5, Stderr: "kubelet registration failed"}}
	})
	tr := connect(t, httpNTLM.config(f))
	_, err := tr.Run(testCtx(t), "# step: join\nStart-Service kubelet")
	var ee *remote.ExitError
	if !errors.As(err, &ee) || ee.ExitCode != 5 || !strings.Contains(err.Error(), "kubelet registration failed") {
		t.Fatalf("err = %v", err)
	}
}
