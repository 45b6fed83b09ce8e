package graph

import (
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type set struct {
	id string
	v  int
}

type get struct {
	id     string
	want   int
	wantOK bool
}

func TestIDsGetSet(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		sets []set
		gets []get
	}{
		{name: "empty", gets: []get{{id: "1"}, {id: "0"}, {id: ""}, {id: "a"}}},
		{name: "dense ids", sets: []set{{"1", 10}, {"2", 20}, {"3", 30}},
			gets: []get{{"1", 10, true}, {"2", 20, true}, {"3", 30, true}, {id: "4"}, {id: "0"}}},
		{name: "zero id and zero value", sets: []set{{"0", 0}}, gets: []get{{"0", 0, true}, {id: "1"}}},
		{name: "gap in dense ids is absent", sets: []set{{"1", 1}, {"5", 5}},
			gets: []get{{"1", 1, true}, {id: "2"}, {id: "3"}, {id: "4"}, {"5", 5, true}}},
		{name: "negative values", sets: []set{{"1", -1}, {"x", -7}}, gets: []get{{"1", -1, true}, {"x", -7, true}}},
		{name: "leading zero is another id", sets: []set{{"7", 1}, {"007", 2}},
			gets: []get{{"7", 1, true}, {"007", 2, true}, {id: "07"}}},
		{name: "leading zero alone", sets: []set{{"007", 2}}, gets: []get{{"007", 2, true}, {id: "7"}}},
		{name: "sign is another id", sets: []set{{"-1", 3}, {"1", 4}}, gets: []get{{"-1", 3, true}, {"1", 4, true}, {id: "+1"}}},
		{name: "eight digits", sets: []set{{"12345678", 5}}, gets: []get{{"12345678", 5, true}, {id: "1234567"}}},
		{name: "empty id", sets: []set{{"", 6}}, gets: []get{{"", 6, true}, {id: "0"}}},
		{name: "letters and digits", sets: []set{{"a1", 7}, {"1a", 8}, {"1", 9}},
			gets: []get{{"a1", 7, true}, {"1a", 8, true}, {"1", 9, true}, {id: "a"}}},
		{name: "spaces are part of the id", sets: []set{{" 1", 1}, {"1", 2}}, gets: []get{{" 1", 1, true}, {"1", 2, true}}},
		{name: "Lucid API ids", sets: []set{{"bStart0001a", 0}, {"dUpload0001a", 1}},
			gets: []get{{"bStart0001a", 0, true}, {"dUpload0001a", 1, true}, {id: "bstart0001a"}}},
		{name: "overwrite dense", sets: []set{{"3", 1}, {"3", 2}}, gets: []get{{"3", 2, true}}},
		{name: "overwrite sparse", sets: []set{{"x", 1}, {"x", 2}}, gets: []get{{"x", 2, true}}},
		{name: "overwrite dense with a negative", sets: []set{{"3", 1}, {"3", -5}}, gets: []get{{"3", -5, true}}},
		{name: "overwrite big id", sets: []set{{"3000000", 1}, {"3000000", 2}}, gets: []get{{"3000000", 2, true}}},
		{name: "max int32 value", sets: []set{{"2", math.MaxInt32}}, gets: []get{{"2", math.MaxInt32, true}}},
		{name: "id past the dense limit", sets: []set{{"9999999", 1}}, gets: []get{{"9999999", 1, true}, {id: "999999"}}},
		{name: "draw.io ids", sets: []set{{"WIyWlLk6GJQsqaUBKTNV-3", 1}, {"WIyWlLk6GJQsqaUBKTNV-12", 2}, {"tO4XE-NyFzzd2oOqjGNP-3", 3}, {"3", 4}},
			gets: []get{{"WIyWlLk6GJQsqaUBKTNV-3", 1, true}, {"WIyWlLk6GJQsqaUBKTNV-12", 2, true}, {"tO4XE-NyFzzd2oOqjGNP-3", 3, true}, {"3", 4, true},
				{id: "WIyWlLk6GJQsqaUBKTNV-4"}, {id: "WIyWlLk6GJQsqaUBKTNV-"}, {id: "wiywllk6gjqsqaubktnv-3"}, {id: "tO4XE-NyFzzd2oOqjGNP-12"}}},
		{name: "prefix and leading zero", sets: []set{{"v1", 1}, {"v01", 2}, {"v0", 3}, {"v00", 4}},
			gets: []get{{"v1", 1, true}, {"v01", 2, true}, {"v0", 3, true}, {"v00", 4, true}, {id: "v001"}, {id: "v"}}},
		{name: "prefix ending in a digit is the whole number", sets: []set{{"a12", 1}, {"a1", 2}, {"a2", 3}},
			gets: []get{{"a12", 1, true}, {"a1", 2, true}, {"a2", 3, true}, {id: "a"}, {id: "12"}}},
		{name: "overwrite prefixed", sets: []set{{"e7", 1}, {"e7", 2}, {"e7", math.MinInt32}}, gets: []get{{"e7", math.MinInt32, true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			x := NewIDs(len(tt.sets))
			for _, s := range tt.sets {
				x.Set(s.id, s.v)
			}
			for _, g := range tt.gets {
				v, ok := x.Get(g.id)
				assert.Equal(t, g.wantOK, ok, "Get(%q) found", g.id)
				if g.wantOK {
					assert.Equal(t, g.want, v, "Get(%q)", g.id)
				}
			}
		})
	}
}

// An id first stored in the map (too far ahead of the others) and later
// again once the slice has grown past it must read back its latest value.
func TestIDsOverwriteAcrossStorage(t *testing.T) {
	t.Parallel()
	x := NewIDs(0)
	x.Set("3000", 1) // far ahead of the few ids set so far: goes to the map
	for i := range 3000 {
		x.Set(strconv.Itoa(i), i)
	}
	x.Set("3000", 2)
	v, ok := x.Get("3000")
	require.True(t, ok)
	assert.Equal(t, 2, v)
	for _, i := range []int{0, 1, 1500, 2999} {
		v, ok := x.Get(strconv.Itoa(i))
		assert.True(t, ok)
		assert.Equal(t, i, v)
	}
}

// Set takes any value that fits in an int32. math.MinInt32 is the slice's
// marker for "absent", so storing it over a value in the slice must not leave
// the old value readable.
func TestIDsOverwriteWithMinInt32(t *testing.T) {
	t.Parallel()
	x := NewIDs(4)
	x.Set("3", 1)
	x.Set("3", math.MinInt32)
	v, ok := x.Get("3")
	require.True(t, ok)
	assert.Equal(t, math.MinInt32, v)
}

// A lone huge numeric id must go to the map, not grow the slice to its size.
func TestIDsHugeIDDoesNotAllocate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		id   string
	}{
		{name: "just under the dense limit", id: strconv.Itoa(maxDense - 1)},
		{name: "three million", id: "3000000"},
		{name: "seven nines", id: "9999999"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			x := NewIDs(10)
			x.Set("1", 1)
			x.Set(tt.id, 2)
			v, ok := x.Get(tt.id)
			require.True(t, ok)
			assert.Equal(t, 2, v)
			assert.Less(t, cap(x.dense), 4096, "slice grown for one id")
		})
	}
}

