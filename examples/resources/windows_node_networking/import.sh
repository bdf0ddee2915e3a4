# The namespace of the agents' objects; the mode is read from what it holds.
terraform import windows_node_networking.this kube-system
