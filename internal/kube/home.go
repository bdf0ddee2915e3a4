package kube

import "os"

var homeDir = os.UserHomeDir
