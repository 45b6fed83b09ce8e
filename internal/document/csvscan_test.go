package document

import (
	"encoding/csv"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type scanned struct {
	records [][]string
	lines   []int
	err     error // the first error, which ends the scan
}

func scanStd(data string) scanned {
	r := csv.NewReader(strings.NewReader(data))
	r.FieldsPerRecord = -1
	var out scanned
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			out.err = err
			return out
		}
		ln, _ := r.FieldPos(0)
		out.records = append(out.records, rec)
		out.lines = append(out.lines, ln)
	}
}

func scanOurs(data string) scanned {
	s := newCSVScanner(data)
	var out scanned
	for {
		rec, ln, err := s.next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			out.err = err
			return out
		}
		out.records = append(out.records, append([]string(nil), rec...))
		out.lines = append(out.lines, ln)
	}
}

// sameScan checks that the scanner and encoding/csv agree on the records,
// their start lines, and on where and why a bad file is refused.
func sameScan(t *testing.T, data string) {
	t.Helper()
	want, got := scanStd(data), scanOurs(data)
	require.Equal(t, want.records, got.records, "records of %q", data)
	require.Equal(t, want.lines, got.lines, "start lines of %q", data)
	if want.err == nil {
		require.NoError(t, got.err, "input %q", data)
		return
	}
	var we, ge *csv.ParseError
	require.ErrorAs(t, want.err, &we)
	require.ErrorAs(t, got.err, &ge, "input %q: encoding/csv says %v", data, want.err)
	assert.Equal(t, we.StartLine, ge.StartLine, "start line of the error in %q", data)
	assert.ErrorIs(t, ge.Err, we.Err, "input %q", data)
}

func TestCSVScannerMatchesEncodingCSV(t *testing.T) {
	t.Parallel()
	for _, data := range csvScanCases {
		sameScan(t, data)
	}
}

var csvScanCases = []string{
	"", "\n", "\r\n", "\r", "a", "a\n", "a\r\n", "a\r", "a\r\r\n", "a\rb\n",
	"a,b\nc,d", "a,b\n\n\nc,d\n", "a,,b,\n,\n", ",", "\n\na\n",
	`"a"`, `"a",b`, `"a""b",c`, `""`, `"",""`, "\"a\nb\",c\nd,e",
	"\"a\r\nb\",c\r\nd,e\r\n", "\"a\rb\"", "\"a\"\r", "\"a\"\r\n", "\"a\"\rb",
	`"a"b`, `a"b`, `"a`, "\"a\n", "a,\"b", `"a""`, `""""`, "x,\"\"\"\n\"\",y",
	"\ufeffId,Name\n1,Process", " \"a\"", "a,b\n\"unclosed\nmore\nlines",
	"1,\"multi\r\nline\r\ntext\",3\r\n4,5,6",
}

func FuzzCSVScanner(f *testing.F) {
	for _, c := range csvScanCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, data string) {
		sameScan(t, data)
	})
}
