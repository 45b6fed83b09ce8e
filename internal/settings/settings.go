package settings

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dtree-dev/dtree/internal/agent"
	"github.com/dtree-dev/dtree/types"
)

// Settings are dtree's effective settings: every layer applied, every value
// checked.
type Settings struct {
	DefaultCLI string
	// DefaultValidateCLI and DefaultRetryCLI may be empty: the node's own
	// CLI then.
	DefaultValidateCLI string
	DefaultRetryCLI    string
	DefaultRetryCount  int
	DefaultTimeout     time.Duration
	LogDir             string
	WriteLogShort      bool
	WriteLogLong       bool
	WriteLogGraph      bool
	// LongLogCallMax and LongLogMax bound long.log: one call's output,
	// and the file (readme/logs.md#longlog); 0 is no bound.
	LongLogCallMax int64
	LongLogMax     int64
	// StreamLogMax bounds each call's file in streams/
	// (readme/logs.md#streams); 0 is no bound.
	StreamLogMax int64
	// MaxCost and MaxTokens are the run's budget (readme/run.md#budgets);
	// 0 is none.
	MaxCost   float64
	MaxTokens int64
	// AllowUnmetered lets a run with a budget use CLIs that cannot report
	// what it bounds (readme/run.md#budgets).
	AllowUnmetered bool
	// MaxTurns bounds the model turns of one agent call
	// (readme/run.md#max-turns); 0 is none.
	MaxTurns int
	// JUnit is the file each run's JUnit XML report goes to
	// (readme/ci.md#junit); "" is none.
	JUnit string
	// Worktree is off, head or dirty: whether a run goes on in a git
	// worktree of its own, and what it starts from
	// (readme/workspace.md#worktrees).
	Worktree string
	// KeepRuns is how many runs log_dir keeps (readme/logs.md#old-runs);
	// 0 keeps all.
	KeepRuns int
	// Rollback is types.RollbackAttempt or RollbackKeep: what a failed
	// attempt's change becomes before its retry
	// (readme/workspace.md#rollback); a node's rollback wins.
	Rollback string
	// Checkpoints records the working tree before the run and after each
	// step, in a git repository (readme/workspace.md).
	Checkpoints bool
	// Approvals is what a run does at an approval gate: ApprovalsAsk,
	// ApprovalsApprove or ApprovalsReject (readme/charts.md#approval-gates).
	Approvals string
	// Parallel is how many agent calls and command steps a run makes at
	// once, across its branches (readme/parallel.md#limits); 1 or more.
	Parallel int
	// CLIs are the custom CLI definitions, keyed by their lower-case name;
	// one with a built-in's name replaces the built-in.
	CLIs map[string]agent.Definition

	// Sources say where each value came from, keyed by setting name
	// (default_cli) and by "clis.NAME" for custom CLIs.
	Sources map[string]Source
	// Ignored are the bad values of settings the command does not use
	// (LoadOptions.Check), which it passed over.
	Ignored []*Error
	// Untrusted names what an untrusted project file sets that it may not
	// (readme/settings.md#trust), when LoadOptions.ListUntrusted kept it;
	// nil when nothing is.
	Untrusted *Untrusted
}

// Default returns the built-in settings, before any file, variable or flag.
func Default() *Settings {
	s := &Settings{CLIs: map[string]agent.Definition{}, Sources: map[string]Source{}}
	for _, k := range keys {
		if err := s.set(k.Name, k.Default); err != nil {
			panic("settings: bad built-in default: " + err.Error())
		}
		s.Sources[k.Name] = Source{Layer: LayerDefault}
	}
	return s
}

// Defaults are what a node falls back to when its tags and metadata say
// nothing.
func (s *Settings) Defaults() types.Defaults {
	return types.Defaults{
		CLI:         s.DefaultCLI,
		ValidateCLI: s.DefaultValidateCLI,
		RetryCLI:    s.DefaultRetryCLI,
		Retries:     s.DefaultRetryCount,
		Timeout:     s.DefaultTimeout,
		MaxVisits:   types.DefaultMaxVisits,
		MaxTurns:    s.MaxTurns,
	}
}

// Names knows the built-in CLIs and the custom ones.
func (s *Settings) Names() agent.Names {
	return agent.Names{}.With(slices.Sorted(maps.Keys(s.CLIs))...)
}

// Value returns a setting as text, the way `dtree settings get` prints it:
// a CLI's codename, a whole number, a Go duration, true or false.
func (s *Settings) Value(key string) (string, bool) {
	switch key {
	case KeyDefaultCLI:
		return s.DefaultCLI, true
	case KeyDefaultValidateCLI:
		return s.DefaultValidateCLI, true
	case KeyDefaultRetryCLI:
		return s.DefaultRetryCLI, true
	case KeyDefaultRetryCount:
		return fmt.Sprint(s.DefaultRetryCount), true
	case KeyDefaultTimeout:
		return s.DefaultTimeout.String(), true
	case KeyLogDir:
		return s.LogDir, true
	case KeyWriteLogShort:
		return fmt.Sprint(s.WriteLogShort), true
	case KeyWriteLogLong:
		return fmt.Sprint(s.WriteLogLong), true
	case KeyWriteLogGraph:
		return fmt.Sprint(s.WriteLogGraph), true
	case KeyLongLogCallMax:
		return FormatSize(s.LongLogCallMax), true
	case KeyLongLogMax:
		return FormatSize(s.LongLogMax), true
	case KeyStreamLogMax:
		return FormatSize(s.StreamLogMax), true
	case KeyMaxCost:
		return strconv.FormatFloat(s.MaxCost, 'f', -1, 64), true
	case KeyMaxTokens:
		return strconv.FormatInt(s.MaxTokens, 10), true
	case KeyAllowUnmetered:
		return fmt.Sprint(s.AllowUnmetered), true
	case KeyMaxTurns:
		return strconv.Itoa(s.MaxTurns), true
	case KeyJUnit:
		return s.JUnit, true
	case KeyWorktree:
		return s.Worktree, true
	case KeyKeepRuns:
		return strconv.Itoa(s.KeepRuns), true
	case KeyRollback:
		return s.Rollback, true
	case KeyCheckpoints:
		return fmt.Sprint(s.Checkpoints), true
	case KeyApprovals:
		return s.Approvals, true
	case KeyParallel:
		return strconv.Itoa(s.Parallel), true
	}
	return "", false
}

