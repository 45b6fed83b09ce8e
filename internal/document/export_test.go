package document

// SetDrawioWindow sets how much the draw.io decoder reads at a time, and
// returns the size it had.
func SetDrawioWindow(n int) int {
	old := drawioWindow
	drawioWindow = n
	return old
}
