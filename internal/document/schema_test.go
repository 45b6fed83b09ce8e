package document_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/dtree-dev/dtree/internal/document"
	"github.com/dtree-dev/dtree/types"
)

// The JSON Schema in schema/chart.schema.json is for editors. These tests
// keep it in step with the importer: the keys it allows are the keys
// FromYAML reads, and the YAML charts in testdata that import without a
// malformed_yaml error validate against it, while those with one do not.

const schemaPath = "../../schema/chart.schema.json"

func loadSchema(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile(schemaPath)
	require.NoError(t, err)
	var s map[string]any
	require.NoError(t, json.Unmarshal(data, &s))
	return s
}

func propertyNames(t *testing.T, s map[string]any) []string {
	t.Helper()
	props, ok := s["properties"].(map[string]any)
	require.True(t, ok, "schema has properties")
	return slices.Sorted(maps.Keys(props))
}

func TestSchemaKeysMatchTheImporter(t *testing.T) {
	t.Parallel()
	s := loadSchema(t)
	defs := s["$defs"].(map[string]any)
	assert.Equal(t, slices.Sorted(slices.Values(document.YAMLChartKeys)), propertyNames(t, s), "chart keys")
	assert.Equal(t, slices.Sorted(slices.Values(document.YAMLPageKeys)), propertyNames(t, defs["page"].(map[string]any)), "page keys")
	node := defs["node"].(map[string]any)
	assert.Equal(t, slices.Sorted(slices.Values(document.YAMLNodeKeys)), propertyNames(t, node), "node keys")
	var kinds []string
	for _, k := range node["properties"].(map[string]any)["kind"].(map[string]any)["enum"].([]any) {
		kinds = append(kinds, k.(string))
	}
	assert.Equal(t, document.YAMLKinds, kinds, "kinds")
	for _, m := range []map[string]any{s, defs["page"].(map[string]any), node} {
		assert.Equal(t, false, m["additionalProperties"], "unknown keys are errors")
	}
}

func TestYAMLChartsValidateAgainstTheSchema(t *testing.T) {
	t.Parallel()
	s := loadSchema(t)
	var charts []string
	err := filepath.WalkDir("../../testdata/charts", func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".yaml") {
			charts = append(charts, p)
		}
		return err
	})
	require.NoError(t, err)
	require.NotEmpty(t, charts)
	for _, p := range charts {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		doc, err := document.Read(p, "", nil)
		require.NoError(t, err)
		malformed := slices.ContainsFunc(doc.Errors, func(d types.Diagnostic) bool { return d.Class == "malformed_yaml" })
		var v any
		require.NoError(t, yaml.Unmarshal(data, &v), p)
		problems := validate(s, s, v, "")
		if malformed {
			assert.NotEmpty(t, problems, "%s has malformed_yaml errors but passes the schema", p)
		} else {
			assert.Empty(t, problems, "%s imports but fails the schema", p)
		}
	}
}

// TestSchemaAgreesWithTheImporter holds the schema to the importer on
// the edges of the format: each chart passes the schema exactly when it
// imports without a malformed_yaml error.
func TestSchemaAgreesWithTheImporter(t *testing.T) {
	t.Parallel()
	s := loadSchema(t)
	for _, tc := range []struct {
		in        string
		malformed bool
	}{
		{"nodes: [{id: a, next: b}, {id: b}]\n", false},
		{"nodes: [{id: a, branches: {x: b, y: c}}, {id: b}, {id: c}]\n", false},
		{"nodes: [{id: a, next: [b, c]}, {id: b}, {id: c}]\n", false}, // unlabeled_branch: a graph error
		{"nodes: [{id: a, next: b, branches: {x: c}}, {id: b}, {id: c}]\n", true},
		{"nodes: [{id: a, branches: {x: b}, next: [c]}, {id: b}, {id: c}]\n", true},
		{"nodes: [{id: a, parallel: [b, c]}, {id: b}, {id: c}]\n", false},
		{"nodes: [{id: a, parallel: {x: b, y: c}}, {id: b, join: any}, {id: c}]\n", false},
		{"nodes: [{id: a, parallel: [b], next: c}, {id: b}, {id: c}]\n", true},
		{"nodes: [{id: a, parallel: [b], branches: {x: c}}, {id: b}, {id: c}]\n", true},
		{"nodes: [{id: a, parallel: b}, {id: b}]\n", true},
		{"nodes: [{id: \"\"}]\n", true},
		{"nodes: [{id: \"  \"}]\n", true},
		{"nodes: [{id: }]\n", true},
		{"nodes: [{id: 0}]\n", false},
		{"nodes: [{id: a, next: \"\"}]\n", true},
		{"nodes: [{id: a, next: [b, \" \"]}, {id: b}]\n", true},
		{"nodes: [{id: a, branches: {x: \"\"}}]\n", true},
		{"pages: [{id: \"\", nodes: [{id: a}]}]\n", false}, // a page's id defaults to its number
		{"pages: [{id: , nodes: [{id: a}]}]\n", false},
	} {
		doc, err := document.FromYAML(strings.NewReader(tc.in))
		require.NoError(t, err)
		malformed := slices.ContainsFunc(doc.Errors, func(d types.Diagnostic) bool { return d.Class == "malformed_yaml" })
		require.Equal(t, tc.malformed, malformed, "importer on %s: %+v", tc.in, doc.Errors)
		var v any
		require.NoError(t, yaml.Unmarshal([]byte(tc.in), &v))
		problems := validate(s, s, v, "")
		assert.Equal(t, tc.malformed, len(problems) > 0, "schema on %s: %v", tc.in, problems)
	}
}