// set stores a value already in its canonical text form (Key.parse).
func (s *Settings) set(key, v string) error {
	var err error
	switch key {
	case KeyDefaultCLI:
		s.DefaultCLI = v
	case KeyDefaultValidateCLI:
		s.DefaultValidateCLI = v
	case KeyDefaultRetryCLI:
		s.DefaultRetryCLI = v
	case KeyDefaultRetryCount:
		s.DefaultRetryCount, err = strconv.Atoi(v)
	case KeyDefaultTimeout:
		s.DefaultTimeout, err = time.ParseDuration(v)
	case KeyLogDir:
		s.LogDir = v
	case KeyWriteLogShort:
		s.WriteLogShort = v == "true"
	case KeyWriteLogLong:
		s.WriteLogLong = v == "true"
	case KeyWriteLogGraph:
		s.WriteLogGraph = v == "true"
	case KeyLongLogCallMax:
		s.LongLogCallMax, err = ParseSize(v)
	case KeyLongLogMax:
		s.LongLogMax, err = ParseSize(v)
	case KeyStreamLogMax:
		s.StreamLogMax, err = ParseSize(v)
	case KeyMaxCost:
		s.MaxCost, err = strconv.ParseFloat(v, 64)
	case KeyMaxTokens:
		s.MaxTokens, err = strconv.ParseInt(v, 10, 64)
	case KeyAllowUnmetered:
		s.AllowUnmetered = v == "true"
	case KeyMaxTurns:
		s.MaxTurns, err = strconv.Atoi(v)
	case KeyJUnit:
		s.JUnit = v
	case KeyWorktree:
		s.Worktree = v
	case KeyKeepRuns:
		s.KeepRuns, err = strconv.Atoi(v)
	case KeyRollback:
		s.Rollback = v
	case KeyCheckpoints:
		s.Checkpoints = v == "true"
	case KeyApprovals:
		s.Approvals = v
	case KeyParallel:
		s.Parallel, err = strconv.Atoi(v)
	default:
		err = fmt.Errorf("unknown setting %q", key)
	}
	return err
}

// Layer is where a setting can come from, lowest precedence first.
type Layer string

// The layers, lowest precedence first.
const (
	LayerDefault Layer = "default"
	LayerUser    Layer = "user"    // $XDG_CONFIG_HOME/dtree/config.yaml
	LayerProject Layer = "project" // ./dtree.yaml or --config FILE
	LayerEnv     Layer = "env"     // DTREE_* variables
	LayerRun     Layer = "run"     // the run dtree resume goes on from
	LayerFlag    Layer = "flag"
)

// Source says where one value came from.
type Source struct {
	Layer Layer
	// Name is the file's path, the variable's name or the flag ("--retries");
	// empty for a default.
	Name string
	// Line is the line of the file the value is on, 0 when unknown.
	Line int
}

// String is the source as `dtree settings list` shows it: "default",
// "user file /home/me/.config/dtree/config.yaml:3", "env DTREE_LOG_DIR",
// "flag --retries".
func (s Source) String() string {
	switch s.Layer {
	case LayerUser, LayerProject:
		return string(s.Layer) + " file " + s.where()
	case LayerEnv, LayerFlag, LayerRun:
		return string(s.Layer) + " " + s.Name
	}
	return string(LayerDefault)
}

// where is the place itself: "FILE:LINE", the variable, the flag.
func (s Source) where() string {
	switch {
	case s.Layer == LayerEnv:
		return "environment variable " + s.Name
	case s.Line > 0:
		return fmt.Sprintf("%s:%d", s.Name, s.Line)
	}
	return s.Name
}

// Error is a setting dtree cannot use: a file that does not parse, a value
// of the wrong type, an unknown CLI. The CLI maps it to exit 2.
type Error struct {
	Source Source // where the bad value is; zero for a value not yet stored
	Key    string // the setting, or "" for a problem with the whole file
	Err    error
	// Hint says what to do, one or more lines.
	Hint string
}

func (e *Error) Error() string {
	var parts []string
	if w := e.Source.where(); w != "" {
		parts = append(parts, w)
	}
	// A variable or flag names its setting already.
	if e.Key != "" && e.Source.Layer != LayerEnv && e.Source.Layer != LayerFlag {
		parts = append(parts, e.Key)
	}
	return strings.Join(append(parts, e.Err.Error()), ": ")
}

func (e *Error) Unwrap() error { return e.Err }
