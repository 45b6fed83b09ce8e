package run

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/runlog"
)

// shortDoc is s's short.json, decoded.
func shortDoc(t *testing.T, s *Summary) map[string]any {
	t.Helper()
	b := bytes.Join(s.shortJSON(), nil)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(b, &doc), "%s", b)
	return doc
}

// short.json of a fork run (readme/logs.md#shortjson): each node names
// the branch it ran on, the run's own none, and the branches come with
// their paths, as in --json; a run without a fork has no branches key.
func TestShortJSONBranches(t *testing.T) {
	t.Parallel()
	s := &Summary{FormatVersion: 1, Status: StatusSucceeded, Path: []string{"start", "plan", "review"}}
	s.add(&NodeResult{ID: "plan", Text: "Plan", Visit: 1, Status: StatusSucceeded})
	b := shortDoc(t, s)
	assert.NotContains(t, b, "branches")
	assert.NotContains(t, b["nodes"].([]any)[0], "branch")

	s.add(&NodeResult{ID: "tests", Text: "Write the tests", Visit: 1, Branch: "plan/tests", Status: StatusSucceeded})
	s.Branches = append(s.Branches, BranchResult{ID: "plan/tests", Fork: "plan", Name: "tests", Join: "review", Status: StatusSucceeded, Path: []string{"tests", "pass"}})
	s.add(&NodeResult{ID: "docs", Text: "Update the docs", Visit: 1, Branch: "plan/docs", Status: StatusFailed})
	s.Branches = append(s.Branches, BranchResult{ID: "plan/docs", Fork: "plan", Name: "docs", Join: "review", Status: StatusFailed, Error: "node docs failed", Path: []string{"docs"}})
	s.add(&NodeResult{ID: "review", Text: "Review", Visit: 1, Status: StatusSucceeded})
	doc := shortDoc(t, s)
	var got []string
	for _, n := range doc["nodes"].([]any) {
		m := n.(map[string]any)
		got = append(got, fmt.Sprintf("%v@%v", m["id"], m["branch"]))
	}
	assert.Equal(t, []string{"plan@<nil>", "tests@plan/tests", "docs@plan/docs", "review@<nil>"}, got)
	assert.Equal(t, []any{
		map[string]any{"id": "plan/tests", "fork": "plan", "name": "tests", "join": "review", "status": "succeeded", "path": []any{"tests", "pass"}},
		map[string]any{"id": "plan/docs", "fork": "plan", "name": "docs", "join": "review", "status": "failed", "error": "node docs failed", "path": []any{"docs"}},
	}, doc["branches"])
	assert.NotContains(t, doc, "branches_left_out")
}

// short.json's branches are bounded as its nodes are: the newest
// ShortSteps branches, each with the newest ShortSteps of its path, and
// each rewrite costs the same however many branches ended before.
func TestShortJSONBranchesBounded(t *testing.T) {
	t.Parallel()
	s := &Summary{FormatVersion: 1, Status: StatusRunning, Path: []string{}}
	long := make([]string, 3*ShortSteps)
	for i := range long {
		long[i] = fmt.Sprint("n", i)
	}
	const n = 20 * ShortSteps
	for i := range n {
		s.Branches = append(s.Branches, BranchResult{ID: fmt.Sprint("f/b", i), Fork: "f", Name: fmt.Sprint("b", i), Status: StatusSucceeded, Path: long[:1+i%len(long)]})
		if i%ShortSteps == 0 {
			s.shortJSON()
		}
	}
	doc := shortDoc(t, s)
	bs := doc["branches"].([]any)
	require.Len(t, bs, ShortSteps)
	assert.InDelta(t, n-ShortSteps, doc["branches_left_out"], 0)
	last := bs[len(bs)-1].(map[string]any)
	assert.Equal(t, fmt.Sprint("f/b", n-1), last["id"])
	assert.Len(t, last["path"], ShortSteps)
	assert.InDelta(t, (n-1)%len(long)+1-ShortSteps, last["path_left_out"], 0)
	assert.Equal(t, fmt.Sprint("n", (n-1)%len(long)), last["path"].([]any)[ShortSteps-1])
	assert.Less(t, len(s.shortBranchStart), 2*ShortSteps, "what short.json keeps of the branches is bounded")
}

// short.json comes masked from the summary, each part as it is encoded:
// the head (title, error), every node's entry and every branch's.
func TestShortJSONMasked(t *testing.T) {
	t.Parallel()
	mask := runlog.NewRedactor([]string{"GH_TOKEN=ghp_secret1"}).JSON
	s := &Summary{FormatVersion: 1, Title: "deploy ghp_secret1", Status: StatusFailed, Error: "node b failed: ghp_secret1",
		Path: []string{"a", "b"}, mask: mask}
	s.add(&NodeResult{ID: "a", Text: "Use ghp_secret1", Visit: 1, Branch: "f/x", Status: StatusSucceeded})
	s.Branches = append(s.Branches, BranchResult{ID: "f/x", Fork: "f", Name: "x", Join: "j", Status: StatusFailed, Error: "ghp_secret1 leaked", Path: []string{"a"}})
	s.add(&NodeResult{ID: "b", Text: "Then ghp_secret1 again", Visit: 1, Status: StatusFailed})
	b := bytes.Join(s.shortJSON(), nil)
	assert.NotContains(t, string(b), "ghp_secret1")
	assert.Equal(t, 5, bytes.Count(b, []byte("***")), "%s", b)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(b, &doc), "%s", b)
}
