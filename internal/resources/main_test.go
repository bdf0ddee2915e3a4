package resources_test

import (
	"testing"

	"github.com/wincluster/terraform-provider-windows/internal/acctest"
)

func TestMain(m *testing.M) { acctest.Main(m) }
