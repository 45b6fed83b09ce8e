package settings

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/dtree-dev/dtree/types"
)

// FlagValue is the value a flag gives a setting that has no flag of its
// own: Flag is the flag as typed, "--approve-all".
type FlagValue struct{ Value, Flag string }

// LoadOptions say where Load looks. The zero value reads the process's
// environment, ./dtree.yaml and the user file, and no flags.
type LoadOptions struct {
	// ConfigFile (--config) is read instead of ./dtree.yaml, and must exist.
	ConfigFile string
	// Flags holds the flags named by Key.Flag (those of dtree run); a flag
	// counts only when Changed.
	Flags *pflag.FlagSet
	// FlagSet holds the values of flags that are not a setting's own
	// (--no-checkpoints, --approve-all), by key: they count as flags.
	FlagSet map[string]FlagValue
	// Getenv reads the environment; nil is os.Getenv. An empty variable
	// counts as unset.
	Getenv func(string) string
	// Cwd is where dtree.yaml is looked for and a relative ConfigFile is
	// found; "" is the process's working directory.
	Cwd string
	// Run is the settings a run recorded (run_start's settings), for
	// dtree resume, and RunID that run's id: over the files and the
	// environment, under the flags (readme/resume.md). Keys it does not
	// know are passed over: a newer dtree's, and clis, whose definitions
	// are the files'.
	Run   map[string]string
	RunID string
	// UserConfigDir holds dtree/config.yaml; "" is $XDG_CONFIG_HOME, or
	// $HOME/.config when that is unset or relative.
	UserConfigDir string
	// Check names the settings the command uses; nil is all of them. A
	// bad value of any other setting is not an error: that setting keeps
	// the value of the layer below (its default at the bottom), and the
	// problem is in Settings.Ignored, for a warning. A run-only setting
	// gone wrong does not stop lint or inspect.
	Check []string
	// Trust trusts the project file dtree finds (--trust), as DTREE_TRUST=1
	// does (readme/settings.md#trust).
	Trust bool
	// ListUntrusted is for a command that runs none of the CLIs: it lists
	// them or checks a chart's names. What an untrusted project file may
	// not set is then kept, and named in Settings.Untrusted, rather than
	// an error.
	ListUntrusted bool
}

// ChartKeys are the settings the commands that read a chart without
// running it use (lint, inspect, graph, convert): the CLIs a node falls
// back to, which they show and check. The custom CLIs (clis:) are read by
// every command.
var ChartKeys = []string{KeyDefaultCLI, KeyDefaultValidateCLI, KeyDefaultRetryCLI}

func (o LoadOptions) checks(key string) bool {
	return o.Check == nil || slices.Contains(o.Check, key)
}

func (o LoadOptions) getenv(name string) string {
	if o.Getenv == nil {
		return os.Getenv(name)
	}
	return o.Getenv(name)
}

// UserFile is the path of the user settings file, or "" when neither
// XDG_CONFIG_HOME nor HOME says where it is.
func (o LoadOptions) UserFile() string {
	dir := o.UserConfigDir
	if dir == "" {
		if x := o.getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
			dir = x
		} else if h := o.getenv("HOME"); h != "" {
			dir = filepath.Join(h, ".config")
		} else {
			return ""
		}
	}
	return filepath.Join(dir, "dtree", "config.yaml")
}

// ProjectFile is the path of the project settings file: ConfigFile, else
// dtree.yaml in Cwd.
func (o LoadOptions) ProjectFile() string {
	p := o.ConfigFile
	if p == "" {
		p = "dtree.yaml"
	}
	if o.Cwd != "" && !filepath.IsAbs(p) {
		p = filepath.Join(o.Cwd, p)
	}
	return p
}

