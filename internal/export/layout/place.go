package layout

import "math"

// placeX gives each node an x: layers packed left to right, then passes
// that move each node towards the mean x of its neighbours above (down
// passes) or below (up passes), then both, keeping the nodes of a layer
// in order and apart.
func (l *layering) placeX(o Options) {
	l.x = make([]float64, len(l.size))
	for _, layer := range l.layers {
		x := 0.0
		for i, v := range layer {
			if i > 0 {
				x += l.sep(layer[i-1], v, o)
			}
			l.x[v] = x
		}
	}
	want := make([]float64, len(l.size))
	passes := [][][]int{l.up, l.down, l.up, l.down, l.up, l.down, nil}
	for p, nbr := range passes {
		order := make([]int, len(l.layers))
		for k := range order {
			order[k] = k
			if p%2 == 1 { // bottom up when following the layer below
				order[k] = len(l.layers) - 1 - k
			}
		}
		for _, k := range order {
			layer := l.layers[k]
			for _, v := range layer {
				want[v] = l.x[v]
				sum, cnt := 0.0, 0
				lists := [][][]int{nbr}
				if nbr == nil {
					lists = [][][]int{l.up, l.down}
				}
				for _, list := range lists {
					for _, w := range list[v] {
						sum += l.x[w]
						cnt++
					}
				}
				if cnt > 0 {
					want[v] = sum / float64(cnt)
				}
			}
			l.fit(layer, want, o)
		}
	}
	minX := math.Inf(1)
	for v, x := range l.x {
		minX = min(minX, x-l.size[v].W/2)
	}
	for v := range l.x {
		l.x[v] += o.Margin - minX
	}
}

// sep is the least distance between the centres of two neighbours in a
// layer.
func (l *layering) sep(a, b int, o Options) float64 {
	gap := o.NodeGap
	if a >= l.n && b >= l.n {
		gap = o.NodeGap / 2 // two edges side by side
	}
	return l.size[a].W/2 + gap + l.size[b].W/2
}

// fit sets the x of a layer's nodes as close to want as the order and the
// separations allow: with y_i = x_i - offset_i, the least-squares fit of
// a non-decreasing y to want_i - offset_i, by pooling adjacent violators.
func (l *layering) fit(layer []int, want []float64, o Options) {
	type block struct {
		sum, weight float64
		n           int
	}
	offset := make([]float64, len(layer))
	for i := 1; i < len(layer); i++ {
		offset[i] = offset[i-1] + l.sep(layer[i-1], layer[i], o)
	}
	blocks := make([]block, 0, len(layer))
	for i, v := range layer {
		w := l.weight[v]
		blocks = append(blocks, block{sum: w * (want[v] - offset[i]), weight: w, n: 1})
		for len(blocks) > 1 {
			a, b := blocks[len(blocks)-2], blocks[len(blocks)-1]
			if a.sum/a.weight <= b.sum/b.weight {
				break
			}
			blocks = blocks[:len(blocks)-2]
			blocks = append(blocks, block{sum: a.sum + b.sum, weight: a.weight + b.weight, n: a.n + b.n})
		}
	}
	i := 0
	for _, b := range blocks {
		y := b.sum / b.weight
		for range b.n {
			l.x[layer[i]] = y + offset[i]
			i++
		}
	}
}

// result turns the layers into coordinates: each layer as tall as its
// tallest node, edges through their dummies, reversed edges turned back.
func (l *layering) result(o Options) Layout {
	out := Layout{Nodes: make([]Point, l.n), Edges: make([][]Point, len(l.g.Edges)), Back: l.rev}
	y := make([]float64, len(l.layers))
	top := o.Margin
	for k, layer := range l.layers {
		h := 0.0
		for _, v := range layer {
			h = max(h, l.size[v].H)
		}
		y[k] = top + h/2
		top += h + o.LayerGap
	}
	out.Height = top - o.LayerGap + o.Margin
	if len(l.layers) == 0 {
		out.Height = 2 * o.Margin
	}
	for v := range l.n {
		out.Nodes[v] = Point{l.x[v], y[l.layer[v]]}
	}
	out.Width = 2 * o.Margin
	for v, x := range l.x {
		out.Width = max(out.Width, x+l.size[v].W/2+o.Margin)
	}
	for i, c := range l.chains {
		if l.self[i] {
			v := l.g.Edges[i].From
			out.Edges[i] = []Point{out.Nodes[v], out.Nodes[v]}
			continue
		}
		pts := make([]Point, len(c))
		for k, v := range c {
			pts[k] = Point{l.x[v], y[l.layer[v]]}
		}
		if l.rev[i] {
			for a, b := 0, len(pts)-1; a < b; a, b = a+1, b-1 {
				pts[a], pts[b] = pts[b], pts[a]
			}
		}
		out.Edges[i] = pts
	}
	return out
}
