package artifacts

import (
	"encoding/json"
	"strings"

	"github.com/wincluster/terraform-provider-windows/internal/sandbox/updatepkg"
)

// The update packages of the site's mirror, as Microsoft Update Catalog
// names its downloads (windows10.0-kb<N>-x64.msu, and the .cab inside it
// that DISM installs). The KB numbers and revisions are the sandbox's own,
// not Microsoft's: a month's servicing stack update (SSU, no restart) and
// cumulative update (LCU, which needs the SSU first and a restart), the next
// month's LCU, an LCU of Windows Server 2019 (not applicable on 2022) and a
// corrupt copy of the LCU (its content changed after it was signed). Source
// of the order: "Servicing stack updates",
// https://learn.microsoft.com/en-us/windows/deployment/update/servicing-stack-updates
// (install the SSU before the LCU).
//
// Windows Server 2025 (build 26100) has no separate SSU: its servicing stack
// comes inside the LCU. Its updates are checkpoint cumulative updates: a
// later LCU carries only the changes since the last checkpoint, which is
// installed first ("Checkpoint cumulative updates and the Microsoft Update
// Catalog", https://learn.microsoft.com/en-us/windows/deployment/update/catalog-checkpoint-cumulative-updates:
// with DISM, the checkpoint's package before the target LCU's). The sandbox
// serves a checkpoint (restart) and the month's LCU (restart) of 2025, both
// .msu as the Catalog publishes them. The LCU names its checkpoint: a host
// below the checkpoint's revision that installs the LCU alone through DISM
// or wusa is refused as not modelled (Microsoft documents the order, not
// Windows' answer to another one); the order is the user's
// (windows_updates).

// Update is an update package the mirror serves.
type Update struct {
	Artifact
	KB    string
	Build string // 10.0.<build>
	UBR   int    // the revision after the restart (an LCU's)
}

// The sandbox's update packages.
var (
	SSU2022     = updatepkg.Package{KB: "KB5070010", Kind: updatepkg.SSU, Build: "20348"}
	LCU2022     = updatepkg.Package{KB: "KB5070011", Kind: updatepkg.LCU, Build: "20348", UBR: 4405, Requires: "KB5070010", Restart: true}
	LCU2022Next = updatepkg.Package{KB: "KB5072011", Kind: updatepkg.LCU, Build: "20348", UBR: 4466, Requires: "KB5070010", Restart: true}
	LCU2019     = updatepkg.Package{KB: "KB5070012", Kind: updatepkg.LCU, Build: "17763", UBR: 8100, Restart: true}
	LCU2025     = updatepkg.Package{KB: "KB5070013", Kind: updatepkg.LCU, Build: "26100", UBR: 7171, Restart: true, Checkpoint: "KB5070017", CheckpointUBR: 1742}
	// NET2022 and Defender2022 are offered by the update service only: a
	// .NET Framework cumulative update ("Updates") and a critical update,
	// neither of which changes the UBR nor needs a restart.
	NET2022      = updatepkg.Package{KB: "KB5070014", Kind: updatepkg.Other, Build: "20348"}
	Critical2022 = updatepkg.Package{KB: "KB5070016", Kind: updatepkg.Other, Build: "20348"}
	// Checkpoint2025 is the 2025 checkpoint cumulative update LCU2025
	// builds on: an LCU of a lower revision.
	Checkpoint2025 = updatepkg.Package{KB: "KB5070017", Kind: updatepkg.LCU, Build: "26100", UBR: 1742, Restart: true}
)

// Updates are the served packages.
type Updates struct {
	SSU2022        Update // .cab, for DISM
	LCU2022        Update // .msu, for wusa
	LCU2022Cab     Update // the same LCU as a .cab, for DISM
	LCU2022Next    Update // next month's, .msu
	LCU2019        Update // .msu, not applicable on 2022
	LCU2025        Update // .msu
	Checkpoint2025 Update // .msu, the checkpoint LCU2025 builds on
	LCU2022Corrupt Update // .msu whose content is not what was signed
	// ServiceURL is the update service (the site's WSUS, as a
	// windows_golden_image's wsus_server names it): its catalog is every
	// package above but the corrupt one, and NET2022 and Critical2022
	// (updatepkg.CatalogPath, updatepkg.ContentPath).
	ServiceURL string
	Catalog    []updatepkg.CatalogEntry
}

func (s *Server) addUpdates() {
	add := func(p updatepkg.Package, ext string, content []byte, suffix string) Update {
		name := "/updates/windows10.0-" + strings.ToLower(p.KB) + "-x64" + suffix + "." + ext
		return Update{Artifact: s.add(name, content), KB: p.KB, Build: "10.0." + p.Build, UBR: p.UBR}
	}
	s.Updates = Updates{
		SSU2022:        add(SSU2022, "cab", SSU2022.Encode(), ""),
		LCU2022:        add(LCU2022, "msu", LCU2022.Encode(), ""),
		LCU2022Cab:     add(LCU2022, "cab", LCU2022.Encode(), ""),
		LCU2022Next:    add(LCU2022Next, "msu", LCU2022Next.Encode(), ""),
		LCU2019:        add(LCU2019, "msu", LCU2019.Encode(), ""),
		LCU2025:        add(LCU2025, "msu", LCU2025.Encode(), ""),
		Checkpoint2025: add(Checkpoint2025, "msu", Checkpoint2025.Encode(), ""),
		LCU2022Corrupt: add(LCU2022, "msu", LCU2022.Corrupt(), "-corrupt"),
	}
	offer := func(p updatepkg.Package, title, classification string) {
		content := updatepkg.ContentPath + "windows10.0-" + strings.ToLower(p.KB) + "-x64.cab"
		s.add(content, p.Encode())
		s.Updates.Catalog = append(s.Updates.Catalog, p.Entry(title, classification, content))
	}
	offer(SSU2022, "Servicing Stack Update for Microsoft server operating system version 21H2 for x64-based Systems ("+SSU2022.KB+")", "Security Updates")
	offer(LCU2022, "Cumulative Update for Microsoft server operating system version 21H2 for x64-based Systems ("+LCU2022.KB+")", "Security Updates")
	offer(LCU2022Next, "Cumulative Update for Microsoft server operating system version 21H2 for x64-based Systems ("+LCU2022Next.KB+")", "Security Updates")
	offer(NET2022, "Cumulative Update for .NET Framework 3.5, 4.8 for Microsoft server operating system version 21H2 for x64 ("+NET2022.KB+")", "Updates")
	offer(Critical2022, "Update for Microsoft server operating system version 21H2 for x64-based Systems ("+Critical2022.KB+")", "Critical Updates")
	offer(LCU2019, "Cumulative Update for Windows Server 2019 for x64-based Systems ("+LCU2019.KB+")", "Security Updates")
	offer(LCU2025, "Cumulative Update for Microsoft server operating system version 24H2 for x64-based Systems ("+LCU2025.KB+")", "Security Updates")
	catalog, err := json.Marshal(s.Updates.Catalog)
	if err != nil { // plain structs always encode
		panic(err)
	}
	s.add(updatepkg.CatalogPath, catalog)
	s.Updates.ServiceURL = s.root
}