// Load reads dtree's settings. Precedence, highest first: a flag the user
// passed, a DTREE_* variable, the project file (--config FILE, or
// ./dtree.yaml when there), the user file, the built-in default. Both files
// are read; the project file's settings override the user file's one by
// one, and its custom CLIs replace the user file's of the same name whole.
// Every value, in every layer, is checked; the first bad one is an *Error
// naming its file and line, variable or flag. A ./dtree.yaml the user has
// not trusted may not set what runs (trust.go): an *Error wrapping
// ErrUntrusted, unless o.ListUntrusted.
//
// This is the one place viper is used: the files and the environment go in
// as layers of config maps (the environment from o.Getenv rather than
// viper's AutomaticEnv, which reads the process's own), the flags are bound
// so a flag wins only when Changed, and the defaults sit under them all. The
// files are parsed with yaml.v3 first, for line numbers and because viper
// lowercases map keys, which would mangle the env: of custom CLIs.
func Load(o LoadOptions) (*Settings, error) {
	var files []*fileLayer
	var user *fileLayer
	if p := o.UserFile(); p != "" {
		l, err := readFile(p, LayerUser, false)
		if err != nil {
			return nil, err
		}
		files = append(files, l)
		user = l
	}
	project, err := readFile(o.ProjectFile(), LayerProject, o.ConfigFile != "")
	if err != nil {
		return nil, err
	}
	files = append(files, project)

	s := Default()
	for _, f := range files {
		if f == nil {
			continue
		}
		for _, c := range f.clis {
			for name := range s.CLIs {
				if types.FoldName(name) == types.FoldName(c.def.Name) {
					delete(s.CLIs, name)
					delete(s.Sources, KeyCLIs+"."+name)
				}
			}
			s.CLIs[c.def.Name] = c.def
			s.Sources[KeyCLIs+"."+c.def.Name] = Source{Layer: f.src.Layer, Name: f.src.Name, Line: c.line}
		}
	}
	names := s.Names()

	v := viper.New()
	for _, k := range keys {
		v.SetDefault(k.Name, k.Default)
	}
	// check parses one raw value and records where it came from. A bad
	// value of a setting the command does not use is skipped: ok false,
	// no error.
	check := func(k Key, raw string, src Source) (val string, ok bool, err error) {
		val, err = k.parse(raw, names)
		if err != nil {
			hint := k.hint(names) + "\n" + fixHint(k, src)
			if src.Layer == LayerFlag {
				hint = k.hintAs(src.Name, names) // the user typed the flag, not the setting
			}
			e := &Error{Source: src, Key: k.Name, Err: err, Hint: hint}
			if !o.checks(k.Name) {
				s.Ignored = append(s.Ignored, e)
				return "", false, nil
			}
			return "", false, e
		}
		s.Sources[k.Name] = src
		return val, true, nil
	}
	// layerOf checks each value a layer sets, for MergeConfigMap.
	layerOf := func(raw func(k Key) (string, Source, bool)) (map[string]any, error) {
		layer := map[string]any{}
		for _, k := range keys {
			text, src, given := raw(k)
			if !given {
				continue
			}
			val, ok, err := check(k, text, src)
			if err != nil {
				return nil, err
			}
			if ok {
				layer[k.Name] = val
			}
		}
		return layer, nil
	}
	layers := []func(k Key) (string, Source, bool){}
	for _, f := range files {
		if f == nil {
			continue
		}
		layers = append(layers, func(k Key) (string, Source, bool) {
			sc, ok := f.values[k.Name]
			return sc.text, Source{Layer: f.src.Layer, Name: f.src.Name, Line: sc.line}, ok
		})
	}
	layers = append(layers, func(k Key) (string, Source, bool) {
		raw := o.getenv(k.Env)
		return raw, Source{Layer: LayerEnv, Name: k.Env}, raw != ""
	})
	if o.Run != nil {
		layers = append(layers, func(k Key) (string, Source, bool) {
			raw, ok := o.Run[k.Name]
			return raw, Source{Layer: LayerRun, Name: o.RunID}, ok
		})
	}
	if len(o.FlagSet) > 0 {
		layers = append(layers, func(k Key) (string, Source, bool) {
			f, ok := o.FlagSet[k.Name]
			return f.Value, Source{Layer: LayerFlag, Name: f.Flag}, ok
		})
	}
	for _, raw := range layers {
		layer, err := layerOf(raw)
		if err != nil {
			return nil, err
		}
		if err := v.MergeConfigMap(layer); err != nil {
			return nil, err
		}
	}
	if o.Flags != nil {
		for _, k := range keys {
			if k.Flag == "" {
				continue
			}
			f := o.Flags.Lookup(k.Flag)
			if f == nil {
				continue
			}
			if err := v.BindPFlag(k.Name, f); err != nil {
				return nil, err
			}
			if f.Changed {
				if _, _, err := check(k, f.Value.String(), Source{Layer: LayerFlag, Name: "--" + k.Flag}); err != nil {
					return nil, err
				}
			}
		}
	}

	for _, k := range keys {
		val, err := k.parse(v.GetString(k.Name), names)
		if err == nil {
			err = s.set(k.Name, val)
		}
		if err != nil {
			return nil, fmt.Errorf("settings: %s: %w", k.Name, err) // checked above: a bug
		}
	}
	if project != nil {
		trusted, err := o.trusted(project)
		if err != nil {
			return nil, err
		}
		if !trusted {
			s.Untrusted = untrusted(s, project, user)
		}
		if s.Untrusted != nil && !o.ListUntrusted {
			return nil, s.Untrusted.Error()
		}
	}
	return s, nil
}

// fixHint says where to change a bad value.
func fixHint(k Key, src Source) string {
	switch src.Layer {
	case LayerUser:
		return fmt.Sprintf("change it on line %d of %s, or run 'dtree settings set %s VALUE'", src.Line, src.Name, k.Name)
	case LayerProject:
		return fmt.Sprintf("change it on line %d of %s", src.Line, src.Name)
	case LayerEnv:
		return fmt.Sprintf("change or unset %s", src.Name)
	case LayerFlag:
		return fmt.Sprintf("give %s a value it takes", src.Name)
	case LayerRun:
		if k.Flag != "" {
			return fmt.Sprintf("run %s recorded it; give it again with --%s", src.Name, k.Flag)
		}
		return fmt.Sprintf("run %s recorded it, and no flag sets it: start a new run with dtree run", src.Name)
	}
	return ""
}
