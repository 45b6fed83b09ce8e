package settings

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/internal/atomicfile"
	"github.com/dtree-dev/dtree/internal/yamlread"
	"github.com/dtree-dev/dtree/types"
)

// UserFile is the user settings file opened for `dtree settings set` and
// `unset`. Edits keep the file's comments and the order of its keys.
type UserFile struct {
	Path string
	doc  *yaml.Node // the document; nil while the file is missing
	lead []byte     // the comments of a file holding nothing else
}

// OpenUserFile reads the user file at path for editing; a missing file is
// an empty one. A file that is not YAML, or not a mapping, is an *Error:
// an edit would lose what it holds.
func OpenUserFile(path string) (*UserFile, error) {
	f := &UserFile{Path: path}
	data, err := readSettingsBytes(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	src := Source{Layer: LayerUser, Name: path}
	if err != nil {
		return nil, &Error{Source: src, Err: fmt.Errorf("cannot read the settings file: %w", unwrapPath(err)),
			Hint: fmt.Sprintf("make %s a readable file", path)}
	}
	doc, _, err := parseYAML(data, src)
	if err != nil {
		return nil, err
	}
	if doc.Kind == yaml.DocumentNode {
		f.doc = doc // null, maybe: root adds the mapping
	} else if len(bytes.TrimSpace(data)) > 0 {
		// Only comments, which yaml.v3 drops from an empty document:
		// keep them above what Save writes.
		f.lead = append(bytes.TrimRight(data, "\n"), '\n')
	}
	return f, nil
}

// root returns the file's top-level mapping, making one in an empty file.
func (f *UserFile) root() *yaml.Node {
	if f.doc == nil {
		f.doc = &yaml.Node{Kind: yaml.DocumentNode}
	}
	if len(f.doc.Content) == 0 || f.doc.Content[0].Kind != yaml.MappingNode { // empty, or null
		f.doc.Content = []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}
	}
	return f.doc.Content[0]
}

// names are the built-in CLIs and those defined in this file. A project's
// CLIs do not count: the user file applies in every directory.
func (f *UserFile) names() agent.Names {
	var custom []string
	for i := 0; f.doc != nil && i+1 < len(f.root().Content); i += 2 {
		if f.root().Content[i].Value == KeyCLIs {
			if m := yamlread.Resolve(f.root().Content[i+1]); m.Kind == yaml.MappingNode {
				for j := 0; j+1 < len(m.Content); j += 2 {
					custom = append(custom, m.Content[j].Value)
				}
			}
		}
	}
	return agent.Names{}.With(custom...)
}

// Get returns the value of key as written in the file.
func (f *UserFile) Get(key string) (string, bool) {
	for i := 0; f.doc != nil && i+1 < len(f.root().Content); i += 2 {
		if f.root().Content[i].Value == key {
			if v := yamlread.Resolve(f.root().Content[i+1]); v.Kind == yaml.ScalarNode && !isNull(v) {
				return v.Value, true
			}
		}
	}
	return "", false
}

// Set checks value and stores it under key: a CLI by its codename, numbers
// and booleans in canonical form, a duration and a path as given. Not a
// scalar setting (clis included), or a bad value, is an *Error.
func (f *UserFile) Set(key, value string) error {
	k, ok := LookupKey(key)
	if !ok {
		return &Error{Key: key, Err: errors.New("not a setting 'dtree settings set' can change"),
			Hint: "the settings it changes are: " + strings.Join(scalarNames(), ", ")}
	}
	names := f.names()
	val, err := k.parse(value, names)
	if err != nil {
		return &Error{Key: key, Err: err, Hint: k.hint(names)}
	}
	if (k.kind == kindCLI || k.kind == kindCLIOrEmpty) && slices.Contains(types.SplitCLIs(val), agent.ReplayName) {
		// Every later run would stop at "the replay agent needs
		// --answers FILE"; a run given one picks replay itself.
		return &Error{Key: key, Err: errors.New("replay answers only from an answers file, which a setting cannot give, so every run would fail"),
			Hint: "pass --answers FILE to dtree run instead: it answers every node with the replay agent, whatever the settings say ('dtree docs replay')"}
	}
	node := &yaml.Node{Kind: yaml.ScalarNode, Value: val, Tag: "!!str"}
	switch k.kind {
	case kindCount, kindTokens, kindTurns, kindParallel:
		node.Tag = "!!int"
	case kindMoney:
		node.Tag = "!!float"
		if !strings.ContainsAny(node.Value, ".eE") {
			node.Tag = "!!int"
		}
	case kindBool:
		node.Tag = "!!bool"
	case kindDuration:
		node.Value = strings.TrimSpace(value) // 600 stays 600, not 10m0s
		if _, err := strconv.Atoi(node.Value); err == nil {
			node.Tag = "!!int"
		} else if _, err := strconv.ParseFloat(node.Value, 64); err == nil {
			node.Tag = "!!float"
		}
	}
	root := f.root()
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == key {
			old := root.Content[i+1]
			node.LineComment, node.HeadComment, node.FootComment = old.LineComment, old.HeadComment, old.FootComment
			root.Content[i+1] = node
			f.remove(key, i+2) // a duplicate would shadow the new value
			return nil
		}
	}
	root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, node)
	return nil
}

// Unset removes key from the file and says whether it was there.
func (f *UserFile) Unset(key string) bool {
	if f.doc == nil {
		return false
	}
	return f.remove(key, 0)
}

// remove deletes every entry for key from the top-level mapping, from the
// pair at index from on.
func (f *UserFile) remove(key string, from int) bool {
	root, found := f.root(), false
	for i := from; i+1 < len(root.Content); {
		if root.Content[i].Value == key {
			root.Content = append(root.Content[:i], root.Content[i+2:]...)
			found = true
			continue
		}
		i += 2
	}
	return found
}

// Save writes the file atomically (a temporary file renamed over it) with
// mode 0600, creating its directory with mode 0700.
func (f *UserFile) Save() error {
	var buf bytes.Buffer
	buf.Write(f.lead)
	if f.doc != nil && len(f.root().Content) > 0 {
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(f.doc); err != nil {
			return fmt.Errorf("write settings file %s: %w", f.Path, err)
		}
		if err := enc.Close(); err != nil {
			return fmt.Errorf("write settings file %s: %w", f.Path, err)
		}
	}
	dir := filepath.Dir(f.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("write settings file: %w", err)
	}
	// Synced: a settings file is written rarely, and must survive a crash.
	if err := atomicfile.WriteBytes(f.Path, buf.Bytes(), 0o600, atomicfile.Options{Sync: true, Follow: true}); err != nil {
		return fmt.Errorf("write settings file %s: %w", f.Path, errors.Unwrap(err))
	}
	return nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
