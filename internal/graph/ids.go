package graph

import "math"

// IDs maps item ids to indexes. Lucid CSV ids are small consecutive
// integers ("1".."200002"), so those are kept in a slice indexed by the
// number; any other id (Lucid API ids, hand-written names) goes in a map.
// On a 100,000-node export this replaces a map lookup, and its cache miss,
// with a slice read.
type IDs struct {
	dense  []int32 // dense[n] is the value for id n, or absent
	sparse map[string]int
	sets   int
	hint   int // the size NewIDs was given
}

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

// Get returns the value stored for id.
func (x *IDs) Get(id string) (int, bool) {
	if n, ok := denseKey(id); ok && n < len(x.dense) && x.dense[n] != absent {
		return int(x.dense[n]), true
	}
	v, ok := x.sparse[id]
	return v, ok
}

// Set stores v (which must fit in an int32) for id, replacing any value.
func (x *IDs) Set(id string, v int) {
	x.sets++
	// The slice grows only while ids stay about as dense as Lucid's, so a
	// lone id of 3000000 does not allocate 12 MB.
	if n, ok := denseKey(id); ok && n <= 4*x.sets+1024 && v > absent && v <= math.MaxInt32 {
		for len(x.dense) <= n {
			x.dense = append(x.dense, absent)
		}
		x.dense[n] = int32(v)
		delete(x.sparse, id)
		return
	}
	if n, ok := denseKey(id); ok && n < len(x.dense) {
		x.dense[n] = absent // a value stored before is replaced, not shadowing
	}
	if x.sparse == nil {
		// When the first id is not a number, the ids are of another kind
		// (Lucid API ids): size the map, not the slice, for them, rather
		// than growing it 17 times on the way to 100,000.
		size := 0
		if x.sets == 1 {
			size, x.dense = x.hint, nil
		}
		x.sparse = make(map[string]int, size)
	}
	x.sparse[id] = v
}
