//go:build !unix

package bench

import "time"

// processCPU returns 0: CPU time is read only on Unix systems.
func processCPU() time.Duration { return 0 }
