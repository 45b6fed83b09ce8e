package response_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dtree-dev/dtree/internal/response"
	"github.com/dtree-dev/dtree/types"
)

// failure is the *response.Error a case expects; Kind "" means none.
type failure struct {
	kind    response.Kind
	reason  string
	excerpt string
}

var processCases = []struct {
	name string
	in   string
	want types.ProcessResponse
	err  failure
}{
	{
		name: "plain",
		in:   `{"completed": true, "secs_taken": 12.5, "tokens_used": 300, "comments": ["did it"]}`,
		want: types.ProcessResponse{Completed: true, SecsTaken: 12.5, TokensUsed: 300, Comments: []string{"did it"}},
	},
	{
		name: "strings for everything",
		in:   `{"completed": "true", "secs_taken": "12", "tokens_used": "1,234", "comments": "one string"}`,
		want: types.ProcessResponse{Completed: true, SecsTaken: 12, TokensUsed: 1234, Comments: []string{"one string"}},
	},
	{
		name: "units and rounding",
		in:   `{"completed": "Yes", "secs_taken": "90 seconds", "tokens_used": 12.6}`,
		want: types.ProcessResponse{Completed: true, SecsTaken: 90, TokensUsed: 13, Comments: []string{}},
	},
	{
		name: "exponent as a string",
		in:   `{"completed": 1, "tokens_used": "1e3"}`,
		want: types.ProcessResponse{Completed: true, TokensUsed: 1000, Comments: []string{}},
	},
	{
		name: "nulls are zero and slices are empty",
		in:   `{"completed": null, "secs_taken": null, "tokens_used": null, "comments": null}`,
		want: types.ProcessResponse{Comments: []string{}},
	},
	{
		name: "missing comments",
		in:   `{"completed": false}`,
		want: types.ProcessResponse{Comments: []string{}},
	},
	{
		name: "blank string comment",
		in:   `{"completed": true, "comments": "  "}`,
		want: types.ProcessResponse{Completed: true, Comments: []string{}},
	},
	{
		name: "comments that are not strings",
		in:   `{"completed": true, "comments": ["a", 1, null, {"b": 2}, "  ", true, [1, 2]]}`,
		want: types.ProcessResponse{Completed: true, Comments: []string{"a", "1", `{"b":2}`, "true", "[1,2]"}},
	},
	{
		name: "an unreadable optional value is dropped",
		in:   `{"completed": true, "secs_taken": "about a minute", "tokens_used": "lots", "comments": ["x"]}`,
		want: types.ProcessResponse{Completed: true, Comments: []string{"x"}},
	},
	{
		name: "out of range numbers are dropped",
		in:   `{"completed": true, "secs_taken": 1e400, "tokens_used": 1e30}`,
		want: types.ProcessResponse{Completed: true, Comments: []string{}},
	},
	{
		name: "key spellings",
		in:   `{"Completed": true, "secsTaken": 3, "tokens-used": 4, "COMMENTS": ["c"]}`,
		want: types.ProcessResponse{Completed: true, SecsTaken: 3, TokensUsed: 4, Comments: []string{"c"}},
	},
	{
		name: "the exact key wins over a near one",
		in:   `{"completed": false, "Completed": true}`,
		want: types.ProcessResponse{Comments: []string{}},
	},
	{
		name: "the later duplicate wins",
		in:   `{"completed": false, "completed": true}`,
		want: types.ProcessResponse{Completed: true, Comments: []string{}},
	},
	{
		name: "echoed example then the answer",
		in: "I'll answer in this form:\n{\"completed\": true, \"secs_taken\": 0, \"tokens_used\": 0, \"comments\": [\"what you did\"]}\n" +
			"Done, but the build failed.\n```json\n{\"completed\": false, \"comments\": [\"build failed\"]}\n```\n",
		want: types.ProcessResponse{Comments: []string{"build failed"}},
	},
	{
		name: "a later object without the key does not hide the answer",
		in:   `{"completed": true, "comments": ["ok"]} and also {"note": "x"}`,
		want: types.ProcessResponse{Completed: true, Comments: []string{"ok"}},
	},
	{
		name: "without the key there is no answer, not a false one",
		in:   `{"comments": ["first"]} {"x": 1} {"comments": ["second"]} {"y": 2}`,
		want: types.ProcessResponse{Comments: []string{}},
		err:  failure{response.KindMissingKey, `no JSON object with "completed" in the reply`, `{"y": 2}`},
	},
	{
		name: "terminal colours",
		in:   "\x1b[?1004l\x1b]0;agent\x07\x1b[1m{\"completed\": \x1b[32mtrue\x1b[0m}\x1b[0m\n",
		want: types.ProcessResponse{Completed: true, Comments: []string{}},
	},
	{
		name: "empty",
		in:   " \n\t",
		want: types.ProcessResponse{Comments: []string{}},
		err:  failure{response.KindEmpty, "the reply is empty", ""},
	},
	{
		name: "only escape sequences",
		in:   "\x1b[?1004l\x1b[0m",
		want: types.ProcessResponse{Comments: []string{}},
		err:  failure{response.KindEmpty, "the reply is empty", ""},
	},
	{
		name: "no json",
		in:   "I did it.\n\n",
		want: types.ProcessResponse{Comments: []string{}},
		err:  failure{response.KindNoJSON, `no JSON object in the reply; expected one with "completed"`, "I did it."},
	},
	{
		name: "broken json",
		in:   `{"completed": true, "comments": ["unterminated]}`,
		want: types.ProcessResponse{Comments: []string{}},
		err:  failure{response.KindNoJSON, `no JSON object in the reply; expected one with "completed"`, `{"completed": true, "comments": ["unterminated]}`},
	},
	{
		name: "no known key",
		in:   "Result:\n{\"status\":   \"done\"}\n",
		want: types.ProcessResponse{Comments: []string{}},
		err:  failure{response.KindMissingKey, `no JSON object with "completed" in the reply`, `{"status": "done"}`},
	},
	{
		name: "bad value",
		in:   `{"completed": "done", "comments": ["x"]}`,
		want: types.ProcessResponse{Comments: []string{}},
		err:  failure{response.KindBadValue, `"completed" is "done", not true or false`, `{"completed": "done", "comments": ["x"]}`},
	},
	{
		name: "bad value in the last object hides an earlier answer",
		in:   `{"completed": true} then {"completed": 2}`,
		want: types.ProcessResponse{Comments: []string{}},
		err:  failure{response.KindBadValue, `"completed" is 2, not true or false`, `{"completed": 2}`},
	},
}