// Lucid CSV ids are consecutive numbers: they all belong in the slice, so a
// 100,000-node chart does not fall back to the map.
func TestIDsDenseStaysDense(t *testing.T) {
	t.Parallel()
	const n = 100_000
	x := NewIDs(n)
	for i := 1; i <= n; i++ {
		x.Set(strconv.Itoa(i), i-1)
	}
	assert.Empty(t, x.sparse)
	for _, i := range []int{1, 2, n / 2, n} {
		v, ok := x.Get(strconv.Itoa(i))
		assert.True(t, ok)
		assert.Equal(t, i-1, v)
	}
	_, ok := x.Get(strconv.Itoa(n + 1))
	assert.False(t, ok)
}

// draw.io's ids are a prefix and a counter, a prefix per editing session:
// they are kept in slices, not the map; past maxPrefixes prefixes the map
// takes the others and every id still reads back.
func TestIDsPrefixed(t *testing.T) {
	t.Parallel()
	const n = 10_000
	x := NewIDs(n)
	for i := range n {
		x.Set("WIyWlLk6GJQsqaUBKTNV-"+strconv.Itoa(i), i)
		x.Set("e"+strconv.Itoa(i), -1-i)
	}
	assert.Empty(t, x.sparse, "prefixed ids in the map")
	for p := range 2 * maxPrefixes {
		x.Set("session"+strconv.Itoa(p)+"-1", 1000+p)
	}
	assert.Len(t, x.prefixed, maxPrefixes)
	assert.Len(t, x.sparse, maxPrefixes+2)
	for i := range n {
		v, ok := x.Get("WIyWlLk6GJQsqaUBKTNV-" + strconv.Itoa(i))
		require.True(t, ok)
		require.Equal(t, i, v)
		v, ok = x.Get("e" + strconv.Itoa(i))
		require.True(t, ok)
		require.Equal(t, -1-i, v)
	}
	for p := range 2 * maxPrefixes {
		v, ok := x.Get("session" + strconv.Itoa(p) + "-1")
		require.True(t, ok)
		assert.Equal(t, 1000+p, v)
	}
	_, ok := x.Get("e" + strconv.Itoa(n))
	assert.False(t, ok)
}

// Random ids (Lucid API's) of which some end in digits: the map is still
// sized once for them, not grown 17 times.
func TestIDsRandomIDsSizeTheMap(t *testing.T) {
	t.Parallel()
	x := NewIDs(1000)
	x.Set("mEk3xYb0PQz1", 0) // ends in a digit: a prefix of its own
	x.Set("0RfjIUAGgJ3a", 1)
	require.NotNil(t, x.sparse)
	assert.Nil(t, x.dense, "the numbers' slice kept beside a map sized for all")
	v, ok := x.Get("mEk3xYb0PQz1")
	require.True(t, ok)
	assert.Equal(t, 0, v)
}
