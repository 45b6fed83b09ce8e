// Package pathglob matches a repository's paths against the globs of a
// step's paths custom data (readme/workspace.md#scope), written as in a
// .gitignore: a pattern without a slash matches a name at any depth, a
// leading slash anchors it to the workdir, a trailing slash matches only a
// directory, ** matches any number of directories, ! negates, and the last
// pattern that matches a file or a directory above it decides.
//
// It is a matcher of its own rather than git's pathspec ":(glob)" magic:
// a pathspec has no "any depth" for a name without a slash, no directory-only
// trailing slash and no ordered negation, so the patterns would need
// translating into git's terms, and the check runs on every changed path of
// an attempt as git lists them, streamed, where a Go function costs nothing
// and a git process per path would. Each segment is matched by path.Match
// (the same *, ? and [...] as fnmatch, [!...] read as [^...]).
package pathglob

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// Pattern is one glob of a list.
type Pattern struct {
	Raw     string // as written, trimmed
	negate  bool
	dirOnly bool
	// segs are the pattern's segments; an unanchored pattern starts with
	// "**". A trailing "**" is "*": a match of a directory covers what
	// is in it.
	segs []string
}

// Set is a list of patterns in order; the last that matches decides.
type Set struct {
	Patterns []Pattern
	positive bool // some pattern is not negated
}

// Split splits a paths value into its patterns: separated by commas or
// newlines, each trimmed, empty ones left out.
func Split(v string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' }) {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// MaxPatterns bounds a list: every changed path is matched against each
// pattern, so a list of a million would make each attempt's check take
// hours; a step's scope is a few directories and kinds of file.
const MaxPatterns = 1000

// Parse reads a paths value. The errors name each pattern that is not a
// glob or can never match a path; the Set holds the others.
func Parse(v string) (*Set, []error) {
	s := &Set{}
	var errs []error
	list := Split(v)
	if len(list) > MaxPatterns {
		return s, []error{fmt.Errorf("it lists %d patterns, more than the %d a step may have", len(list), MaxPatterns)}
	}
	for _, raw := range list {
		p, err := compile(raw)
		if err != nil {
			errs = append(errs, fmt.Errorf("%q %w", raw, err))
			continue
		}
		s.Patterns = append(s.Patterns, p)
		s.positive = s.positive || !p.negate
	}
	switch {
	case len(errs) == 0 && len(s.Patterns) == 0:
		errs = append(errs, errors.New("it lists no pattern, so the step could change no file"))
	case len(errs) == 0 && !s.positive:
		errs = append(errs, errors.New("every pattern is negated (!), so no file is in it"))
	}
	return s, errs
}

// compile reads one pattern.
func compile(raw string) (Pattern, error) {
	p := Pattern{Raw: raw}
	s := raw
	if strings.HasPrefix(s, "!") {
		p.negate, s = true, s[1:]
	} else if strings.HasPrefix(s, `\!`) || strings.HasPrefix(s, `\#`) {
		s = s[1:]
	}
	if strings.HasSuffix(s, "/") && !strings.HasSuffix(s, `\/`) {
		p.dirOnly, s = true, strings.TrimRight(s, "/")
	}
	anchored := strings.Contains(s, "/")
	s = strings.TrimPrefix(s, "/")
	if s == "" {
		return p, errors.New(`names no file: it is only "/" or "!"`)
	}
	for _, seg := range strings.Split(s, "/") {
		switch seg {
		case "":
			return p, errors.New("has an empty segment (//), which no path has")
		case ".", "..":
			return p, fmt.Errorf("has a %q segment: paths are matched as git lists them, relative to the workdir and without . or .., so it can never match", seg)
		}
		if strings.HasSuffix(seg, `\`) && !strings.HasSuffix(seg, `\\`) {
			return p, errors.New("ends a segment with a lone backslash")
		}
		if seg != "**" {
			seg = bang(seg)
			if _, err := path.Match(seg, ""); err != nil {
				return p, errors.New("is not a glob: a [ without its ] or a bad range")
			}
		}
		p.segs = append(p.segs, seg)
	}
	if n := len(p.segs); p.segs[n-1] == "**" && n > 1 {
		p.segs[n-1] = "*"
	}
	if !anchored {
		p.segs = append([]string{"**"}, p.segs...)
	}
	return p, nil
}

// bang reads fnmatch's [!...] as path.Match's [^...].
func bang(seg string) string {
	if !strings.Contains(seg, "[!") {
		return seg
	}
	var b strings.Builder
	for i := 0; i < len(seg); i++ {
		b.WriteByte(seg[i])
		if seg[i] == '\\' && i+1 < len(seg) {
			i++
			b.WriteByte(seg[i])
			continue
		}
		if seg[i] == '[' && i+1 < len(seg) && seg[i+1] == '!' {
			b.WriteByte('^')
			i++
		}
	}
	return b.String()
}

// Match reports whether the path (slash-separated, relative to where the
// patterns are anchored) is in the set: the last pattern that matches it,
// or a directory above it, is not negated.
func (s *Set) Match(p string) bool {
	segs := strings.Split(p, "/")
	in := false
	for i := range s.Patterns {
		pt := &s.Patterns[i]
		if in == !pt.negate {
			continue // it could not change the answer
		}
		if pt.match(segs) {
			in = !pt.negate
		}
	}
	return in
}

// match reports whether the pattern matches the path or one of the
// directories above it: a walk of the pattern's positions over the
// path's segments (each "**" staying or moving on), so time is the
// path's segments times the pattern's, whatever the path.
func (pt *Pattern) match(path []string) bool {
	n := len(pt.segs)
	cur := make([]bool, n+1)
	next := make([]bool, n+1)
	cur[0] = true
	closure(pt.segs, cur)
	for i, seg := range path {
		clear(next)
		any := false
		for j := 0; j < n; j++ {
			if !cur[j] {
				continue
			}
			switch {
			case pt.segs[j] == "**":
				next[j], any = true, true
			case segMatch(pt.segs[j], seg):
				next[j+1], any = true, true
			}
		}
		if !any {
			return false
		}
		closure(pt.segs, next)
		cur, next = next, cur
		// All of the pattern used after i+1 segments: those segments are
		// the path itself, or a directory above it.
		if cur[n] && (!pt.dirOnly || i+1 < len(path)) {
			return true
		}
	}
	return false
}

// closure lets each "**" match no segment.
func closure(segs []string, set []bool) {
	for j := 0; j < len(segs); j++ {
		if set[j] && segs[j] == "**" {
			set[j+1] = true
		}
	}
}

func segMatch(pattern, name string) bool {
	ok, _ := path.Match(pattern, name)
	return ok
}
