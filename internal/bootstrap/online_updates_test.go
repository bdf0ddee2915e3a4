package bootstrap

import (
	"strings"
	"testing"
)

// TestUpdateCriteria: the search criteria a category list becomes, each
// category a conjunction of its own (OR only at the top level).
func TestUpdateCriteria(t *testing.T) {
	got, err := UpdateCriteria([]string{"Security Updates", "Update Rollups"})
	if err != nil {
		t.Fatal(err)
	}
	want := "IsInstalled=0 and IsHidden=0 and Type='Software' and CategoryIDs contains '0fa1201d-4330-4fa8-8ae9-b877473b6441'" +
		" or IsInstalled=0 and IsHidden=0 and Type='Software' and CategoryIDs contains '28bc880e-0592-4cbf-8f95-c79b17911d5f'"
	if got != want {
		t.Errorf("criteria\n%s\nwant\n%s", got, want)
	}
	if _, err := UpdateCriteria([]string{"SecurityUpdates"}); err == nil {
		t.Error("UpdateCriteria accepted ansible's spelling SecurityUpdates, which is not the classification's name")
	}
	if _, err := UpdateCriteria(nil); err == nil {
		t.Error("UpdateCriteria accepted no categories")
	}
}

// TestValidateOnlineUpdates: each problem names the attribute and the fix.
func TestValidateOnlineUpdates(t *testing.T) {
	ok := OnlineUpdates{Categories: []string{"Security Updates"}, IncludeKBs: []string{"KB5070010"}, ExcludeKBs: []string{"KB5070014"},
		WSUSServer: "http://wsus.example.com:8530"}
	if err := ValidateOnlineUpdates(ok); err != nil {
		t.Fatalf("a valid selection: %v", err)
	}
	for name, tc := range map[string]struct {
		mutate func(*OnlineUpdates)
		want   string
	}{
		"no categories":     {func(o *OnlineUpdates) { o.Categories = nil }, `online_updates.categories: list at least one`},
		"unknown category":  {func(o *OnlineUpdates) { o.Categories = []string{"Hotfixes"} }, `"Hotfixes" is not a Windows Update classification; use one of "Applications"`},
		"ansible spelling":  {func(o *OnlineUpdates) { o.Categories = []string{"SecurityUpdates"} }, `did you mean "Security Updates"?`},
		"servicing stack":   {func(o *OnlineUpdates) { o.Categories = []string{"Servicing Stack"} }, `a servicing stack update carries the classification Microsoft gives it`},
		"malformed kb":      {func(o *OnlineUpdates) { o.ExcludeKBs = []string{"5070014"} }, `online_updates.exclude_kbs: "5070014" is not a KB id`},
		"included excluded": {func(o *OnlineUpdates) { o.ExcludeKBs = []string{"KB5070010"} }, `KB5070010 is also in include_kbs`},
		"twice":             {func(o *OnlineUpdates) { o.IncludeKBs = []string{"KB5070010", "KB5070010"} }, `online_updates.include_kbs: KB5070010 is listed twice`},
		"ftp wsus":          {func(o *OnlineUpdates) { o.WSUSServer = "ftp://wsus:8530" }, `online_updates.wsus_server: "ftp://wsus:8530" is not an http:// or https:// URL`},
		"wsus path":         {func(o *OnlineUpdates) { o.WSUSServer = "http://wsus:8530/ClientWebService" }, `has a path, query, fragment or user`},
		"wsus port":         {func(o *OnlineUpdates) { o.WSUSServer = "http://wsus:99999" }, `online_updates.wsus_server: "http://wsus:99999"`},
		"wsus quote":        {func(o *OnlineUpdates) { o.WSUSServer = "http://ws'us:8530" }, `online_updates.wsus_server`},
	} {
		o := ok
		o.IncludeKBs = append([]string(nil), ok.IncludeKBs...)
		tc.mutate(&o)
		err := ValidateOnlineUpdates(o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, tc.want)
		}
	}
	// https on WSUS's SSL port, and a trailing slash, are a server's URL too.
	for _, u := range []string{"https://wsus.example.com:8531", "http://10.0.0.5:8530/"} {
		if err := ValidateWSUSServer(u); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
}

// TestParseOnlineUpdates reads the installed updates of a step's output,
// once each, in order.
func TestParseOnlineUpdates(t *testing.T) {
	out := "WUA-SKIPPED KB5070014 exclude_kbs\r\nWUA-INSTALLED KB5070010 311 Servicing Stack Update (KB5070010)\r\n" +
		"WUA-INSTALLED KB5072011 305 Cumulative Update (KB5072011)\r\nWUA-INSTALLED KB5070010 311 again\r\nupdates installed, restart required\r\n"
	got := ParseOnlineUpdates(out)
	if len(got) != 2 || got[0] != (InstalledOnline{KB: "KB5070010", Size: 311, Title: "Servicing Stack Update (KB5070010)"}) ||
		got[1].KB != "KB5072011" || got[1].Size != 305 {
		t.Errorf("ParseOnlineUpdates = %+v", got)
	}
	if got := ParseOnlineUpdates("no more updates apply\r\n"); len(got) != 0 {
		t.Errorf("ParseOnlineUpdates of a run that installed nothing = %+v", got)
	}
}

// TestOnlineUpdateSteps: the WSUS step only with a server, the online step
// repeating after its restarts, and the selection in the agent's script.
func TestOnlineUpdateSteps(t *testing.T) {
	steps, err := onlineUpdateSteps(&OnlineUpdates{Categories: []string{"Updates"}, IncludeKBs: []string{"KB5070014"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 1 || steps[0].Name != OnlineUpdateStepName || !steps[0].MayReboot || !steps[0].RepeatAfterReboot {
		t.Fatalf("steps %+v, want the online step alone, MayReboot and RepeatAfterReboot", steps)
	}
	for _, want := range []string{"$include = @('KB5070014')", "$exclude = @()", "cd5ffd1e-e932-4e3a-bf74-18bf0b1bbd83",
		"New-Object -ComObject 'Schedule.Service'", "RegisterTaskDefinition($task, $definition, 6, 'SYSTEM', $null, 5)"} {
		if !strings.Contains(steps[0].Script, want) {
			t.Errorf("the online step's script lacks %q", want)
		}
	}
	if steps, err := onlineUpdateSteps(nil); err != nil || steps != nil {
		t.Errorf("no online updates: steps %v, err %v", steps, err)
	}
	if _, err := onlineUpdateSteps(&OnlineUpdates{Categories: []string{"Nope"}}); err == nil {
		t.Error("an unknown category rendered")
	}
}
