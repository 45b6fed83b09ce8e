//go:build !race

package runlog

const raceEnabled = false
