package types

import "slices"

// Step is a node's step kind: what dtree does when a run reaches the node.
// It is resolved once, when the chart is loaded (nodeconf.Resolve), from
// the node's role and the key that marks a kind (custom data command:
// makes a command step), and everything after the load reads it rather
// than the node's metadata. It is not the node's Kind, which is the shape
// the chart draws (KindTerminator, KindDecision, …): a command step may be
// drawn as a box or a diamond.
//
// Each kind is one entry: StepInfo here for what is fixed about it, which
// every package may read; how it runs, what it leaves for the steps after
// it, how a resume reads it back and how it replays is its stepKind in
// internal/run (attempt.go, stepKinds); how it lints is its check in
// internal/chart (kindChecks) (readme/dev.md#what-a-change-touches).
type Step string

// The step kinds.
const (
	// StepTerminator is a start or an end: never run.
	StepTerminator Step = "terminator"
	// StepProcess is an agent's step: the node's text is its task, its work
	// is validated.
	StepProcess Step = "process"
	// StepDecision is an agent's choice of one of the node's branches.
	StepDecision Step = "decision"
	// StepCommand runs the node's command through /bin/sh
	// (readme/context.md#command-steps); with branches, its exit status
	// routes.
	StepCommand Step = "command"
	// StepApproval is a gate: the run stops and a person approves or
	// rejects (readme/charts.md#approval-gates); the answer routes along
	// the branch labelled approved or rejected.
	StepApproval Step = "approval"
)

// StepInfo is what is fixed about a step kind.
type StepInfo struct {
	// Agent: the step calls the node's agent CLIs, so a run checks first
	// that they can run (preflight), budgets note whether they report
	// usage, and a replay answers them from its answers file. A step
	// that is not an agent's has no CLI to check or replay.
	Agent bool
	// Shape is how the pictures draw the step (ShapeHexagon, …) when the
	// chart does not draw it as a diamond; "" draws the chart's shape.
	Shape string
	// Drawn are the chart shapes that make a node this kind with no key
	// of its own, by the name the importers give Node.Shape (Lucid's CSV
	// shape and JSON class; draw.io's and Mermaid's name theirs so),
	// folded (FoldName). The importers read such a shape as a step
	// (DrawnStep), and nodeconf marks the node with the kind.
	Drawn []string
}

// Shapes a step kind may be drawn with (StepInfo.Shape): each picture
// writer has its form of each (internal/export/picture.go, stepShapes).
const (
	ShapeHexagon = "hexagon"
	// ShapeTrapezoid is Lucid's and draw.io's "Manual operation": a
	// person's step.
	ShapeTrapezoid = "trapezoid"
)

// steps are the step kinds' fixed properties: one entry a kind.
var steps = map[Step]StepInfo{
	StepTerminator: {},
	StepProcess:    {Agent: true},
	StepDecision:   {Agent: true},
	StepCommand:    {Shape: ShapeHexagon},
	StepApproval: {Shape: ShapeTrapezoid,
		Drawn: []string{"manualoperation", "manualoperationblock", "manualoperationblocknew"}},
}

// DrawnStep is the kind a node drawn as shape is with no key saying
// otherwise (StepInfo.Drawn); "" when the shape marks none.
func DrawnStep(shape string) Step {
	f := FoldName(shape)
	for s, info := range steps {
		if slices.Contains(info.Drawn, f) {
			return s
		}
	}
	return ""
}

// Steps are the step kinds, in a fixed order: what a test of each
// package's side of the kinds walks, so that a kind added here and
// forgotten there fails it.
func Steps() []Step {
	out := make([]Step, 0, len(steps))
	for s := range steps {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// Info is what is fixed about the kind; the zero StepInfo (not an agent's,
// the chart's shape) for "" (a node of a document not loaded as a chart)
// or an unknown kind.
func (s Step) Info() StepInfo { return steps[s] }

// Agent says whether the step calls agent CLIs (StepInfo.Agent).
func (s Step) Agent() bool { return steps[s].Agent }

// RoleStep is the kind of a node that no key marks as another: its role's
// (terminator, decision or process).
func RoleStep(role string) Step {
	switch role {
	case RoleTerminator:
		return StepTerminator
	case RoleDecision:
		return StepDecision
	}
	return StepProcess
}
