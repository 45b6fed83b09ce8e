package testchart

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chart is a parsed CSV export, with cells looked up by header name.
type chart struct {
	header []string
	rows   [][]string
	col    map[string]int
}

func (c chart) cell(row int, name string) string { return c.rows[row][c.col[name]] }

// parseCSV reads data the way the importer must: strict RFC 4180, every
// row as wide as the header.
func parseCSV(t *testing.T, data []byte) chart {
	t.Helper()
	r := csv.NewReader(bytes.NewReader(data))
	records, err := r.ReadAll()
	require.NoError(t, err)
	require.NotEmpty(t, records)
	c := chart{header: records[0], rows: records[1:], col: map[string]int{}}
	for i, h := range c.header {
		c.col[h] = i
	}
	return c
}

// checkCommon checks what every generated CSV shares: bytes as Lucid writes
// them, the header, dense ids and the Document and Page rows.
func checkCommon(t *testing.T, data []byte, c chart, wantRows int) {
	t.Helper()
	assert.NotContains(t, string(data), "\r", "LF row ends only")
	assert.False(t, bytes.HasSuffix(data, []byte("\n")), "no newline after the last row")
	assert.Equal(t, Header, c.header)
	require.Len(t, c.rows, wantRows)
	for i := range c.rows { // a plain loop: testify is slow over 10⁵ rows under -race
		if got := c.cell(i, "Id"); got != strconv.Itoa(i+1) {
			t.Fatalf("row %d: Id %q, want %d: ids are 1..N in row order", i+1, got, i+1)
		}
	}
	assert.Equal(t, "Document", c.cell(0, "Name"))
	assert.Equal(t, "Draft", c.cell(0, "Status"))
	assert.NotEmpty(t, c.cell(0, "Text Area 1"))
	assert.Empty(t, c.cell(0, "Page ID"))
	assert.Empty(t, c.cell(0, "Shape Library"))
	assert.Equal(t, "Page", c.cell(1, "Name"))
	assert.Equal(t, "Page 1", c.cell(1, "Text Area 1"))
	assert.Empty(t, c.cell(1, "Page ID"))
}

func TestLinearCSV(t *testing.T) {
	t.Parallel()
	for _, n := range []int{2, 3, 7, 1000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			require.NoError(t, LinearCSV(&buf, n))
			c := parseCSV(t, buf.Bytes())
			checkCommon(t, buf.Bytes(), c, 2+n+n-1)

			for i := range n {
				row := 2 + i
				assert.Equal(t, "Flowchart Shapes", c.cell(row, "Shape Library"))
				assert.Equal(t, "2", c.cell(row, "Page ID"))
				switch i {
				case 0:
					assert.Equal(t, []string{"Terminator", "Start"}, []string{c.cell(row, "Name"), c.cell(row, "Text Area 1")})
				case n - 1:
					assert.Equal(t, []string{"Terminator", "End"}, []string{c.cell(row, "Name"), c.cell(row, "Text Area 1")})
				default:
					assert.Equal(t, "Process", c.cell(row, "Name"))
					assert.Equal(t, processText(i), c.cell(row, "Text Area 1"))
				}
			}
			for i := range n - 1 {
				row := 2 + n + i
				assert.Equal(t, "Line", c.cell(row, "Name"))
				assert.Equal(t, "2", c.cell(row, "Page ID"))
				assert.Empty(t, c.cell(row, "Shape Library"))
				assert.Equal(t, strconv.Itoa(3+i), c.cell(row, "Line Source"), "line %d source", i)
				assert.Equal(t, strconv.Itoa(4+i), c.cell(row, "Line Destination"), "line %d destination", i)
				assert.Equal(t, "None", c.cell(row, "Source Arrow"))
				assert.Equal(t, "Arrow", c.cell(row, "Destination Arrow"))
				assert.Empty(t, c.cell(row, "Text Area 1"))
			}
		})
	}
}

func TestLinearCSVSize(t *testing.T) {
	t.Parallel()
	const n = 100000
	var buf bytes.Buffer
	require.NoError(t, LinearCSV(&buf, n))
	size := buf.Len()
	assert.GreaterOrEqual(t, size, 15_500_000, "n=100000 should give about 16 MB")
	assert.LessOrEqual(t, size, 16_500_000, "n=100000 should give about 16 MB")

	c := parseCSV(t, buf.Bytes())
	checkCommon(t, buf.Bytes(), c, 2+n+n-1)
	var comma, quote, newline int
	for i := 2; i < 2+n; i++ {
		text := c.cell(i, "Text Area 1")
		comma += strings.Count(text, ",")
		quote += strings.Count(text, `"`)
		newline += strings.Count(text, "\n")
	}
	assert.Positive(t, comma, "some texts hold a comma")
	assert.Positive(t, quote, "some texts hold a double quote")
	assert.Positive(t, newline, "some texts hold a line break")
	assert.Equal(t, strconv.Itoa(2+n), c.cell(2+n+n-2, "Line Destination"), "last line ends at End")
}

