package response

import (
	"strings"
	"testing"
)

func TestRouteExit(t *testing.T) {
	tests := []struct {
		labels []string
		code   int
		want   string // "" for no branch
	}{
		{[]string{"Yes", "No"}, 0, "Yes"},
		{[]string{"Yes", "No"}, 1, "No"},
		{[]string{"Yes", "No"}, 127, "No"},
		{[]string{"Yes", "No"}, -1, "No"}, // killed
		{[]string{"pass", "2", "else"}, 2, "2"},
		{[]string{"pass", "2", "else"}, 3, "else"},
		{[]string{"0", "1"}, 0, "0"},
		{[]string{"0", "1"}, 1, "1"},
		{[]string{"0", "1"}, 2, ""},
		{[]string{"Passed.", "FAILED!"}, 5, "FAILED!"},
		{[]string{" OK ", "Error"}, 0, " OK "},
		{[]string{"Yes"}, 1, ""},
		{[]string{"maybe", "yes"}, 0, "yes"},
	}
	for _, tt := range tests {
		got, ok := RouteExit(tt.labels, tt.code)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("RouteExit(%q, %d) = %q, %t; want %q", tt.labels, tt.code, got, ok, tt.want)
		}
	}
}

func TestCheckExitLabels(t *testing.T) {
	tests := []struct {
		labels []string
		want   string // a part of the message; "" for none
	}{
		{[]string{"Yes", "No"}, ""},
		{[]string{"0", "1", "2"}, ""},
		{[]string{"success", "failure", "3"}, ""},
		{[]string{"Yes", "Maybe"}, `label "Maybe" is neither an exit status`},
		{[]string{"Yes", "OK", "No"}, `labels "Yes" and "OK" take the same exit statuses`},
		{[]string{"1", "1.", "Yes"}, `labels "1" and "1." take the same exit statuses`},
		{[]string{"No", "2"}, "no label takes exit status 0"},
		{[]string{"256", "Yes"}, `label "256" is neither`},
		{[]string{"Yes", strings.Repeat("x", 1<<20)}, `label "xxxxxxxx`},
	}
	for _, tt := range tests {
		got := CheckExitLabels(tt.labels)
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("CheckExitLabels(%.40q) = %q; want %q", tt.labels, got, tt.want)
		}
		if len(got) > 400 {
			t.Errorf("CheckExitLabels(%.40q): message of %d bytes; a label quoted in it is cut", tt.labels, len(got))
		}
	}
}
