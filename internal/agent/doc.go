// Package agent knows the agent CLIs dtree can run nodes with. For now it
// holds their names, so that charts naming an unknown CLI are caught before a
// run; starting them comes with `dtree run`.
package agent
