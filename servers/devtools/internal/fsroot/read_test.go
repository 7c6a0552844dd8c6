package fsroot

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// lines returns "line 1\nline 2\n…line n\n".
func lines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestRead(t *testing.T) {
	fx := newFixture(t, Limits{})
	fx.write(t, "ten.txt", lines(10))
	fx.write(t, "nonl.txt", "a\nb\nc")
	fx.write(t, "empty.txt", "")
	fx.write(t, "bin.dat", "\x00\xff\xfe\x01")
	fx.write(t, "utf.txt", "héllo wörld ✓\n")
	fx.write(t, "crlf.txt", "a\r\nb\r\n")

	for _, tc := range []struct {
		name      string
		p         string
		opt       ReadOptions
		content   string
		lines     *LineRange
		truncated bool
	}{
		{"whole", "ten.txt", ReadOptions{}, lines(10), &LineRange{1, 10, 10}, false},
		{"utf8 alias", "ten.txt", ReadOptions{Encoding: "UTF8"}, lines(10), &LineRange{1, 10, 10}, false},
		{"no trailing newline", "nonl.txt", ReadOptions{}, "a\nb\nc", &LineRange{1, 3, 3}, false},
		{"empty", "empty.txt", ReadOptions{}, "", &LineRange{0, 0, 0}, false},
		{"multibyte", "utf.txt", ReadOptions{}, "héllo wörld ✓\n", &LineRange{1, 1, 1}, false},
		{"crlf kept", "crlf.txt", ReadOptions{}, "a\r\nb\r\n", &LineRange{1, 2, 2}, false},
		{"base64", "bin.dat", ReadOptions{Encoding: "base64"}, "AP/+AQ==", nil, false},
		{"hex", "bin.dat", ReadOptions{Encoding: "hex"}, "00fffe01", nil, false},
		{"offset", "ten.txt", ReadOptions{Offset: 9}, "line 9\nline 10\n", &LineRange{9, 10, 10}, false},
		{"offset limit", "ten.txt", ReadOptions{Offset: 3, Limit: 2}, "line 3\nline 4\n", &LineRange{3, 4, 10}, false},
		{"limit only", "ten.txt", ReadOptions{Limit: 1}, "line 1\n", &LineRange{1, 1, 10}, false},
		{"limit past end", "ten.txt", ReadOptions{Offset: 10, Limit: 5}, "line 10\n", &LineRange{10, 10, 10}, false},
		{"offset last line no newline", "nonl.txt", ReadOptions{Offset: 3}, "c", &LineRange{3, 3, 3}, false},
		{"offset 1 of empty", "empty.txt", ReadOptions{Offset: 1}, "", &LineRange{0, 0, 0}, false},
		{"head", "ten.txt", ReadOptions{Head: 2}, "line 1\nline 2\n", &LineRange{1, 2, 10}, false},
		{"head more than file", "nonl.txt", ReadOptions{Head: 20}, "a\nb\nc", &LineRange{1, 3, 3}, false},
		{"tail", "ten.txt", ReadOptions{Tail: 2}, "line 9\nline 10\n", &LineRange{9, 10, 10}, false},
		{"tail no trailing newline", "nonl.txt", ReadOptions{Tail: 2}, "b\nc", &LineRange{2, 3, 3}, false},
		{"tail whole file", "ten.txt", ReadOptions{Tail: 50}, lines(10), &LineRange{1, 10, 10}, false},
		{"tail of empty", "empty.txt", ReadOptions{Tail: 3}, "", &LineRange{0, 0, 0}, false},
		{"max bytes window", "ten.txt", ReadOptions{Head: 10, MaxBytes: 15}, "line 1\nline 2\n", &LineRange{1, 2, 10}, true},
		{"max bytes above cap", "ten.txt", ReadOptions{MaxBytes: 1 << 40}, lines(10), &LineRange{1, 10, 10}, false},
		{"absolute path", fx.in("ten.txt"), ReadOptions{Head: 1}, "line 1\n", &LineRange{1, 1, 10}, false},
		{"unclean path", "./x/../ten.txt", ReadOptions{Head: 1}, "line 1\n", &LineRange{1, 1, 10}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := fx.fs.Read(tc.p, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if r.Content != tc.content {
				t.Errorf("Content = %q, want %q", r.Content, tc.content)
			}
			if (r.Lines == nil) != (tc.lines == nil) || (r.Lines != nil && *r.Lines != *tc.lines) {
				t.Errorf("Lines = %+v, want %+v", r.Lines, tc.lines)
			}
			if r.Truncated != tc.truncated {
				t.Errorf("Truncated = %v", r.Truncated)
			}
			if r.Root != fx.root || r.Path != filepath.ToSlash(filepath.Clean(strings.TrimPrefix(tc.p, fx.root+"/"))) {
				t.Errorf("Root, Path = %q, %q", r.Root, r.Path)
			}
			if fi, _ := os.Stat(fx.in(r.Path)); r.Size != fi.Size() || !r.ModTime.Equal(fi.ModTime()) {
				t.Errorf("Size, ModTime = %d, %v", r.Size, r.ModTime)
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	fx := newFixture(t, Limits{MaxReadBytes: 64})
	fx.write(t, "ten.txt", lines(10))
	fx.write(t, "big.txt", lines(100))
	fx.write(t, "bin.dat", "ok\n\xff\xfe\n")
	mustMkdir(t, fx.in("dir"))

	for _, tc := range []struct {
		name  string
		p     string
		opt   ReadOptions
		code  mcperr.Code
		field string
		msg   string
	}{
		{"missing", "nope.txt", ReadOptions{}, mcperr.NotFound, "", "does not exist"},
		{"directory", "dir", ReadOptions{}, mcperr.Validation, "path", "directory"},
		{"root", "", ReadOptions{}, mcperr.Validation, "path", "directory"},
		{"parent is file", "ten.txt/x", ReadOptions{}, mcperr.Validation, "path", "not a directory"},
		{"nul", "a\x00b", ReadOptions{}, mcperr.Validation, "path", "NUL"},
		{"byte offset past end", "ten.txt", ReadOptions{Bytes: true, ByteOffset: 1000}, mcperr.Validation, "byte_offset", "past the end of the file (71 bytes)"},
		{"byte offset with offset", "ten.txt", ReadOptions{Bytes: true, Offset: 2}, mcperr.Validation, "byte_offset", "excludes"},
		{"negative byte offset", "ten.txt", ReadOptions{Bytes: true, ByteOffset: -1}, mcperr.Validation, "byte_offset", "negative"},
		{"invalid utf8", "bin.dat", ReadOptions{}, mcperr.Validation, "encoding", "base64"},
		{"invalid utf8 window", "bin.dat", ReadOptions{Offset: 2}, mcperr.Validation, "encoding", "not valid UTF-8"},
		{"bad encoding", "ten.txt", ReadOptions{Encoding: "latin1"}, mcperr.Validation, "encoding", `not "latin1"`},
		{"negative offset", "ten.txt", ReadOptions{Offset: -1}, mcperr.Validation, "offset", "negative"},
		{"negative limit", "ten.txt", ReadOptions{Limit: -1}, mcperr.Validation, "limit", "negative"},
		{"negative head", "ten.txt", ReadOptions{Head: -1}, mcperr.Validation, "head", "negative"},
		{"negative tail", "ten.txt", ReadOptions{Tail: -1}, mcperr.Validation, "tail", "negative"},
		{"negative max bytes", "ten.txt", ReadOptions{MaxBytes: -1}, mcperr.Validation, "max_bytes", "negative"},
		{"head and tail", "ten.txt", ReadOptions{Head: 1, Tail: 1}, mcperr.Validation, "tail", "exclude"},
		{"head and offset", "ten.txt", ReadOptions{Head: 1, Offset: 2}, mcperr.Validation, "head", "excludes"},
		{"tail and limit", "ten.txt", ReadOptions{Tail: 1, Limit: 2}, mcperr.Validation, "tail", "excludes"},
		{"window with hex", "ten.txt", ReadOptions{Encoding: "hex", Head: 1}, mcperr.Validation, "encoding", "utf-8"},
		{"offset past end", "ten.txt", ReadOptions{Offset: 12}, mcperr.Validation, "offset", "past the end of the file (10 lines)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := fx.fs.Read(tc.p, tc.opt)
			fe := wantCode(t, err, tc.code)
			if fe.Field != tc.field || !strings.Contains(fe.Msg, tc.msg) || fe.Op != "read" || fe.Path != tc.p {
				t.Errorf("error = %+v", fe)
			}
		})
	}
}

// TestReadPagesOverCap reads a file above the cap without a window: it is
// not refused; each read returns what fits, and ByteEnd or the next line
// goes on where it stopped until the whole file was seen.
func TestReadPagesOverCap(t *testing.T) {
	const capBytes = 64
	fx := newFixture(t, Limits{MaxReadBytes: capBytes})
	body := lines(100)
	fx.write(t, "big.txt", body)
	fx.write(t, "uni.txt", strings.Repeat("é✓", 40))

	r, err := fx.fs.Read("big.txt", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Truncated || r.Content != lines(9) || *r.Lines != (LineRange{1, 9, 100}) || r.ByteStart != 0 || r.ByteEnd != int64(len(lines(9))) {
		t.Fatalf("first page: %q %+v truncated=%v bytes %d-%d", r.Content, *r.Lines, r.Truncated, r.ByteStart, r.ByteEnd)
	}
	var got strings.Builder
	got.WriteString(r.Content)
	for next := r.Lines.End + 1; r.Truncated; next = r.Lines.End + 1 {
		if r, err = fx.fs.Read("big.txt", ReadOptions{Offset: next}); err != nil {
			t.Fatal(err)
		}
		if r.Lines.Start != next || len(r.Content) > capBytes || r.ByteStart != int64(got.Len()) {
			t.Fatalf("page from line %d: %+v, %d bytes from %d", next, *r.Lines, len(r.Content), r.ByteStart)
		}
		got.WriteString(r.Content)
	}
	if got.String() != body {
		t.Errorf("pages joined differ from the file")
	}

	for _, enc := range []string{"base64", "hex", "utf-8"} {
		t.Run("bytes "+enc, func(t *testing.T) {
			var all []byte
			var off int64
			for {
				r, err := fx.fs.Read("uni.txt", ReadOptions{Encoding: enc, Bytes: true, ByteOffset: off, MaxBytes: 10})
				if err != nil {
					t.Fatal(err)
				}
				if r.ByteStart != off || r.Lines != nil {
					t.Fatalf("window from %d starts at %d, lines %+v", off, r.ByteStart, r.Lines)
				}
				var b []byte
				switch enc {
				case "base64":
					b, err = base64.StdEncoding.DecodeString(r.Content)
				case "hex":
					b, err = hex.DecodeString(r.Content)
				default:
					b = []byte(r.Content)
					if !utf8.ValidString(r.Content) {
						t.Fatalf("window %q cuts a character", r.Content)
					}
				}
				if err != nil || int64(len(b)) != r.ByteEnd-r.ByteStart || len(b) > 10 {
					t.Fatalf("window %q: %v, %d bytes for %d-%d", r.Content, err, len(b), r.ByteStart, r.ByteEnd)
				}
				all = append(all, b...)
				off = r.ByteEnd
				if !r.Truncated {
					break
				}
			}
			if string(all) != strings.Repeat("é✓", 40) {
				t.Errorf("windows joined: %q", all)
			}
		})
	}
	// A utf-8 window starting inside a character starts at the next one.
	r, err = fx.fs.Read("uni.txt", ReadOptions{Bytes: true, ByteOffset: 1, MaxBytes: 10})
	if err != nil || !strings.HasPrefix(r.Content, "✓") || r.ByteStart != 2 {
		t.Errorf("window from inside a character: %q from %d, %v", r.Content, r.ByteStart, err)
	}
}

// TestReadWindowsOverCap reads line windows from a file far above the cap:
// they must succeed, stop at the cap on a line boundary and say so.
func TestReadWindowsOverCap(t *testing.T) {
	const capBytes = 100
	fx := newFixture(t, Limits{MaxReadBytes: capBytes})
	fx.write(t, "big.txt", lines(1000)) // ~8.9 KB
	fx.write(t, "longline.txt", "short\n"+strings.Repeat("é", 200)+"\nend\n")
	fx.write(t, "onelong.txt", strings.Repeat("ü", 300))

	check := func(t *testing.T, r *ReadResult, content string, lr LineRange, truncated bool) {
		t.Helper()
		if r.Content != content || *r.Lines != lr || r.Truncated != truncated {
			t.Errorf("got %q %+v truncated=%v; want %q %+v %v", r.Content, *r.Lines, r.Truncated, content, lr, truncated)
		}
		if len(r.Content) > capBytes {
			t.Errorf("content is %d bytes, over the cap", len(r.Content))
		}
	}
	for _, tc := range []struct {
		name      string
		p         string
		opt       ReadOptions
		content   string
		lr        LineRange
		truncated bool
	}{
		{"head fits", "big.txt", ReadOptions{Head: 3}, "line 1\nline 2\nline 3\n", LineRange{1, 3, 1000}, false},
		{"head capped", "big.txt", ReadOptions{Head: 500}, lines(13), LineRange{1, 13, 1000}, true},
		{"offset capped", "big.txt", ReadOptions{Offset: 991}, "line 991\nline 992\nline 993\nline 994\nline 995\nline 996\nline 997\nline 998\nline 999\nline 1000\n", LineRange{991, 1000, 1000}, false},
		{"offset no limit capped", "big.txt", ReadOptions{Offset: 500}, strings.Join(strings.SplitAfter(lines(510), "\n")[499:510], ""), LineRange{500, 510, 1000}, true},
		{"tail fits", "big.txt", ReadOptions{Tail: 2}, "line 999\nline 1000\n", LineRange{999, 1000, 1000}, false},
		{"tail capped", "big.txt", ReadOptions{Tail: 500}, strings.Join(strings.SplitAfter(lines(1000), "\n")[989:1000], ""), LineRange{990, 1000, 1000}, true},
		{"line longer than cap", "longline.txt", ReadOptions{Offset: 2, Limit: 1}, strings.Repeat("é", 50), LineRange{2, 2, 3}, true},
		{"second line over cap", "longline.txt", ReadOptions{Head: 3}, "short\n", LineRange{1, 1, 3}, true},
		{"tail of huge last line", "onelong.txt", ReadOptions{Tail: 1}, strings.Repeat("ü", 50), LineRange{1, 1, 1}, true},
		{"tail stops before long line", "longline.txt", ReadOptions{Tail: 2}, "end\n", LineRange{3, 3, 3}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := fx.fs.Read(tc.p, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			check(t, r, tc.content, tc.lr, tc.truncated)
		})
	}

	t.Run("whole read pages", func(t *testing.T) {
		r, err := fx.fs.Read("big.txt", ReadOptions{})
		if err != nil || !r.Truncated || r.Lines.End == 0 || int64(len(r.Content)) > capBytes || r.Lines.Total != 1000 {
			t.Errorf("got %d bytes, %+v, truncated=%v, %v", len(r.Content), r.Lines, r.Truncated, err)
		}
	})

	t.Run("uncounted", func(t *testing.T) {
		old := countLinesUpTo
		countLinesUpTo = 10
		defer func() { countLinesUpTo = old }()
		r, err := fx.fs.Read("big.txt", ReadOptions{Tail: 2})
		if err != nil {
			t.Fatal(err)
		}
		check(t, r, "line 999\nline 1000\n", LineRange{-2, -1, -1}, false)
		r, err = fx.fs.Read("big.txt", ReadOptions{Head: 2})
		if err != nil {
			t.Fatal(err)
		}
		check(t, r, "line 1\nline 2\n", LineRange{1, 2, -1}, false)
	})
}

func TestTrimPartialRune(t *testing.T) {
	for in, want := range map[string]string{
		"":             "",
		"abc":          "abc",
		"ab\xc3":       "ab",
		"a\xe2\x9c":    "a",
		"a✓":           "a✓",
		"\xf0\x9f\x98": "",
	} {
		if got := string(trimPartialRune([]byte(in))); got != want {
			t.Errorf("trimPartialRune(%q) = %q, want %q", in, got, want)
		}
	}
}

func BenchmarkRead1KiB(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(strings.Repeat("0123456789abcde\n", 64)), 0o644); err != nil {
		b.Fatal(err)
	}
	fsys, err := Open([]string{dir}, Limits{})
	if err != nil {
		b.Fatal(err)
	}
	defer fsys.Close()
	b.SetBytes(1024)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fsys.Read("f.txt", ReadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestReadWholeMatchesStreamed reads the same windows of small files in
// memory and streamed line by line: both paths must give the same result.
func TestReadWholeMatchesStreamed(t *testing.T) {
	files := map[string]string{
		"ten.txt":      lines(10),
		"big.txt":      lines(300),
		"nonl.txt":     "a\nb\nc",
		"empty.txt":    "",
		"crlf.txt":     "a\r\nb\r\n",
		"longline.txt": "short\n" + strings.Repeat("é", 200) + "\nend\n",
		"onelong.txt":  strings.Repeat("ü", 300),
		"newlines.txt": "\n\n\n",
	}
	opts := []ReadOptions{{}, {Offset: 2}, {Offset: 3, Limit: 2}, {Limit: 1}, {Offset: 299, Limit: 5},
		{Offset: 4}, {Offset: 400}, {Head: 2}, {Head: 500}, {Offset: 1, Limit: 1}, {Offset: 2, Limit: 1}}
	defer func(old int64) { countLinesUpTo = old }(countLinesUpTo)
	for i, capBytes := range []int64{0, 7, 64, 100, 1 << 20, 0, 7, 64} {
		if i >= 5 {
			countLinesUpTo = 10 // files over it are counted only when read to the end
		}
		fx := newFixture(t, Limits{MaxReadBytes: max(capBytes, 1<<20)})
		for name, body := range files {
			fx.write(t, name, body)
		}
		for name := range files {
			for _, opt := range opts {
				opt.MaxBytes = capBytes
				whole, werr := fx.fs.Read(name, opt)
				old := wholeUpTo
				wholeUpTo = -1
				streamed, serr := fx.fs.Read(name, opt)
				wholeUpTo = old
				if fmt.Sprint(werr) != fmt.Sprint(serr) {
					t.Errorf("%s %+v: errors differ: whole %v, streamed %v", name, opt, werr, serr)
					continue
				}
				if werr != nil {
					continue
				}
				if whole.Content != streamed.Content || *whole.Lines != *streamed.Lines || whole.Truncated != streamed.Truncated ||
					whole.ByteStart != streamed.ByteStart || whole.ByteEnd != streamed.ByteEnd {
					t.Errorf("%s %+v:\nwhole    %q %+v %v %d-%d\nstreamed %q %+v %v %d-%d", name, opt,
						whole.Content, *whole.Lines, whole.Truncated, whole.ByteStart, whole.ByteEnd,
						streamed.Content, *streamed.Lines, streamed.Truncated, streamed.ByteStart, streamed.ByteEnd)
				}
			}
		}
	}
}
