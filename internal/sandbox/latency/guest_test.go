package latency

import (
	"testing"
	"time"
)

// A customized clone's first boot is the phases the sandbox plays one after
// another (internal/sandbox/vmtools/customization.go): the boot, sysprep's
// generalize, its reboot, specialize, OOBE. Their sum must be the published
// first boot: 6-15 minutes (FirstBootCustomized).
func TestCustomizationPhasesAddUpToAFirstBoot(t *testing.T) {
	phases := []Op{WindowsBoot, SysprepGeneralize, WindowsRestart, SysprepSpecialize, SysprepOOBE}
	for _, q := range []Quantile{Median, Tail} {
		m := New(1, q)
		var sum time.Duration
		for _, op := range phases {
			sum += m.Real(op)
		}
		if want := m.Real(FirstBootCustomized); sum != want {
			t.Errorf("quantile %d: the phases add up to %s, the first boot with customization takes %s", q, sum, want)
		}
		if sum < 6*time.Minute || sum > 15*time.Minute {
			t.Errorf("quantile %d: %s lies outside the published 6-15 minutes", q, sum)
		}
	}
}

func TestMoveTakesTheQuantilesThroughput(t *testing.T) {
	// 1.5 GB (a Windows base image) at 5 MB/s is 5 minutes, at 1.5 MB/s
	// (the tail) about 16.7: image-builder#382's "10+ minutes" lies between.
	if got, want := New(1, Median).Move(ImagePull, 1.5e9), 300*time.Second; got != want {
		t.Errorf("median pull = %s, want %s", got, want)
	}
	if got := New(1, Tail).Move(ImagePull, 1.5e9); got < 10*time.Minute {
		t.Errorf("tail pull = %s, want 10+ minutes", got)
	}
	if got := New(100, Median).Move(DownloadLink, 50e6); got != 10*time.Millisecond {
		t.Errorf("50 MB at factor 100 = %s, want 10ms", got)
	}
	var off *Model
	if off.Move(ImagePull, 1e9) != 0 {
		t.Error("an off model moves at once")
	}
	for r, tp := range RealRates {
		if tp.Source == "" || tp.P99 <= 0 || tp.P99 > tp.P50 {
			t.Errorf("%s: want a source and 0 < P99 <= P50 (the tail is the slow rate)", r)
		}
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv(EnvFactor, "")
	if m, err := FromEnv(); m != nil || err != nil {
		t.Fatalf("unset: %v, %v; want off", m, err)
	}
	t.Setenv(EnvFactor, "50")
	t.Setenv(EnvQuantile, "p99")
	m, err := FromEnv()
	if err != nil || m.Factor != 50 || m.Quantile != Tail {
		t.Fatalf("50/p99: %+v, %v", m, err)
	}
	t.Setenv(EnvQuantile, "p90")
	if _, err := FromEnv(); err == nil {
		t.Fatal("p90 must be refused")
	}
	t.Setenv(EnvFactor, "fast")
	if _, err := FromEnv(); err == nil {
		t.Fatal("a factor that is no number must be refused")
	}
}
