// Command mockllm runs the scripted model server of package mockllm for
// manual checks: it prints its URL, then one JSON line per request on
// stderr, until interrupted.
//
//	go run ./internal/mockllm/cmd/mockllm -script replies.yaml
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/dtree-dev/dtree/internal/mockllm"
)

func main() {
	script := flag.String("script", "", "YAML file of rules (see package mockllm); without it every request gets the reply \"ok\"")
	bodies := flag.Bool("bodies", false, "log each request's raw body too")
	flag.Parse()
	rules := []mockllm.Rule{{Reply: "ok", Usage: mockllm.Usage{Input: 10, Output: 2}}}
	if *script != "" {
		var err error
		if rules, err = mockllm.ReadScript(*script); err != nil {
			fmt.Fprintln(os.Stderr, "mockllm:", err)
			os.Exit(2)
		}
	}
	s, err := mockllm.Start(rules)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	enc := json.NewEncoder(os.Stderr)
	s.Observe(func(r mockllm.Request) {
		if !*bodies {
			r.Body = nil
		}
		enc.Encode(r) //nolint:errcheck // a log line
	})
	fmt.Println(s.URL)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	s.Close()
}
