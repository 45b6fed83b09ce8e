package document

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dtree-dev/dtree/internal/testchart"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jsonDecodeSeeds are inputs on the edges of what decodeJSONDoc takes
// itself and what it leaves to json.Unmarshal.
var jsonDecodeSeeds = []string{
	`{"pages":[]}`,
	`{"pages":null}`,
	`{}`,
	`null`,
	`[]`,
	` {"title": 12.5e-3, "pages": [null, {"id": 7, "index": -0, "items": null}]} `,
	`{"TITLE":"t","Pages":[{"ID":"p","Index":1e400}]}`,
	`{"pages":[{"items":{"shapes":[{"id":"a","class":"ProcessBlock","textAreas":[{"label":"Text","text":"x\ny"}],"customData":[{"key":"k","value":true}],"linkedData":[{"key":"SpreadsheetRowParentKey","value":"Primary_1","data":[{"name":"n","value":null}]}],"contains":{"shapes":["b",1,null]}}],"lines":[{"id":"l","endpoint1":{"style":"None","connectedTo":null},"endpoint2":null,"textAreas":[]}],"groups":[{"id":"g","members":["a"]}],"layers":[{"id":"x"}]}}]}`,
	`{"pages":[{"id":"a","id":"b"}]}`,
	`{"pages":[{"ID":"a","id":"b"}]}`,
	`{"pages":[],"pages":[]}`,
	`{"p\u0061ges":[]}`,
	`{"paſes":[], "pages": []}`,
	`{"title":"caf\u00e9 \ud83d\ude00 \ud800","pages":[]}`,
	"{\"title\":\"bad \xff utf8\",\"pages\":[]}",
	"{\"title\":\"ok \xc3\xa9 \\t\",\"pages\":[]}",
	`{"title":"a\qb","pages":[]}`,
	`{"pages":[{"index":"1"}]}`,
	`{"pages":[{"items":{"shapes":[{"textAreas":{}}]}}]}`,
	`{"pages":[{"items":{"shapes":[{"id":{}}]}}]}`,
	`{"pages":[{"items":{"shapes":[{"contains":[]}]}}]}`,
	`{"pages":[]} x`,
	`{"pages":[],}`,
	`{"pages":[1,]}`,
	`{"x":[[[[[[{"y":[01]}]]]]]],"pages":[]}`,
	`{"x":-,"pages":[]}`,
	`{"x":1.,"pages":[]}`,
	`{"x":tru,"pages":[]}`,
	`{"x":"` + "\x01" + `","pages":[]}`,
	`{"x":` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `,"pages":[]}`,
}

// FuzzJSONDecode holds decodeJSONDoc to json.Unmarshal: whatever it decodes
// itself, json.Unmarshal decodes without error to the same document.
func FuzzJSONDecode(f *testing.F) {
	for _, s := range jsonDecodeSeeds {
		f.Add([]byte(s))
	}
	err := filepath.WalkDir(filepath.Join("..", "..", "testdata", "charts"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		data, err := os.ReadFile(p)
		if err == nil {
			f.Add(data)
		}
		return err
	})
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast jsonDoc
		if !decodeJSONDoc(string(data), &fast, nil) {
			return
		}
		var slow jsonDoc
		require.NoError(t, json.Unmarshal(data, &slow), "decoded fast, but json.Unmarshal fails")
		assert.Equal(t, slow, fast)
		var ahead jsonDoc // the first page's lines on another goroutine
		require.True(t, decodeJSON(string(data), &ahead, nil, true), "decoded, but not with the lines ahead")
		assert.Equal(t, slow, ahead)
	})
}

func TestDecodeJSONLinesAhead(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	require.NoError(t, testchart.LinearJSON(&buf, 3000))
	data := buf.String()
	var plain, ahead jsonDoc
	require.True(t, decodeJSON(data, &plain, nil, false))
	a := decodeLinesAhead(data)
	<-a.done
	require.True(t, a.ok, "the lines were found and decoded ahead")
	require.True(t, decodeJSON(data, &ahead, nil, true))
	assert.Equal(t, plain, ahead)
	assert.Len(t, (*ahead.Pages)[0].Items.Lines, 2999)
}

func TestFindLines(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int{
		`{"pages":[{"items":{"lines":[]}}]}`:                          28,
		`{"pages":[{"items":{"shapes":[{"lines":[]}],"lines":[1]}}]}`: 52,
		`{"pages":[{"x":"\"lines\":[","items":{"lines" : [ ]}}]}`:     48,
		`{"lines":[],"pages":[{"lines":[]}]}`:                         -1,
		`{"pages":[{"items":{"Lines":[]}}]}`:                          -1,
		`[`:                                                           -1,
	} {
		assert.Equal(t, want, findLines(s), "%s", s)
	}
}

func TestDecodeJSONDocLeavesOddInputToUnmarshal(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		`null`, `[]`, `{"pages":[]} x`, `{"pages":[],}`,
		`{"pages":[{"id":"a","id":"b"}]}`, // a field twice: json.Unmarshal merges
		`{"p\u0061ges":[]}`,               // an escaped key
		`{"paſes":[]}`,                    // a key that folds to "pages"
		`{"pages":[{"index":"1"}]}`,       // a type error
		`{"pages":[{"index":1e400}]}`,     // out of range
	} {
		var doc jsonDoc
		assert.False(t, decodeJSONDoc(s, &doc, nil), "%s", s)
	}
	for _, s := range []string{
		`{"pages":[]}`, `{"PAGES":null}`, `{"title":"a\"b\/c\u00e9","pages":[]}`,
		`{"x":{"y":[1,-2.5e+3,true,false,null,"s\n"]},"pages":[{"index":0}]}`,
	} {
		var doc jsonDoc
		assert.True(t, decodeJSONDoc(s, &doc, nil), "%s", s)
	}
}

func TestCountElems(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int{
		`[]`: 0, `[ ]`: 0, `[{}]`: 1, `[1]`: 1, `["a"]`: 1, `[null, 2]`: 2,
		`[{"a":[1,2,3]},{"b":"x,y]"}]`: 2,
		`["a\\",",",{"c":"\"]"}] , 7`:  3,
		`[[1,2],[3]]`:                  2,
	} {
		assert.Equal(t, want, countElems(s), "%s", s)
	}
}
