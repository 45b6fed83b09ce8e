package agent

import "io"

// InProcessName is how logs name the program of a CLI answered inside
// dtree (Definition.InProcess), where another CLI's argv has its binary:
// "dtree (replay)".
func InProcessName(def Definition) string { return "dtree (" + def.Name + ")" }

// InProcessResult is the Result of a call that an in-process agent (the
// replay agent) answered by printing stdout and stderr, and ending with
// exitCode: they reach c.Output as a child's output does, stderr after
// its marker line, and are kept and read as Run keeps and reads a text
// CLI's (the answer is stdout, trimmed), so that the logs and the answer
// are those of a real call. argv is what the logs show as its command.
func InProcessResult(c Call, argv []string, stdout, stderr string, exitCode int) Result {
	out := &sink{out: c.Output}
	so := &stream{sink: out, tail: tail{max: MaxStdoutTail}, name: "stdout"}
	se := &stream{sink: out, tail: tail{max: MaxStderrTail}, name: "stderr"}
	_, _ = io.WriteString(so, stdout)
	_, _ = io.WriteString(se, stderr)
	res := Result{ExitCode: exitCode, Argv: argv, OutputError: out.err}
	res.StdoutBytes, res.StderrBytes = so.tail.n, se.tail.n
	res.Truncated = so.tail.truncated()
	res.Stdout, res.StderrTail = so.tail.String(), se.tail.String()
	reply, _ := textDecoder{}.end(output{stdout: res.Stdout, total: res.StdoutBytes, truncated: res.Truncated, stderr: res.StderrTail})
	res.Answer = reply.answer
	return res
}
