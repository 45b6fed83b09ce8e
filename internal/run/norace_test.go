//go:build !race

package run

// raceEnabled: the race detector slows a test about tenfold.
const raceEnabled = false
