package settings

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/yamlread"
	"github.com/dtree-dev/dtree/types"
)

// fileLayer is one settings file as read: its scalar values as written
// (checked later, when every custom CLI name is known) and its custom CLIs.
type fileLayer struct {
	src    Source // Layer and Name (the path)
	values map[string]scalar
	clis   []customCLI // in file order
	data   []byte      // the content as read, whose digest trust is checked against
}

type scalar struct {
	text string
	line int
}

// readFile reads and parses a settings file. A missing file is nil, or an
// error when must is set (--config names a file that is not there).
func readFile(path string, layer Layer, must bool) (*fileLayer, error) {
	src := Source{Layer: layer, Name: path}
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !must {
			return nil, nil
		}
		err = unwrapPath(err)
		hint := fmt.Sprintf("make %s a readable file, or remove it", path)
		if must {
			hint = "check the file given to --config"
		}
		return nil, &Error{Source: src, Err: fmt.Errorf("cannot read the settings file: %w", err), Hint: hint}
	}
	_, root, err := parseYAML(data, src)
	if err != nil || root == nil {
		return nil, err
	}
	l, err := readLayer(root, src)
	if l != nil {
		l.data = data
	}
	return l, err
}

// parseYAML parses a settings file. root is its top-level mapping, nil for
// an empty file (or one holding only comments or null).
func parseYAML(data []byte, src Source) (doc, root *yaml.Node, err error) {
	doc = &yaml.Node{}
	if err := yaml.Unmarshal(data, doc); err != nil {
		line, msg := yamlread.Syntax(err)
		src.Line = line
		where := src.Name
		if src.Line > 0 {
			where = fmt.Sprintf("line %d of %s", src.Line, src.Name)
		}
		return nil, nil, &Error{Source: src, Err: fmt.Errorf("not valid YAML: %s", msg),
			Hint: fmt.Sprintf("fix the YAML at %s; 'dtree docs settings' shows the format", where)}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return doc, nil, nil
	}
	root = doc.Content[0]
	switch {
	case root.Kind == yaml.ScalarNode && root.Tag == "!!null":
		return doc, nil, nil
	case root.Kind != yaml.MappingNode:
		src.Line = root.Line
		return nil, nil, &Error{Source: src, Err: errors.New("the file is not a YAML mapping of settings"),
			Hint: "write one setting a line, as key: value (default_cli: codex); 'dtree docs settings' shows the format"}
	}
	return doc, root, nil
}

// readLayer takes the settings out of a file's top-level mapping.
func readLayer(root *yaml.Node, src Source) (*fileLayer, error) {
	l := &fileLayer{src: src, values: map[string]scalar{}}
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		kn, vn := root.Content[i], yamlread.Resolve(root.Content[i+1])
		key := kn.Value
		at := src
		at.Line = kn.Line
		if line, dup := seen[key]; dup {
			return nil, &Error{Source: at, Key: key, Err: fmt.Errorf("set twice (first on line %d)", line),
				Hint: fmt.Sprintf("keep one %s in %s", key, src.Name)}
		}
		seen[key] = kn.Line
		if key == KeyCLIs {
			clis, err := readCLIs(vn, src)
			if err != nil {
				return nil, err
			}
			l.clis = clis
			continue
		}
		k, ok := LookupKey(key)
		if !ok {
			if chart := chartKey(root); chart != "" {
				return nil, chartError(src, chart)
			}
			return nil, &Error{Source: at, Key: key, Err: errors.New("unknown setting" + types.DidYouMean(key, KeyNames())),
				Hint: "the settings are: " + strings.Join(KeyNames(), ", ")}
		}
		if isNull(vn) {
			continue // "key:" with no value leaves the setting to the layers below
		}
		if vn.Kind != yaml.ScalarNode {
			return nil, &Error{Source: at, Key: key, Err: errors.New("must be a single value, not a list or mapping"),
				Hint: k.hint(agent.Names{})}
		}
		l.values[key] = scalar{text: vn.Value, line: vn.Line}
	}
	return l, nil
}

// chartKey is the first key of a top-level mapping that only a YAML chart
// has (nodes:, pages:), or "".
func chartKey(root *yaml.Node) string {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := root.Content[i]; k.Value == "nodes" || k.Value == "pages" {
			return k.Value
		}
	}
	return ""
}

// chartError says a settings file is a chart: one named dtree.yaml in the
// working directory is read as the project's settings.
func chartError(src Source, key string) *Error {
	if src.Layer == LayerProject && filepath.Base(src.Name) == "dtree.yaml" {
		return &Error{Source: src, Err: fmt.Errorf("this is a chart (it has %s:), but dtree reads ./dtree.yaml as its settings file", key),
			Hint: "rename the chart (mv dtree.yaml chart.yaml) and run it by its new name; ./dtree.yaml is for settings ('dtree docs settings'), or pass --config to read settings from elsewhere"}
	}
	return &Error{Source: src, Err: fmt.Errorf("this is a chart (it has %s:), not a settings file", key),
		Hint: "--config takes a settings file ('dtree docs settings'); the chart is the command's argument"}
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}
