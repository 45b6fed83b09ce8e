package export

import "math"

// Edge labels are drawn where their edge's middle is, and two edges that
// leave a decision side by side put theirs side by side too: wide labels
// ("✗ unlabeled_branch") then covered each other. labelGrid keeps the
// labels drawn on a page and moves each new one clear of them.

const (
	labelH    = 16.0 // a label's white ground
	labelStep = 18.0 // how far a label moves to get clear of another
	cellW     = 64.0 // the grid's cells, for finding the labels nearby
	cellH     = 18.0
	// maxShifts bounds the places tried for a label, each way: past
	// them it is drawn where the last one was tried.
	maxShifts = 12
)

type labelRect struct{ x, y, w float64 }

// labelGrid holds the labels placed so far, by the grid cells they
// cover, so a new label is checked against its neighbours only: a page
// of thousands of edges stays linear.
type labelGrid struct {
	cells map[[2]int][]labelRect
}

func newLabelGrid() *labelGrid { return &labelGrid{cells: map[[2]int][]labelRect{}} }

// place returns the top of a label of width w whose ground wants its top
// left corner at (x, y): y itself when nothing drawn is in the way, else
// the nearest free place above or below, below first.
func (g *labelGrid) place(x, y, w float64) float64 {
	top := y
	for k := 0; k <= 2*maxShifts; k++ {
		// 0, +1, -1, +2, -2, … steps
		shift := float64((k + 1) / 2)
		if k%2 == 0 {
			shift = -shift
		}
		top = y + shift*labelStep
		if !g.overlaps(labelRect{x, top, w}) {
			break
		}
	}
	g.add(labelRect{x, top, w})
	return top
}

func (g *labelGrid) span(r labelRect) (x0, x1, y0, y1 int) {
	return int(math.Floor(r.x / cellW)), int(math.Floor((r.x + r.w) / cellW)),
		int(math.Floor(r.y / cellH)), int(math.Floor((r.y + labelH) / cellH))
}

func (g *labelGrid) overlaps(r labelRect) bool {
	x0, x1, y0, y1 := g.span(r)
	for cx := x0; cx <= x1; cx++ {
		for cy := y0; cy <= y1; cy++ {
			for _, o := range g.cells[[2]int{cx, cy}] {
				if r.x < o.x+o.w && o.x < r.x+r.w && r.y < o.y+labelH && o.y < r.y+labelH {
					return true
				}
			}
		}
	}
	return false
}

func (g *labelGrid) add(r labelRect) {
	x0, x1, y0, y1 := g.span(r)
	for cx := x0; cx <= x1; cx++ {
		for cy := y0; cy <= y1; cy++ {
			g.cells[[2]int{cx, cy}] = append(g.cells[[2]int{cx, cy}], r)
		}
	}
}
