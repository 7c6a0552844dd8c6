package fsroot

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// Encodings accepted by [ReadOptions].
const (
	EncodingUTF8   = "utf-8"
	EncodingBase64 = "base64"
	EncodingHex    = "hex"
)

// ReadOptions selects what Read returns. Line windows (Offset/Limit, Head,
// Tail) apply to utf-8 only; a byte window (Bytes, ByteOffset) to any
// encoding. A read never returns more than the cap: it stops there, sets
// Truncated and says in ByteEnd (and the line range) where to go on.
type ReadOptions struct {
	// Encoding is "utf-8" (default), "base64" or "hex".
	Encoding string
	// Offset is the 1-based first line to return (0 means 1); Limit is how
	// many lines (0 means up to the byte cap).
	Offset, Limit int
	// Head and Tail return the first or last N lines. They exclude each
	// other and Offset/Limit.
	Head, Tail int
	// Bytes selects a byte window from ByteOffset (0-based) to the cap or
	// the end of the file; it excludes the line windows. In utf-8 the
	// window's ends move to character boundaries.
	Bytes      bool
	ByteOffset int64
	// MaxBytes lowers the read cap for this call; 0 or more than the
	// configured cap means the configured cap.
	MaxBytes int64
}

// LineRange describes the lines in a utf-8 ReadResult.
type LineRange struct {
	// Start and End are the 1-based, inclusive line numbers of Content, or
	// 0 and 0 when it holds no lines. A tail of a file too large to count
	// is numbered back from the end instead: Start=-3, End=-1 for three
	// lines.
	Start, End int
	// Total is the file's line count, or -1 when counting would have meant
	// scanning a large file past the requested window.
	Total int
}

// ReadResult is a file's content with enough context to ask for more.
type ReadResult struct {
	Path     string // slash-separated, relative to Root; "." never occurs (roots are dirs)
	Root     string
	Content  string
	Encoding string
	Size     int64 // the whole file's size, not len(Content)
	// Lines is set for utf-8 reads only.
	Lines *LineRange
	// Truncated means the byte cap cut the requested window short.
	Truncated bool
	// ByteStart and ByteEnd are the file offsets of Content's first byte
	// and of the byte after its last (before encoding): a read cut short
	// goes on at ByteEnd.
	ByteStart, ByteEnd int64
	ModTime            time.Time
}

// countLinesUpTo is the largest file whose total line count a windowed read
// computes when the window alone would not have needed the whole file. A
// variable so tests can exercise the uncounted path without huge files.
var countLinesUpTo int64 = 64 << 20

const readBufSize = 64 << 10

// Read returns a regular file's content. Symlinks are followed only while
// they stay inside the root. Reading stops at the cap and sets Truncated:
// without a window, utf-8 is read as whole lines from the first, other
// encodings as bytes from the first.
func (f *FS) Read(p string, opt ReadOptions) (*ReadResult, error) {
	const op = "read"
	enc, err := checkReadOptions(p, &opt)
	if err != nil {
		return nil, err
	}
	capBytes := f.lim.MaxReadBytes
	if opt.MaxBytes > 0 && opt.MaxBytes < capBytes {
		capBytes = opt.MaxBytes
	}
	t, file, fi, err := f.openRead(op, p)
	if err != nil {
		return nil, err
	}
	defer file.Close()

	res := &ReadResult{Path: t.slash(), Root: t.root.name, Encoding: enc, Size: fi.Size(), ModTime: fi.ModTime()}
	switch {
	case opt.Tail > 0:
		err = readTail(file, fi.Size(), opt.Tail, capBytes, res)
	case opt.Head > 0:
		err = readForward(file, fi.Size(), 1, opt.Head, capBytes, res)
	case opt.Offset > 0 || opt.Limit > 0 || (enc == EncodingUTF8 && !opt.Bytes):
		err = readForward(file, fi.Size(), max(opt.Offset, 1), opt.Limit, capBytes, res)
	default:
		err = readBytes(file, fi.Size(), opt.ByteOffset, capBytes, enc, res)
	}
	if err != nil {
		return nil, wrap(op, p, err)
	}
	if enc == EncodingUTF8 && !utf8.ValidString(res.Content) {
		return nil, invalid(op, p, "encoding",
			quote(p)+" is not valid UTF-8 (binary?); read it with encoding \"base64\" or \"hex\"")
	}
	return res, nil
}

