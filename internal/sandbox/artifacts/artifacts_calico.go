package artifacts

// CalicoVersion is the simulated Calico for Windows release.
const CalicoVersion = "v3.32.1"

// Calico's download: projectcalico/calico's Windows release archive
// calico-windows-<tag>.zip (node/Makefile WINDOWS_ARCHIVE: `zip -r` of
// CalicoWindows/, calico-node.exe at its root, the CNI plugins under cni/).
func init() {
	registerMode("calico", func(s *Server) (map[string]Artifact, error) {
		calico, err := zipFiles(map[string][]byte{
			"CalicoWindows/calico-node.exe":     binary("calico-node", CalicoVersion),
			"CalicoWindows/cni/calico.exe":      binary("calico", CalicoVersion),
			"CalicoWindows/cni/calico-ipam.exe": binary("calico-ipam", CalicoVersion),
			"CalicoWindows/README.txt":          []byte("Calico for Windows\n"),
		})
		if err != nil {
			return nil, err
		}
		a := s.add("/projectcalico/calico/releases/download/"+CalicoVersion+"/calico-windows-"+CalicoVersion+".zip", calico)
		return map[string]Artifact{"windows_archive": a}, nil
	})
}
