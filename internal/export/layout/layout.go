// Package layout places the nodes of a directed graph in layers, top to
// bottom, and routes its edges between them: a small Sugiyama-style
// layered layout, the kind Graphviz dot draws, for dtree's SVG pictures.
//
// The steps, each linear or close to it in the size of the graph, so that
// a few thousand nodes take milliseconds: edges that close a cycle are
// reversed (a depth-first search from the roots); each node goes one layer
// below its lowest predecessor (longest path); an edge spanning several
// layers gets a dummy node in each layer it crosses, up to a budget;
// barycenter sweeps order each layer to reduce crossings, keeping the best
// order found; and each layer's x positions are the closest to the
// average of their neighbours' that keep the nodes apart (isotonic
// regression, solved by pooling adjacent violators).
package layout

// Size is a node's width and height.
type Size struct{ W, H float64 }

// Edge joins node From to node To (indexes into the graph's nodes).
type Edge struct{ From, To int }

// Point is a position; Y grows downwards.
type Point struct{ X, Y float64 }

// Graph is what Layered lays out.
type Graph struct {
	Nodes []Size
	Edges []Edge
}

// Options are the gaps between nodes and between layers.
type Options struct {
	NodeGap  float64 // horizontal space between two nodes of a layer
	LayerGap float64 // vertical space between two layers
	Margin   float64
	Sweeps   int // barycenter sweeps (down and up count as one)
}

// DefaultOptions suit boxes of about 200 by 60 with edge labels between
// layers.
func DefaultOptions() Options {
	return Options{NodeGap: 40, LayerGap: 60, Margin: 20, Sweeps: 8}
}

// Layout is where Layered put everything.
type Layout struct {
	Nodes []Point   // the centre of each node
	Edges [][]Point // each edge's route, from its source's centre to its target's, bends in between
	// Back marks the edges that were reversed to break a cycle: they go
	// up the picture.
	Back          []bool
	Width, Height float64
}

// Layered lays g out top to bottom.
func Layered(g Graph, o Options) Layout {
	l := newLayering(g)
	l.breakCycles()
	l.assignLayers()
	l.addDummies(o)
	l.order(o.Sweeps)
	l.placeX(o)
	return l.result(o)
}
