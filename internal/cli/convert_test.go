package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/export"
)

func TestOutputFormat(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flag, out, want string
		usage           bool
	}{
		{flag: "yaml", want: "yaml"},
		{flag: "csv", out: "x.yaml", want: "csv"},
		{out: "x.YML", want: "yaml"},
		{out: "dir/x.json", want: "json"},
		{out: "x.gv", want: "dot"},
		{out: "x.mmd", want: "mermaid"},
		{out: "x.MERMAID", want: "mermaid"},
		{out: "x.drawio", want: "drawio"},
		{out: "dir/x.drawio.xml", want: "drawio"},
		{out: "x.dio", want: "drawio"},
		{flag: "mmd", want: "mermaid"},
		{out: "x.svg", usage: true}, // svg is graph's, not convert's
		{out: "x.txt", usage: true},
		{out: "x.xml", usage: true},
		{out: "README.md", want: "mermaid"}, // Markdown, a block a page
		{usage: true},
		{flag: "png", usage: true},
	} {
		got, err := outputFormat(tc.flag, "to", tc.out, export.Formats)
		if tc.usage {
			var u *UsageError
			assert.ErrorAs(t, err, &u, "%+v", tc)
			continue
		}
		require.NoError(t, err, "%+v", tc)
		assert.Equal(t, tc.want, got, "%+v", tc)
	}
}

func TestRunDir(t *testing.T) {
	t.Parallel()
	logs := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(logs, "20261122T000000Z-abcdef"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(logs, "20261122T000000Z-abcdef", "events.jsonl"), nil, 0o644))
	require.NoError(t, os.Symlink("20261122T000000Z-abcdef", filepath.Join(logs, "latest")))
	require.NoError(t, os.WriteFile(filepath.Join(logs, "file"), nil, 0o644))
	a := &App{Getenv: noEnv}
	for _, tc := range []struct {
		run, want string
		usage     bool
	}{
		{run: "latest", want: filepath.Join(logs, "latest")},
		{run: "20261122T000000Z-abcdef", want: filepath.Join(logs, "20261122T000000Z-abcdef")},
		{run: filepath.Join(logs, "latest"), want: filepath.Join(logs, "latest")},
		{run: "nope", usage: true},
		{run: "file", usage: true},
	} {
		got, err := a.runDir(tc.run, logs, "")
		if tc.usage {
			var u *UsageError
			assert.ErrorAs(t, err, &u, tc.run)
			continue
		}
		require.NoError(t, err, tc.run)
		assert.Equal(t, tc.want, got)
	}
}

// With no runs at all, the hint says to run the chart first: --run
// latest is what is missing.
func TestRunDirNoRunsYet(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	a := &App{Getenv: noEnv}
	for _, logs := range []string{empty, filepath.Join(empty, "not-made")} {
		for _, run := range []string{"latest", "20261122T000000Z-abcdef"} {
			_, err := a.runDir(run, logs, "")
			var u *UsageError
			require.ErrorAs(t, err, &u, run)
			assert.EqualError(t, u.Err, "no run \""+run+"\": there are no runs yet in "+logs)
			assert.Contains(t, u.Hint, "run the chart first")
			assert.NotContains(t, u.Hint, "pass --run latest")
		}
	}
}

// TestOutputFormatSaysWhat: an output name no writer takes says which
// names are written.
func TestOutputFormatSaysWhat(t *testing.T) {
	t.Parallel()
	_, err := outputFormat("", "to", "chart.txt", export.Formats)
	var u *UsageError
	require.ErrorAs(t, err, &u)
	assert.EqualError(t, u.Err, `cannot tell the format to write from the name "chart.txt": no format dtree writes has its extension`)
	assert.Equal(t, "pass --to yaml|json|csv|drawio|mermaid|dot, or name the file .csv, .json, .yaml, .yml, .drawio, .drawio.xml, .dio, .mmd, .mermaid, .md, .dot, .gv", u.Hint)
	// graph refuses a .md, so it does not offer one.
	_, err = outputFormat("", "to", "chart.png", graphFormats)
	require.ErrorAs(t, err, &u)
	assert.Equal(t, "pass --to mermaid|dot|svg|drawio, or name the file .drawio, .drawio.xml, .dio, .mmd, .mermaid, .dot, .gv, .svg", u.Hint)
}
