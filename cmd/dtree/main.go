// Command dtree runs flowcharts as LLM agent workflows.
package main

import (
	"os"

	"github.com/dtree-dev/dtree/internal/cli"
)

func main() {
	os.Exit(cli.Main())
}
