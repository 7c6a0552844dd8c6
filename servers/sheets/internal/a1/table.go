package a1

// A "table", for values.append, is a block of data: the bounding rectangle
// of cells that hold values and touch one another (side by side or one above
// the other), with blocks whose rectangles overlap counted as one. Appended
// rows go below the table the range points at, from its first column:
//
//   - a single-cell range inside a table points at that table; one outside
//     every table is written at that cell;
//   - any other range points at the last table (the one that starts last,
//     reading row by row) that it intersects, even partly; when it
//     intersects none, rows are written from its top-left cell.
//
// This is how the Sheets API documents values.append, and both the local
// workbook and the test fake of the API follow it.

// AppendTarget returns the cell where values.append starts writing for range
// r (its tab already chosen) on a tab whose cells holding a value are
// filled[row-1][col-1], and the table it appends to when there is one.
func AppendTarget(filled [][]bool, r Range) (row, col int, table Range, found bool) {
	tables := Tables(filled)
	if r.Single() {
		for _, t := range tables {
			if t.Contains(r.StartRow, r.StartCol) {
				return t.EndRow + 1, t.StartCol, t, true
			}
		}
		return r.StartRow, r.StartCol, Range{}, false
	}
	var last *Range
	for i := range tables {
		t := &tables[i]
		if !intersects(*t, r) {
			continue
		}
		if last == nil || t.StartRow > last.StartRow || (t.StartRow == last.StartRow && t.StartCol > last.StartCol) {
			last = t
		}
	}
	if last == nil {
		return r.StartRow, r.StartCol, Range{}, false
	}
	return last.EndRow + 1, last.StartCol, *last, true
}

func intersects(t, r Range) bool {
	return t.StartRow <= orMax(r.EndRow) && r.StartRow <= t.EndRow &&
		t.StartCol <= orMax(r.EndCol) && r.StartCol <= t.EndCol
}

func orMax(end int) int {
	if end == 0 {
		return int(^uint(0) >> 1)
	}
	return end
}

// Tables finds the tables of a tab (see AppendTarget), in no set order; their
// Sheet is empty.
func Tables(filled [][]bool) []Range {
	seen := make([][]bool, len(filled))
	for i := range filled {
		seen[i] = make([]bool, len(filled[i]))
	}
	var boxes []Range
	var stack [][2]int
	for r0 := range filled {
		for c0 := range filled[r0] {
			if !filled[r0][c0] || seen[r0][c0] {
				continue
			}
			box := Range{StartRow: r0, StartCol: c0, EndRow: r0, EndCol: c0}
			seen[r0][c0] = true
			stack = append(stack[:0], [2]int{r0, c0})
			for len(stack) > 0 {
				p := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				box.StartRow, box.EndRow = min(box.StartRow, p[0]), max(box.EndRow, p[0])
				box.StartCol, box.EndCol = min(box.StartCol, p[1]), max(box.EndCol, p[1])
				for _, d := range [4][2]int{{-1, 0}, {1, 0}, {0, -1}, {0, 1}} {
					r, c := p[0]+d[0], p[1]+d[1]
					if r < 0 || r >= len(filled) || c < 0 || c >= len(filled[r]) || !filled[r][c] || seen[r][c] {
						continue
					}
					seen[r][c] = true
					stack = append(stack, [2]int{r, c})
				}
			}
			boxes = append(boxes, box)
		}
	}
	// Rectangles that overlap are one table.
	for merged := true; merged; {
		merged = false
		for i := 0; i < len(boxes) && !merged; i++ {
			for j := i + 1; j < len(boxes); j++ {
				if intersects(boxes[i], boxes[j]) {
					a, b := boxes[i], boxes[j]
					boxes[i] = Range{StartRow: min(a.StartRow, b.StartRow), StartCol: min(a.StartCol, b.StartCol),
						EndRow: max(a.EndRow, b.EndRow), EndCol: max(a.EndCol, b.EndCol)}
					boxes = append(boxes[:j], boxes[j+1:]...)
					merged = true
					break
				}
			}
		}
	}
	for i := range boxes { // 0-based to 1-based
		boxes[i].StartRow++
		boxes[i].StartCol++
		boxes[i].EndRow++
		boxes[i].EndCol++
	}
	return boxes
}
