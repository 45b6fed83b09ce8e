// Package conformance runs the real dtree binary with the real agent CLIs
// (claude, codex, …) against the mock model server of package mockllm,
// offline, and checks what a user would notice: the argv dtree builds is
// accepted, the answer is read, the usage dtree records is the usage the
// server sent, API errors come back with the CLI's own message, a timeout
// leaves no process behind, and long prompts and prompts starting with '-'
// arrive byte for byte.
//
// The tests skip unless DTREE_CONFORMANCE_CLIS names a directory holding
// the CLIs' binaries; `make conformance` installs the versions pinned in
// testdata/conformance/npm-packages.txt into a cache directory and sets it
// (.ci/conformance). Each CLI is one file, NAME_test.go, holding its setup
// (environment, config files) and its expectations: see cliCase.
package conformance
