// Package greet is the small Go module the quickstart chart works on:
// its tests are what the chart's command step runs.
package greet

import "strings"

// Hello greets name, or the world when name is blank.
func Hello(name string) string {
	name = strings.TrimSpace(name)
	if name == "" {
		name = "world"
	}
	return "Hello, " + name + "!"
}
