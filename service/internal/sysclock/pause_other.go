//go:build !unix

package sysclock

import "time"

// finePause sleeps d on a Go timer where nanosleep is not available.
func finePause(d time.Duration) { time.Sleep(d) }