func checkReadOptions(p string, opt *ReadOptions) (string, error) {
	const op = "read"
	enc := strings.ToLower(opt.Encoding)
	switch enc {
	case "", "utf-8", "utf8":
		enc = EncodingUTF8
	case EncodingBase64, EncodingHex:
	default:
		return "", invalid(op, p, "encoding", "encoding must be \"utf-8\", \"base64\" or \"hex\", not "+strconv.Quote(opt.Encoding))
	}
	for _, v := range []struct {
		name string
		n    int64
	}{{"offset", int64(opt.Offset)}, {"limit", int64(opt.Limit)}, {"head", int64(opt.Head)}, {"tail", int64(opt.Tail)}, {"max_bytes", opt.MaxBytes}, {"byte_offset", opt.ByteOffset}} {
		if v.n < 0 {
			return "", invalid(op, p, v.name, v.name+" must not be negative")
		}
	}
	window := opt.Offset > 0 || opt.Limit > 0
	switch {
	case opt.Head > 0 && opt.Tail > 0:
		return "", invalid(op, p, "tail", "head and tail exclude each other")
	case (opt.Head > 0 || opt.Tail > 0) && window:
		field := "head"
		if opt.Tail > 0 {
			field = "tail"
		}
		return "", invalid(op, p, field, field+" excludes offset and limit")
	case opt.Bytes && (window || opt.Head > 0 || opt.Tail > 0):
		return "", invalid(op, p, "byte_offset", "byte_offset excludes offset, limit, head and tail")
	case enc != EncodingUTF8 && (window || opt.Head > 0 || opt.Tail > 0):
		return "", invalid(op, p, "encoding", "line windows (offset, limit, head, tail) need encoding \"utf-8\"")
	}
	return enc, nil
}

// handle is a regular file open for reading: an *os.File, or on Unix a
// bare descriptor (see openDirect).
type handle interface {
	io.Reader
	io.ReaderAt
	io.Closer
}

// openRead resolves p and opens the regular file it names for reading. A
// file directly in a root is opened on a bare descriptor when it can be
// (openDirect); anything else, and any failure there, goes through
// openRegular.
func (f *FS) openRead(op, p string) (target, handle, fs.FileInfo, error) {
	t, err := f.resolve(op, p)
	if err != nil {
		return target{}, nil, nil, err
	}
	if h, fi, ok := openDirect(t.root, t.rel); ok {
		return t, h, fi, nil
	}
	file, fi, err := openRegular(op, t, os.O_RDONLY)
	if err != nil {
		return t, nil, nil, err
	}
	return t, file, fi, nil
}

// openRegular opens t for reading or writing only if it is a regular file.
// The Stat before opening keeps us from opening devices at all (opening can
// have side effects); the Stat after, on the open descriptor, is the check
// that counts, since the path may have been swapped in between.
func openRegular(op string, t target, flag int) (*os.File, fs.FileInfo, error) {
	fi, err := t.root.r.Stat(t.rel)
	if err != nil {
		return nil, nil, wrap(op, t.given, err)
	}
	if err := regularOnly(op, t.given, fi); err != nil {
		return nil, nil, err
	}
	file, err := t.root.r.OpenFile(t.rel, flag|openNoBlock, 0)
	if err != nil {
		return nil, nil, wrap(op, t.given, err)
	}
	fi, err = file.Stat()
	if err == nil {
		err = regularOnly(op, t.given, fi)
	}
	if err != nil {
		file.Close()
		return nil, nil, wrap(op, t.given, err)
	}
	return file, fi, nil
}

func regularOnly(op, p string, fi fs.FileInfo) error {
	switch m := fi.Mode(); {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return invalid(op, p, "path", quote(p)+" is a directory, not a file")
	default:
		return invalid(op, p, "path", quote(p)+" is a "+typeName(m)+", not a regular file")
	}
}

