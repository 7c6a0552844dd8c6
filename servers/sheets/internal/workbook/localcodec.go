package workbook

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

func parseCSV(b []byte) ([][]string, error) {
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(b, []byte("\ufeff"))))
	r.FieldsPerRecord = -1
	var rows [][]string
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		for i, f := range rec {
			rec[i] = unescapeText(f)
		}
		rows = append(rows, rec)
	}
	// A row of empty fields is an empty row; trailing ones are dropped.
	for len(rows) > 0 && allEmpty(rows[len(rows)-1]) {
		rows = rows[:len(rows)-1]
	}
	return rows, nil
}

func allEmpty(row []string) bool {
	for _, f := range row {
		if f != "" {
			return false
		}
	}
	return true
}

// formulaLead: text starting with these is run as a formula by spreadsheet
// programs that open a CSV file.
const formulaLead = "=+-@\t\r'"

func escapeText(s string) string {
	if s != "" && strings.IndexByte(formulaLead, s[0]) >= 0 {
		return "'" + s
	}
	return s
}

func unescapeText(s string) string {
	if strings.HasPrefix(s, "'") {
		return s[1:]
	}
	return s
}

// value converts stored text to a read value: a plain number is a number.
func value(s string) any {
	if s == "" {
		return nil
	}
	if n, ok := plainNumber(s); ok {
		return n
	}
	return s
}

// plainNumber accepts a number written the way this package writes one, so
// that "007", "1e3" and "+1" stay text.
func plainNumber(s string) (float64, bool) {
	c := s[0]
	if c != '-' && (c < '0' || c > '9') {
		return 0, false
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(n, 0) || math.IsNaN(n) || formatFloat(n) != s {
		return 0, false
	}
	return n, true
}

func formatFloat(n float64) string {
	if n == math.Trunc(n) && math.Abs(n) < 1e15 {
		return strconv.FormatInt(int64(n), 10)
	}
	return strconv.FormatFloat(n, 'f', -1, 64)
}

// trimEmpty drops a row's trailing empty cells.
func trimEmpty(row []any) []any {
	n := len(row)
	for n > 0 && row[n-1] == "" {
		n--
	}
	return row[:n:n]
}

// rawText renders a value to write as the text the tab holds (escaped only
// in the file).
func rawText(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case int:
		return strconv.Itoa(x), nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return "", fmt.Errorf("the number %v cannot be stored", x)
		}
		return formatFloat(x), nil
	case bool:
		if x {
			return "TRUE", nil
		}
		return "FALSE", nil
	}
	return "", fmt.Errorf("a cell takes a string, number or boolean, not %T", v)
}
