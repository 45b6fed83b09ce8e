package graph

import (
	"math"
	"strings"
)

// IDs maps item ids to indexes. Lucid CSV ids are small consecutive
// integers ("1".."200002"), so those are kept in a slice indexed by the
// number; draw.io's are a prefix and a counter ("WIyWlLk6GJQsqaUBKTNV-3":
// a prefix per editing session, so a few in a file), kept in a slice per
// prefix; any other id (Lucid API ids, hand-written names) goes in a map.
// On a 100,000-node chart this replaces a map lookup, and its cache miss,
// with a slice read.
type IDs struct {
	dense    []int32 // dense[n] is the value for id n, or absent
	prefixed []prefixed
	sparse   map[string]int
	sets     int
	hint     int // the size NewIDs was given
}

// prefixed holds the ids that are prefix followed by a number.
type prefixed struct {
	prefix string
	dense  []int32
}

// maxPrefixes bounds the prefixes that get a slice: a few per file in
// draw.io's; ids of other kinds that end in digits (random Lucid API ids)
// take the first few and the map holds the rest.
const maxPrefixes = 8

const (
	absent   = math.MinInt32
	maxDense = 1 << 22
)

// NewIDs returns an empty index sized for about n ids.
func NewIDs(n int) *IDs {
	return &IDs{dense: make([]int32, 0, min(n, maxDense)), hint: n}
}

// denseKey returns the number an id spells when it is a canonical decimal
// (no sign, no leading zero) small enough for the slice.
func denseKey(id string) (int, bool) {
	if len(id) == 0 || len(id) > 7 || (id[0] == '0' && len(id) > 1) {
		return 0, false
	}
	n := 0
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n < maxDense
}

// splitKey splits an id that is not a number but ends in a canonical
// decimal (no leading zero) small enough for a slice into what comes
// before the number and the number: "v12" is "v" and 12.
func splitKey(id string) (string, int, bool) {
	j := len(id)
	for j > 0 && id[j-1] >= '0' && id[j-1] <= '9' {
		j--
	}
	digits := len(id) - j
	if j == 0 || digits == 0 || digits > 7 || (id[j] == '0' && digits > 1) {
		return "", 0, false
	}
	n := 0
	for i := j; i < len(id); i++ {
		n = n*10 + int(id[i]-'0')
	}
	return id[:j], n, n < maxDense
}

// prefixedSlice is the slice of the ids with id's prefix, and id's number.
func (x *IDs) prefixedSlice(id string) ([]int32, int, bool) {
	prefix, n, ok := splitKey(id)
	if !ok {
		return nil, 0, false
	}
	for i := range x.prefixed {
		if x.prefixed[i].prefix == prefix {
			return x.prefixed[i].dense, n, true
		}
	}
	return nil, 0, false
}

// Get returns the value stored for id.
func (x *IDs) Get(id string) (int, bool) {
	if n, ok := denseKey(id); ok {
		if n < len(x.dense) && x.dense[n] != absent {
			return int(x.dense[n]), true
		}
	} else if len(x.prefixed) > 0 {
		if d, n, ok := x.prefixedSlice(id); ok && n < len(d) && d[n] != absent {
			return int(d[n]), true
		}
	}
	if len(x.sparse) == 0 {
		return 0, false
	}
	v, ok := x.sparse[id]
	return v, ok
}

// Set stores v (which must fit in an int32) for id, replacing any value.
func (x *IDs) Set(id string, v int) {
	x.sets++
	var d *[]int32 // the slice for id, and its number
	n, ok := denseKey(id)
	if ok {
		d = &x.dense
	} else if prefix, m, pok := splitKey(id); pok {
		n, ok = m, true
		d = x.slot(prefix)
	}
	// A slice grows only while its ids stay about as dense as Lucid's, so
	// a lone id of 3000000 does not allocate 12 MB.
	if d != nil && n <= 4*x.sets+1024 && v > absent && v <= math.MaxInt32 {
		for len(*d) <= n {
			*d = append(*d, absent)
		}
		(*d)[n] = int32(v)
		if len(x.sparse) > 0 {
			delete(x.sparse, id)
		}
		return
	}
	if d != nil && n < len(*d) {
		(*d)[n] = absent // a value stored before is replaced, not shadowing
	}
	if x.sparse == nil {
		// When the first ids are not numbers, the ids are of another kind
		// (Lucid API ids): size the map, not the slice, for them, rather
		// than growing it 17 times on the way to 100,000.
		size := 0
		if len(x.dense) == 0 && x.sets <= maxPrefixes+1 {
			size, x.dense = x.hint, nil
		}
		x.sparse = make(map[string]int, size)
	}
	x.sparse[id] = v
}

// slot is the slice for the ids with this prefix, made if there is room
// for another; nil when there is not.
func (x *IDs) slot(prefix string) *[]int32 {
	for i := range x.prefixed {
		if x.prefixed[i].prefix == prefix {
			return &x.prefixed[i].dense
		}
	}
	if len(x.prefixed) == maxPrefixes {
		return nil
	}
	x.prefixed = append(x.prefixed, prefixed{prefix: strings.Clone(prefix)})
	return &x.prefixed[len(x.prefixed)-1].dense
}
