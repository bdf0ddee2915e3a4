package remote_test

import (
	"bytes"
	"fmt"
	"os"
	"testing"
)

// benchRun measures sequential commands per second (Create, Command,
// Receive, Signal, Delete per command over WinRM; one session over SSH).
func benchRun(b *testing.B, v variant) {
	f := startHost(b, nil)
	tr := connect(b, v.config(f))
	ctx := testCtx(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := tr.Run(ctx, "Write-Output 'ping'"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cmds/s")
}

func BenchmarkRunWinRM(b *testing.B) { benchRun(b, httpsNTLM) } // HTTPS + NTLM
func BenchmarkRunSSH(b *testing.B)   { benchRun(b, sshPassword) }

// benchUpload measures the time to upload a 50 MiB file (the size of the
// binaries the bootstrap moves).
func benchUpload(b *testing.B, v variant) {
	f := startHost(b, nil)
	tr := connect(b, v.config(f))
	ctx := testCtx(b)
	data, sum := randomFile(b, 50<<20)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dest := fmt.Sprintf(`C:\k\bench-%d.exe`, i)
		skipped, err := tr.Upload(ctx, bytes.NewReader(data), int64(len(data)), sum, dest)
		if err != nil || skipped {
			b.Fatalf("skipped %v err %v", skipped, err)
		}
		b.StopTimer()
		_ = os.Remove(f.Host.DiskPath(dest))
		b.StartTimer()
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/upload")
}

func BenchmarkUpload50MiBWinRM(b *testing.B) { benchUpload(b, httpsNTLM) }
func BenchmarkUpload50MiBSSH(b *testing.B)   { benchUpload(b, sshPassword) }