// typeName describes a non-regular mode for messages.
func typeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe (fifo)"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// readBytes returns the bytes from off up to capBytes of them, encoded.
// In utf-8 a character cut at either end is left out, so that the next
// window, starting at ByteEnd, begins on a character.
func readBytes(file io.ReaderAt, size, off, capBytes int64, enc string, res *ReadResult) error {
	if off > size {
		return &Error{Code: mcperr.Validation, Field: "byte_offset",
			Msg: "byte_offset " + strconv.FormatInt(off, 10) + " is past the end of the file (" + strconv.FormatInt(size, 10) + " bytes)"}
	}
	// The file may grow after Stat: read what is there now, up to the cap.
	data, err := readUpTo(io.NewSectionReader(file, off, capBytes+1), min(size-off, capBytes)+1, capBytes+1)
	if err != nil {
		return err
	}
	if int64(len(data)) > capBytes {
		data, res.Truncated = data[:capBytes], true
	}
	start := off
	if enc == EncodingUTF8 {
		for i := 0; i < utf8.UTFMax-1 && len(data) > 0 && !utf8.RuneStart(data[0]); i++ {
			data, start = data[1:], start+1
		}
		if res.Truncated {
			data = trimPartialRune(data)
		}
	}
	res.ByteStart, res.ByteEnd = start, start+int64(len(data))
	switch enc {
	case EncodingBase64:
		res.Content = base64.StdEncoding.EncodeToString(data)
	case EncodingHex:
		res.Content = hex.EncodeToString(data)
	default:
		res.Content = string(data)
	}
	return nil
}

// countLines counts lines the way editors number them: a final line without
// a newline still counts, a trailing newline does not start another.
func countLines(b []byte) int {
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// readForward streams lines first..first+limit-1 (limit 0: to EOF), keeping
// at most capBytes. Only whole lines are kept unless the first one alone is
// over the cap, in which case its head is returned.
func readForward(r io.Reader, size int64, first, limit int, capBytes int64, res *ReadResult) error {
	if size <= wholeUpTo {
		return readForwardWhole(r, size, first, limit, capBytes, res)
	}
	br := bufio.NewReaderSize(r, readBufSize)
	countAll := size <= countLinesUpTo
	var (
		buf         []byte
		line        int // number of the line the current chunk belongs to
		atLineStart = true
		lineStart   int   // offset in buf where the current line began
		pos         int64 // file offset of the chunk
		linePos     int64 // file offset of the current line
		collecting  = true
		start, end  int
		total       = -1
	)
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			if atLineStart {
				line++
				lineStart, linePos = len(buf), pos
			}
			atLineStart = chunk[len(chunk)-1] == '\n'
			inWindow := line >= first && (limit == 0 || line < first+limit)
			if collecting && inWindow {
				if start == 0 {
					start, res.ByteStart = line, linePos
				}
				if room := capBytes - int64(len(buf)); int64(len(chunk)) > room {
					res.Truncated, collecting = true, false
					if lineStart > 0 {
						buf, end = buf[:lineStart], line-1
					} else {
						buf, end = trimPartialRune(append(buf, chunk[:room]...)), line
					}
				} else {
					buf, end = append(buf, chunk...), line
				}
			} else if line > first && !inWindow {
				collecting = false
			}
			pos += int64(len(chunk))
			if !collecting && !countAll {
				break
			}
		}
		if err == io.EOF {
			total = line
			break
		}
		if err != nil && err != bufio.ErrBufferFull {
			return err
		}
	}
	if start == 0 && first > 1 && total >= 0 && first > total {
		return &Error{Code: mcperr.Validation, Field: "offset",
			Msg: "offset " + strconv.Itoa(first) + " is past the end of the file (" + strconv.Itoa(total) + " lines)"}
	}
	res.Content = string(buf)
	res.ByteEnd = res.ByteStart + int64(len(buf))
	res.Lines = &LineRange{Start: start, End: end, Total: total}
	if end == 0 {
		res.Lines.Start = 0
	}
	return nil
}

// wholeUpTo is the largest file readForward reads whole into memory, in one
// read, and windows there; larger files are streamed line by line. A
// variable so tests can run the same cases through both paths.
var wholeUpTo int64 = readBufSize

