package artifacts

// flannel's downloads: flanneld.exe (flannel-io/flannel's release asset)
// and flannel-io/cni-plugin's Windows archive (scripts/package.sh:
// flannel-amd64.exe at its root).
func init() {
	registerMode("flannel", func(s *Server) (map[string]Artifact, error) {
		flannelCNI, err := tarGz(map[string][]byte{"flannel-amd64.exe": binary("flannel", FlannelCNIPluginVersion)})
		if err != nil {
			return nil, err
		}
		s.FlannelCNIPlugin = s.add("/flannel-io/cni-plugin/releases/download/"+FlannelCNIPluginVersion+
			"/cni-plugin-flannel-windows-amd64-"+FlannelCNIPluginVersion+".tgz", flannelCNI)
		s.Flanneld = s.add("/flannel-io/flannel/releases/download/"+FlannelVersion+"/flanneld.exe", binary("flanneld", FlannelVersion))
		return map[string]Artifact{"flanneld": s.Flanneld, "cni_plugin": s.FlannelCNIPlugin}, nil
	})
}