func TestParseProcess(t *testing.T) {
	t.Parallel()
	for _, tc := range processCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := response.ParseProcess(tc.in)
			checkError(t, tc.err, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

var decisionCases = []struct {
	name string
	in   string
	want types.DecisionResponse
	err  failure
}{
	{
		name: "plain",
		in:   `{"choices": ["Yes", "No"], "answer": "Yes", "reasons": ["tests pass"]}`,
		want: types.DecisionResponse{Choices: []string{"Yes", "No"}, Answer: "Yes", Reasons: []string{"tests pass"}},
	},
	{
		name: "prose and fence",
		in:   "Looking at the output, the tests pass.\n\n```json\n{\n  \"choices\": [\"Yes\", \"No\"],\n  \"answer\": \"Yes\",\n  \"reasons\": [\"all 42 tests pass\", \"no \\\"flaky\\\" ones }\"]\n}\n```\nLet me know if you need more.",
		want: types.DecisionResponse{Choices: []string{"Yes", "No"}, Answer: "Yes", Reasons: []string{"all 42 tests pass", `no "flaky" ones }`}},
	},
	{
		name: "answer in a list",
		in:   `{"answer": ["No"], "reasons": "one reason", "choices": "Yes"}`,
		want: types.DecisionResponse{Choices: []string{"Yes"}, Answer: "No", Reasons: []string{"one reason"}},
	},
	{
		name: "number answer",
		in:   `{"answer": 42}`,
		want: types.DecisionResponse{Choices: []string{}, Answer: "42", Reasons: []string{}},
	},
	{
		name: "null answer is present and empty",
		in:   `{"answer": "Yes"} {"answer": null}`,
		want: types.DecisionResponse{Choices: []string{}, Reasons: []string{}},
	},
	{
		name: "stray brace and quote before",
		in:   `I'd use {"x and then: {"answer": "No"}`,
		want: types.DecisionResponse{Choices: []string{}, Answer: "No", Reasons: []string{}},
	},
	{
		name: "echoed example then the answer",
		in:   `{"choices": ["Yes", "No"], "answer": "<one of the answers above>", "reasons": ["why"]}` + "\n\n" + `{"choices": ["Yes", "No"], "answer": "No", "reasons": ["missing file"]}`,
		want: types.DecisionResponse{Choices: []string{"Yes", "No"}, Answer: "No", Reasons: []string{"missing file"}},
	},
	{
		name: "no answer key is no answer",
		in:   `{"choices": ["Yes", "No"], "choice": "Yes", "reasons": ["r"]}`,
		want: types.DecisionResponse{Choices: []string{}, Reasons: []string{}},
		err:  failure{response.KindMissingKey, `no JSON object with "answer" in the reply`, `{"choices": ["Yes", "No"], "choice": "Yes", "reasons": ["r"]}`},
	},
	{
		name: "no known key",
		in:   `{"choice": "Yes"}`,
		want: types.DecisionResponse{Choices: []string{}, Reasons: []string{}},
		err:  failure{response.KindMissingKey, `no JSON object with "answer" in the reply`, `{"choice": "Yes"}`},
	},
	{
		name: "object answer",
		in:   `{"answer": {"label": "Yes"}}`,
		want: types.DecisionResponse{Choices: []string{}, Reasons: []string{}},
		err:  failure{response.KindBadValue, `"answer" is {"label": "Yes"}, not a string`, `{"answer": {"label": "Yes"}}`},
	},
	{
		name: "list of two answers",
		in:   `{"answer": ["Yes", "No"]}`,
		want: types.DecisionResponse{Choices: []string{}, Reasons: []string{}},
		err:  failure{response.KindBadValue, `"answer" is ["Yes", "No"], not a string`, `{"answer": ["Yes", "No"]}`},
	},
	{
		name: "no json",
		in:   "Yes",
		want: types.DecisionResponse{Choices: []string{}, Reasons: []string{}},
		err:  failure{response.KindNoJSON, `no JSON object in the reply; expected one with "answer"`, "Yes"},
	},
}

func TestParseDecision(t *testing.T) {
	t.Parallel()
	for _, tc := range decisionCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := response.ParseDecision(tc.in)
			checkError(t, tc.err, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

var validationCases = []struct {
	name string
	in   string
	want types.ValidationResponse
	err  failure
}{
	{
		name: "pass",
		in:   `{"fully_completed": true, "partially_completed": false, "should_retry": false, "warnings": []}`,
		want: types.ValidationResponse{FullyCompleted: true, Warnings: []string{}},
	},
	{
		name: "fail with null warnings",
		in:   `{"fully_completed": false, "partially_completed": true, "should_retry": true, "warnings": null}`,
		want: types.ValidationResponse{PartiallyCompleted: true, ShouldRetry: true, Warnings: []string{}},
	},
	{
		name: "strings for bools and one warning",
		in:   `{"fully_completed": "false", "partially_completed": "TRUE", "should_retry": "y", "warnings": "missing tests"}`,
		want: types.ValidationResponse{PartiallyCompleted: true, ShouldRetry: true, Warnings: []string{"missing tests"}},
	},
	{
		name: "camel case keys",
		in:   `{"fullyCompleted": true, "shouldRetry": "no"}`,
		want: types.ValidationResponse{FullyCompleted: true, Warnings: []string{}},
	},
	{
		name: "an unreadable optional bool is dropped",
		in:   `{"fully_completed": true, "should_retry": "perhaps"}`,
		want: types.ValidationResponse{FullyCompleted: true, Warnings: []string{}},
	},
	{
		name: "without the key",
		in:   `{"warnings": ["no tests"], "should_retry": true}`,
		want: types.ValidationResponse{Warnings: []string{}},
		err:  failure{response.KindMissingKey, `no JSON object with "fully_completed" in the reply`, `{"warnings": ["no tests"], "should_retry": true}`},
	},
	{
		name: "bad value",
		in:   `{"fully_completed": "mostly"}`,
		want: types.ValidationResponse{Warnings: []string{}},
		err:  failure{response.KindBadValue, `"fully_completed" is "mostly", not true or false`, `{"fully_completed": "mostly"}`},
	},
}

func TestParseValidation(t *testing.T) {
	t.Parallel()
	for _, tc := range validationCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := response.ParseValidation(tc.in)
			checkError(t, tc.err, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func checkError(t *testing.T, want failure, err error) {
	t.Helper()
	if want.kind == "" {
		assert.NoError(t, err)
		return
	}
	var e *response.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, want.kind, e.Kind)
	assert.Equal(t, want.reason, e.Reason)
	assert.Equal(t, want.excerpt, e.Excerpt)
}

func TestErrorMessage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  *response.Error
		want string
	}{
		{"no excerpt", &response.Error{Kind: response.KindEmpty, Reason: "the reply is empty"}, "the reply is empty"},
		{"excerpt", &response.Error{Kind: response.KindMissingKey, Reason: `no JSON object with "answer" in the reply`, Excerpt: `{"x": 1}`},
			`no JSON object with "answer" in the reply (reply: "{\"x\": 1}")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.EqualError(t, tc.err, tc.want)
		})
	}
}

// TestExcerpt checks that excerpts are short, on one line and valid UTF-8,
// from the end of a reply with no JSON and from the start of an object.
func TestExcerpt(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("wörd\n\n  ", 200)
	for _, tc := range []struct {
		name   string
		in     string
		prefix string
		suffix string
	}{
		{"end of a long reply", long + "the end", "…", "wörd the end"},
		{"start of a long object", `{"x": "` + strings.Repeat("wörd \\n  ", 200) + `"}`, `{"x": "wörd \n wörd`, "…"},
		{"cut inside a rune", strings.Repeat("é", 300) + "\xe9", "…", "é\uFFFD"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := response.ParseDecision(tc.in)
			var e *response.Error
			require.ErrorAs(t, err, &e)
			assert.LessOrEqual(t, utf8.RuneCountInString(e.Excerpt), 160)
			assert.True(t, utf8.ValidString(e.Excerpt))
			assert.NotContains(t, e.Excerpt, "\n")
			assert.True(t, strings.HasPrefix(e.Excerpt, tc.prefix), e.Excerpt)
			assert.True(t, strings.HasSuffix(e.Excerpt, tc.suffix), e.Excerpt)
		})
	}
}

func TestParseErrorsAreErrors(t *testing.T) {
	t.Parallel()
	_, err := response.ParseValidation("nothing")
	var e *response.Error
	assert.True(t, errors.As(err, &e))
}