func TestBinaryTreeCSV(t *testing.T) {
	t.Parallel()
	for _, depth := range []int{1, 2, 3, 8} {
		t.Run(strconv.Itoa(depth), func(t *testing.T) {
			t.Parallel()
			nodes := 1<<depth - 1
			inner := 1<<(depth-1) - 1
			var buf bytes.Buffer
			require.NoError(t, BinaryTreeCSV(&buf, depth))
			c := parseCSV(t, buf.Bytes())
			checkCommon(t, buf.Bytes(), c, 2+nodes+nodes-1)

			for k := 1; k <= nodes; k++ {
				row := 1 + k
				want := "Process"
				if k <= inner {
					want = "Decision"
				}
				assert.Equal(t, want, c.cell(row, "Name"), "shape %d", k)
				assert.Equal(t, "Flowchart Shapes", c.cell(row, "Shape Library"))
				assert.NotEmpty(t, c.cell(row, "Text Area 1"))
			}

			out := map[string][]string{} // source id -> labels, in row order
			in := map[string]int{}
			for row := 2 + nodes; row < len(c.rows); row++ {
				assert.Equal(t, "Line", c.cell(row, "Name"))
				assert.Equal(t, []string{"None", "Arrow"}, []string{c.cell(row, "Source Arrow"), c.cell(row, "Destination Arrow")})
				src, dst := c.cell(row, "Line Source"), c.cell(row, "Line Destination")
				out[src] = append(out[src], c.cell(row, "Text Area 1"))
				in[dst]++
			}
			for k := 1; k <= nodes; k++ {
				id := strconv.Itoa(2 + k)
				if k <= inner {
					assert.Equal(t, []string{"Yes", "No"}, out[id], "decision %s branches", id)
				} else {
					assert.Empty(t, out[id], "leaf %s has no lines out", id)
				}
				wantIn := 1
				if k == 1 {
					wantIn = 0
				}
				assert.Equal(t, wantIn, in[id], "lines into %s", id)
			}
		})
	}
}

func TestBinaryTreeCSVDepth17(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	require.NoError(t, BinaryTreeCSV(&buf, 17))
	c := parseCSV(t, buf.Bytes())
	checkCommon(t, buf.Bytes(), c, 2+131071+131070)
}

// contents is the part of a document-contents response that the tests read.
type contents struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Product string `json:"product"`
	Pages   []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
		Index int    `json:"index"`
		Items struct {
			Shapes []struct {
				ID         string            `json:"id"`
				Class      string            `json:"class"`
				TextAreas  []jsonTextArea    `json:"textAreas"`
				CustomData []json.RawMessage `json:"customData"`
				LinkedData []json.RawMessage `json:"linkedData"`
			} `json:"shapes"`
			Lines []struct {
				ID        string         `json:"id"`
				Endpoint1 jsonEndpoint   `json:"endpoint1"`
				Endpoint2 jsonEndpoint   `json:"endpoint2"`
				TextAreas []jsonTextArea `json:"textAreas"`
			} `json:"lines"`
			Groups []json.RawMessage `json:"groups"`
			Layers []json.RawMessage `json:"layers"`
		} `json:"items"`
	} `json:"pages"`
}

