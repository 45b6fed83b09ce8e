package response_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dtree-dev/dtree/internal/response"
)

// referenceMax bounds the inputs FuzzFindObjects checks against the cubic
// slowFind.
const referenceMax = 256

func FuzzFindObjects(f *testing.F) {
	for _, tc := range findCases {
		f.Add(tc.in)
	}
	for _, tc := range ansiCases {
		f.Add(tc.in)
	}
	for _, tc := range processCases {
		f.Add(tc.in)
	}
	for _, tc := range decisionCases {
		f.Add(tc.in)
	}
	for _, tc := range validationCases {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		stripped := response.StripANSI(in)
		if strings.IndexByte(stripped, 0x1b) >= 0 {
			t.Fatalf("StripANSI left an ESC in %q", stripped)
		}
		if strings.IndexByte(in, 0x1b) < 0 && stripped != in {
			t.Fatalf("StripANSI changed %q, which has no ESC, to %q", in, stripped)
		}
		got := response.FindObjects(in)
		rest := stripped
		for _, obj := range got {
			if !json.Valid([]byte(obj)) || obj[0] != '{' {
				t.Fatalf("not a JSON object: %q", obj)
			}
			i := strings.Index(rest, obj)
			if i < 0 {
				t.Fatalf("%q is not in order in %q", obj, stripped)
			}
			rest = rest[i+len(obj):]
		}
		if len(stripped) > referenceMax {
			if _, n := response.Scan(in); n > 2 {
				t.Fatalf("%d parsers at once", n)
			}
			return
		}
		if want := slowFind(stripped); !slices.Equal(got, want) {
			t.Fatalf("FindObjects(%q)\n got %q\nwant %q", in, got, want)
		}
		checkScan(t, in)
	})
}

func FuzzParseDecision(f *testing.F) {
	for _, tc := range decisionCases {
		f.Add(tc.in, "Yes")
	}
	for _, tc := range findCases {
		f.Add(tc.in, "No")
	}
	for _, tc := range labelCases {
		f.Add(`{"answer": `+quote(tc.answer)+`}`, strings.Join(tc.labels, "\n"))
	}
	f.Fuzz(func(t *testing.T, in, labelLines string) {
		d, err := response.ParseDecision(in)
		if d.Choices == nil || d.Reasons == nil {
			t.Fatalf("nil slice in %#v", d)
		}
		if err != nil {
			var e *response.Error
			if !errors.As(err, &e) {
				t.Fatalf("%T is not a *response.Error", err)
			}
			switch e.Kind {
			case response.KindEmpty, response.KindNoJSON, response.KindMissingKey, response.KindBadValue:
			default:
				t.Fatalf("unknown kind %q", e.Kind)
			}
			if e.Reason == "" || !utf8.ValidString(e.Excerpt) || utf8.RuneCountInString(e.Excerpt) > 160 || strings.ContainsAny(e.Excerpt, "\n\r") {
				t.Fatalf("bad error %#v", e)
			}
		}
		labels := strings.Split(labelLines, "\n")
		if label, ok := response.MatchLabel(d.Answer, labels); ok && !slices.Contains(labels, label) || !ok && label != "" {
			t.Fatalf("MatchLabel(%q, %q) = %q, %v", d.Answer, labels, label, ok)
		}
	})
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
