package cli

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dtree-dev/dtree/internal/vars"
	"github.com/dtree-dev/dtree/types"
)

// givenVars reads --vars FILE, then lays --var NAME=VALUE over it
// (readme/context.md#variables).
func givenVars(set []string, file string) (map[string]string, error) {
	given := map[string]string{}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, &UsageError{Err: fmt.Errorf("--vars: %w", err)}
		}
		var m map[string]any
		if err := yaml.Unmarshal(b, &m); err != nil {
			return nil, &UsageError{Err: fmt.Errorf("--vars %s: %v", file, err),
				Hint: "a vars file is a YAML mapping of names to values: branch: main"}
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if !vars.ValidName(k) {
				return nil, &UsageError{Err: fmt.Errorf("--vars %s: %q is not a variable name", file, types.Excerpt(k, 60)),
					Hint: "a name is a letter or _, then letters, digits and _"}
			}
			switch v := m[k].(type) {
			case nil:
				given[k] = ""
			case string, bool, int, float64:
				given[k] = fmt.Sprint(v)
			default:
				return nil, &UsageError{Err: fmt.Errorf("--vars %s: %s is a list or mapping; a variable's value is text, a number or true/false", file, k)}
			}
		}
	}
	for _, kv := range set {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !vars.ValidName(k) {
			return nil, &UsageError{Err: fmt.Errorf("--var %q: want NAME=VALUE", types.Excerpt(kv, 60)),
				Hint: "a name is a letter or _, then letters, digits and _: --var branch=main"}
		}
		given[k] = v
	}
	return given, nil
}

// runVars are the run's variables: the chart's defaults, under what the
// run is given. A chart variable with no default that the run is not
// given is an error naming it.
func runVars(doc *types.Document, given map[string]string) (map[string]string, error) {
	out := map[string]string{}
	var missing []string
	for _, v := range doc.Vars {
		if v.HasDefault {
			out[v.Name] = v.Default
		} else if _, ok := given[v.Name]; !ok {
			missing = append(missing, v.Name)
		}
	}
	maps.Copy(out, given)
	if len(missing) > 0 {
		return nil, &UsageError{Err: fmt.Errorf("the chart's %s %s no default and no value: %s",
			types.Choose(len(missing), "variable", "variables"), types.Choose(len(missing), "has", "have"), strings.Join(missing, ", ")),
			Hint: fmt.Sprintf("pass --var %s=VALUE, or --vars FILE", missing[0])}
	}
	return out, nil
}
