package winversion

import "testing"

func TestByVersion(t *testing.T) {
	cases := map[string]string{
		"2019": "10.0.17763", "1809": "10.0.17763", "LTSC2019": "10.0.17763",
		"2022": "10.0.20348", " ltsc2022 ": "10.0.20348",
		"2025": "10.0.26100",
	}
	for in, want := range cases {
		r, err := ByVersion(in)
		if err != nil {
			t.Fatalf("ByVersion(%q): %v", in, err)
		}
		if r.Build != want {
			t.Errorf("ByVersion(%q).Build = %q, want %q", in, r.Build, want)
		}
	}
	if _, err := ByVersion("2016"); err == nil {
		t.Error("ByVersion(2016) succeeded; 2016 is not supported by Kubernetes")
	}
}

func TestValidateBuild(t *testing.T) {
	for _, ok := range []string{"10.0.17763", "10.0.20348", "10.0.26100", "10.0.30000"} {
		if err := ValidateBuild(ok); err != nil {
			t.Errorf("ValidateBuild(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "2022", "10.0.20348.1", "10.0.203", "11.0.20348", "10.0.2o348"} {
		if err := ValidateBuild(bad); err == nil {
			t.Errorf("ValidateBuild(%q) accepted an invalid build", bad)
		}
	}
}

func TestByBuildIgnoresUBR(t *testing.T) {
	r, ok := ByBuild("10.0.20348.2340")
	if !ok || r.Version != "2022" {
		t.Fatalf("ByBuild(10.0.20348.2340) = %+v, %v", r, ok)
	}
	if _, ok := ByBuild("10.0.99999"); ok {
		t.Error("ByBuild found a release for an unknown build")
	}
	if n, err := BuildNumber("10.0.17763"); err != nil || n != 17763 {
		t.Errorf("BuildNumber = %d, %v", n, err)
	}
}
