package mockllm

import (
	"bytes"
	"fmt"
	"os"

	"go.yaml.in/yaml/v3"
)

// Script is the YAML form of a list of rules, for cmd/mockllm:
//
//	rules:
//	  - match: "Did every test pass?"
//	    reply: '{"choices": ["Yes", "No"], "answer": "Yes", "reasons": []}'
//	    usage: {input: 120, output: 30, cached: 100}
//	  - match: ""
//	    status: 429
//	    message: slow down
//
// and with tool calls (readme/dev.md has the keys):
//
//	rules:
//	  - turn: 1
//	    tools: [{name: Bash, input: {command: "echo hi"}}]
//	  - tool_result: true
//	    result: hi
//	    reply: It said hi.
type Script struct {
	Rules []Rule `yaml:"rules"`
}

// ReadScript reads a YAML script.
func ReadScript(path string) ([]Rule, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Script
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s.Rules, nil
}