func TestLinearJSON(t *testing.T) {
	t.Parallel()
	for _, n := range []int{2, 3, 7, 1000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			require.NoError(t, LinearJSON(&buf, n))
			require.True(t, json.Valid(buf.Bytes()))
			var doc contents
			dec := json.NewDecoder(&buf)
			dec.DisallowUnknownFields()
			require.NoError(t, dec.Decode(&doc))

			assert.NotEmpty(t, doc.ID)
			assert.NotEmpty(t, doc.Title)
			assert.Equal(t, "lucidchart", doc.Product)
			require.Len(t, doc.Pages, 1)
			page := doc.Pages[0]
			assert.Equal(t, "0_0", page.ID)
			assert.Equal(t, "Page 1", page.Title)
			assert.Equal(t, 0, page.Index)
			require.Len(t, page.Items.Shapes, n)
			require.Len(t, page.Items.Lines, n-1)
			assert.NotNil(t, page.Items.Groups)
			assert.Empty(t, page.Items.Groups)
			assert.NotNil(t, page.Items.Layers)
			assert.Empty(t, page.Items.Layers)

			seen := map[string]bool{}
			for i, s := range page.Items.Shapes {
				require.Len(t, s.ID, 12)
				require.False(t, seen[s.ID], "duplicate id %q", s.ID)
				seen[s.ID] = true
				require.Len(t, s.TextAreas, 1)
				assert.Equal(t, "Text", s.TextAreas[0].Label)
				assert.NotNil(t, s.CustomData)
				assert.NotNil(t, s.LinkedData)
				switch i {
				case 0:
					assert.Equal(t, []string{"TerminatorBlock", "Start"}, []string{s.Class, s.TextAreas[0].Text})
				case n - 1:
					assert.Equal(t, []string{"TerminatorBlock", "End"}, []string{s.Class, s.TextAreas[0].Text})
				default:
					assert.Equal(t, "ProcessBlock", s.Class)
					assert.Equal(t, processText(i), s.TextAreas[0].Text, "same text as the CSV")
				}
			}
			for i, l := range page.Items.Lines {
				require.Len(t, l.ID, 12)
				require.False(t, seen[l.ID], "duplicate id %q", l.ID)
				seen[l.ID] = true
				assert.Equal(t, jsonEndpoint{Style: "None", ConnectedTo: page.Items.Shapes[i].ID}, l.Endpoint1)
				assert.Equal(t, jsonEndpoint{Style: "Arrow", ConnectedTo: page.Items.Shapes[i+1].ID}, l.Endpoint2)
				assert.NotNil(t, l.TextAreas)
				assert.Empty(t, l.TextAreas)
			}
		})
	}
}

func TestBadArguments(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		gen  func(io.Writer) error
	}{
		{"linear csv n=1", func(w io.Writer) error { return LinearCSV(w, 1) }},
		{"linear csv n=-1", func(w io.Writer) error { return LinearCSV(w, -1) }},
		{"tree depth 0", func(w io.Writer) error { return BinaryTreeCSV(w, 0) }},
		{"tree depth 25", func(w io.Writer) error { return BinaryTreeCSV(w, 25) }},
		{"linear json n=0", func(w io.Writer) error { return LinearJSON(w, 0) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			assert.Error(t, tt.gen(&buf))
			assert.Zero(t, buf.Len(), "nothing written")
		})
	}
}

var errDiskFull = errors.New("disk full")

// failWriter accepts limit bytes, then fails.
type failWriter struct{ limit int }

func (f *failWriter) Write(p []byte) (int, error) {
	if len(p) > f.limit {
		n := f.limit
		f.limit = 0
		return n, errDiskFull
	}
	f.limit -= len(p)
	return len(p), nil
}

func TestWriteErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		gen  func(io.Writer) error
	}{
		{"linear csv", func(w io.Writer) error { return LinearCSV(w, 10000) }},
		{"tree csv", func(w io.Writer) error { return BinaryTreeCSV(w, 12) }},
		{"linear json", func(w io.Writer) error { return LinearJSON(w, 10000) }},
	}
	for _, tt := range tests {
		for _, limit := range []int{0, 100, 200_000} {
			t.Run(tt.name+"/"+strconv.Itoa(limit), func(t *testing.T) {
				t.Parallel()
				assert.ErrorIs(t, tt.gen(&failWriter{limit: limit}), errDiskFull)
			})
		}
	}
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		gen  func(io.Writer) error
	}{
		{"linear csv", func(w io.Writer) error { return LinearCSV(w, 500) }},
		{"tree csv", func(w io.Writer) error { return BinaryTreeCSV(w, 6) }},
		{"linear json", func(w io.Writer) error { return LinearJSON(w, 500) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var a, b bytes.Buffer
			require.NoError(t, tt.gen(&a))
			require.NoError(t, tt.gen(&b))
			assert.Equal(t, a.Bytes(), b.Bytes())
		})
	}
}

// LinearMermaid: a stadium at each end, n-2 steps, each joined to the next,
// labels quoted with Mermaid's escapes.
func TestLinearMermaid(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, LinearMermaid(&buf, 5))
	text := buf.String()
	assert.True(t, strings.HasPrefix(text, "---\ntitle: Linear chain of 5 steps\n---\nflowchart TD\n    s0([Start])\n"))
	assert.Equal(t, 4, strings.Count(text, "-->"))
	assert.Contains(t, text, `s1 --> s2["Run #quot;go vet ./...#quot; on package 2 and fix each finding that it reports."]`)
	assert.Contains(t, text, "s3 --> s4([End])\n")
	assert.NotContains(t, text, "\n\n")
	assert.Error(t, LinearMermaid(&buf, 1))
}
