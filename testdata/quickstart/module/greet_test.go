package greet

import "testing"

func TestHello(t *testing.T) {
	for _, tt := range []struct{ name, want string }{
		{"Ada", "Hello, Ada!"},
		{"  ", "Hello, world!"},
	} {
		if got := Hello(tt.name); got != tt.want {
			t.Errorf("Hello(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}