// readForwardWhole is readForward for a small file: one buffer of the
// file's size, one read, the window found in memory and returned without a
// copy. Per call a streamed read of 1 KiB allocated a reader, a growing
// line buffer and the string, and read once more to see the end; that
// garbage was most of what file_read cost the collector. What the file holds
// now, up to the size Stat saw, is what is read: a file that grows meanwhile
// is read up to that size, one that shrinks up to its end.
func readForwardWhole(r io.Reader, size int64, first, limit int, capBytes int64, res *ReadResult) error {
	data := make([]byte, size)
	n, err := io.ReadFull(r, data)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return err
	}
	data = data[:n]
	var (
		line       int
		start, end int
		from, to   int // the window's bytes in data
		pos        int
	)
	for pos < len(data) && (limit == 0 || line < first+limit-1) {
		next := len(data)
		if i := bytes.IndexByte(data[pos:], '\n'); i >= 0 {
			next = pos + i + 1
		}
		line++
		if line >= first {
			if start == 0 {
				start, from, to = line, pos, pos
			}
			if int64(next-from) > capBytes {
				res.Truncated = true
				if to == from {
					// The first line alone is over the cap: its head.
					to, end = from+len(trimPartialRune(data[from:from+int(capBytes)])), line
				}
				break
			}
			to, end = next, line
		}
		pos = next
	}
	total := -1
	if pos == len(data) || int64(len(data)) <= countLinesUpTo {
		total = countLines(data)
	}
	if start == 0 && first > 1 && total >= 0 && first > total {
		return &Error{Code: mcperr.Validation, Field: "offset",
			Msg: "offset " + strconv.Itoa(first) + " is past the end of the file (" + strconv.Itoa(total) + " lines)"}
	}
	if to > from {
		// data is not written again: the string shares its bytes.
		res.Content = unsafe.String(&data[from], to-from)
	}
	res.ByteStart = int64(from)
	res.ByteEnd = int64(to)
	res.Lines = &LineRange{Start: start, End: end, Total: total}
	if end == 0 {
		res.Lines.Start = 0
	}
	return nil
}

// trimPartialRune drops a UTF-8 sequence cut off at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// readTail returns the last n lines, reading backwards from the end so a
// huge log costs no more than the bytes returned (plus one counting pass
// when the file is small enough for the total to be cheap).
func readTail(file io.ReaderAt, size int64, n int, capBytes int64, res *ReadResult) error {
	var (
		chunks    [][]byte // read backwards; chunks[0] is the last one read
		have      int64    // bytes gathered, ending at size
		found     = false
		lineStart int64 // absolute offset where the n-th last line begins
	)
	for have < size && have <= capBytes && !found {
		want := min(int64(readBufSize), size-have, capBytes+1-have)
		off := size - have - want
		chunk := make([]byte, want)
		if _, err := file.ReadAt(chunk, off); err != nil {
			return err
		}
		chunks = append(chunks, chunk)
		have += want
		for i := len(chunk) - 1; i >= 0; i-- {
			abs := off + int64(i)
			// A newline at the very end terminates the last line; every other
			// one ends a line before the window or inside it.
			if chunk[i] == '\n' && abs != size-1 {
				n--
				if n == 0 {
					lineStart, found = abs+1, true
					break
				}
			}
		}
	}
	data := make([]byte, 0, have)
	for i := len(chunks) - 1; i >= 0; i-- {
		data = append(data, chunks[i]...)
	}
	if found {
		data = data[lineStart-(size-have):]
	}
	if int64(len(data)) > capBytes {
		res.Truncated = true
		cut := int64(len(data)) - capBytes
		switch idx := bytes.IndexByte(data[cut-1:len(data)-1], '\n'); {
		case idx >= 0:
			// Start at the first whole line that fits.
			data = data[cut+int64(idx):]
		default:
			// The last line alone is over the cap: keep its end.
			data = data[cut:]
			for len(data) > 0 && !utf8.RuneStart(data[0]) {
				data = data[1:]
			}
		}
	}
	got := countLines(data)
	res.Content = string(data)
	res.ByteStart, res.ByteEnd = size-int64(len(data)), size
	lr := &LineRange{Start: -got, End: -1, Total: -1}
	if size <= countLinesUpTo {
		total, err := countReader(io.NewSectionReader(file, 0, size))
		if err != nil {
			return err
		}
		lr.Total, lr.Start, lr.End = total, total-got+1, total
	}
	if got == 0 {
		lr.Start, lr.End = 0, 0
	}
	res.Lines = lr
	return nil
}

func countReader(r io.Reader) (int, error) {
	buf := make([]byte, readBufSize)
	n, last := 0, byte('\n')
	for {
		k, err := r.Read(buf)
		if k > 0 {
			n += bytes.Count(buf[:k], []byte{'\n'})
			last = buf[k-1]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	if last != '\n' {
		n++
	}
	return n, nil
}

// readUpTo reads r to its end or to limit bytes, starting with a buffer of
// hint bytes.
func readUpTo(r io.Reader, hint, limit int64) ([]byte, error) {
	buf := make([]byte, 0, min(max(hint, 512), limit))
	for int64(len(buf)) < limit {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		room := min(int64(cap(buf)), limit)
		n, err := r.Read(buf[len(buf):room])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return buf, nil
}
