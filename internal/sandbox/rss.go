package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ResidentMemory returns a process's resident set size in bytes, read from
// /proc; ok is false where that is unavailable (not Linux, process gone).
func ResidentMemory(pid int) (bytes int64, ok bool) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	defer func() { _ = f.Close() }() // read only
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// The line reads "VmRSS:	  123456 kB".
		if rest, found := strings.CutPrefix(sc.Text(), "VmRSS:"); found {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}