func TestSchemaValidatorCatches(t *testing.T) {
	t.Parallel()
	s := loadSchema(t)
	for _, bad := range []string{
		"title: x\n",
		"nodes: []\npages: []\n",
		"nodes: [{text: no id}]\n",
		"nodes: [{id: \"\"}]\n",
		"nodes: [{id: a, kind: loop}]\n",
		"nodes: [{id: a, metadata: {retries: [1]}}]\n",
		"nodes: [{id: a, branches: [b]}]\n",
		"nodes: [{id: a, next: b, branches: {x: c}}, {id: b}, {id: c}]\n",
		"pages: [{id: p}]\n",
		"color: red\nnodes: []\n",
	} {
		var v any
		require.NoError(t, yaml.Unmarshal([]byte(bad), &v))
		assert.NotEmpty(t, validate(s, s, v, ""), bad)
	}
}

// validate checks v against the part of JSON Schema that chart.schema.json
// uses: $ref, type, enum, properties, additionalProperties, required,
// items, oneOf, allOf, not, minLength and pattern. It returns what does not hold.
func validate(root, s map[string]any, v any, at string) []string {
	if ref, ok := s["$ref"].(string); ok {
		target := root
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			target = target[part].(map[string]any)
		}
		return validate(root, target, v, at)
	}
	var out []string
	if types, ok := s["type"]; ok && !hasType(types, v) {
		return []string{fmt.Sprintf("%s: %T is not of type %v", at, v, types)}
	}
	if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, v) {
		out = append(out, fmt.Sprintf("%s: %v is not one of %v", at, v, enum))
	}
	if alts, ok := s["oneOf"].([]any); ok {
		n := 0
		for _, alt := range alts {
			if len(validate(root, alt.(map[string]any), v, at)) == 0 {
				n++
			}
		}
		if n != 1 {
			out = append(out, fmt.Sprintf("%s: matches %d of oneOf", at, n))
		}
	}
	if all, ok := s["allOf"].([]any); ok {
		for _, part := range all {
			out = append(out, validate(root, part.(map[string]any), v, at)...)
		}
	}
	if str, ok := v.(string); ok {
		if n, ok := s["minLength"].(float64); ok && float64(utf8.RuneCountInString(str)) < n {
			out = append(out, fmt.Sprintf("%s: %q is shorter than %v", at, str, n))
		}
		if p, ok := s["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(str) {
			out = append(out, fmt.Sprintf("%s: %q does not match %s", at, str, p))
		}
	}
	if not, ok := s["not"].(map[string]any); ok && len(validate(root, not, v, at)) == 0 {
		out = append(out, fmt.Sprintf("%s: matches what it must not (%v)", at, not["description"]))
	}
	if m, ok := v.(map[string]any); ok {
		props, _ := s["properties"].(map[string]any)
		for k, val := range m {
			if p, ok := props[k]; ok {
				out = append(out, validate(root, p.(map[string]any), val, at+"/"+k)...)
				continue
			}
			switch extra := s["additionalProperties"].(type) {
			case bool:
				if !extra {
					out = append(out, fmt.Sprintf("%s: unknown key %q", at, k))
				}
			case map[string]any:
				out = append(out, validate(root, extra, val, at+"/"+k)...)
			}
		}
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if _, ok := m[r.(string)]; !ok {
					out = append(out, fmt.Sprintf("%s: no %s", at, r))
				}
			}
		}
	}
	if list, ok := v.([]any); ok {
		if items, ok := s["items"].(map[string]any); ok {
			for i, item := range list {
				out = append(out, validate(root, items, item, fmt.Sprintf("%s/%d", at, i))...)
			}
		}
	}
	return out
}

// hasType reports whether v, as yaml.v3 decodes it, is of a JSON Schema
// type (or one of a list of them).
func hasType(types any, v any) bool {
	var names []string
	switch t := types.(type) {
	case string:
		names = []string{t}
	case []any:
		for _, n := range t {
			names = append(names, n.(string))
		}
	}
	for _, name := range names {
		switch v.(type) {
		case string:
			if name == "string" {
				return true
			}
		case int, int64, uint64, float64:
			if name == "number" {
				return true
			}
		case bool:
			if name == "boolean" {
				return true
			}
		case nil:
			if name == "null" {
				return true
			}
		case map[string]any:
			if name == "object" {
				return true
			}
		case []any:
			if name == "array" {
				return true
			}
		}
	}
	return false
}
