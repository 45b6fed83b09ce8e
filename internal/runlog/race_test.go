//go:build race

package runlog

const raceEnabled = true
