package airports

import (
	"bytes"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// foldSpecial spells the letters that Unicode does not decompose into a base letter and a mark,
// the way a person typing without them would.
var foldSpecial = map[rune]string{
	'ß': "ss", 'ẞ': "ss",
	'æ': "ae", 'Æ': "ae",
	'œ': "oe", 'Œ': "oe",
	'ø': "o", 'Ø': "o",
	'ł': "l", 'Ł': "l",
	'đ': "d", 'Đ': "d", 'ð': "d", 'Ð': "d",
	'þ': "th", 'Þ': "th",
	'ı': "i",
	'ħ': "h", 'Ħ': "h",
}

// folder builds the searchable form of a text: letters lower-cased and stripped of their accents,
// digits kept, apostrophes dropped ("Martha's" → "marthas"), and every other run of characters
// (spaces, hyphens, slashes, brackets…) turned into one space, with none at either end. Names and
// queries go through the same folder, so "Zurich", "ZÜRICH" and "zürich" all meet.
type folder struct {
	buf     []byte
	start   int  // where the current text began in buf
	pending bool // a separator was seen since the last letter
}

// fold appends the folded form of s to f.buf and returns it.
func (f *folder) fold(s string) []byte {
	f.start, f.pending = len(f.buf), false
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			i++
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
				f.emit(c)
			case 'A' <= c && c <= 'Z':
				f.emit(c + 'a' - 'A')
			case c == '\'' || c == '`':
				// dropped: part of the word, not a break
			default:
				f.pending = true
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		p := norm.NFD.PropertiesString(s[i:])
		i += n
		if sp, ok := foldSpecial[r]; ok {
			for j := 0; j < len(sp); j++ {
				f.emit(sp[j])
			}
			continue
		}
		if d := p.Decomposition(); d != nil {
			// A precomposed letter: keep its base letter(s), drop the marks.
			for len(d) > 0 {
				dr, dn := utf8.DecodeRune(d)
				d = d[dn:]
				f.rune(dr)
			}
			continue
		}
		f.rune(r)
	}
	f.expand()
	return f.buf[f.start:]
}

// abbreviations are read as the words they stand for, in names and queries alike, so that
// "St Barth" meets "Saint Barthélemy" and "Mt Pleasant" meets "Mount Pleasant".
var abbreviations = map[string]string{"st": "saint", "ste": "sainte", "mt": "mount", "ft": "fort", "intl": "international"}

// expand replaces the abbreviations among the words folded since start.
func (f *folder) expand() {
	text := f.buf[f.start:]
	found := false
	for w := range bytes.SplitSeq(text, []byte{' '}) {
		if _, ok := abbreviations[string(w)]; ok {
			found = true
			break
		}
	}
	if !found {
		return
	}
	words := bytes.Split(bytes.Clone(text), []byte{' '})
	f.buf = f.buf[:f.start]
	for i, w := range words {
		if i > 0 {
			f.buf = append(f.buf, ' ')
		}
		if long, ok := abbreviations[string(w)]; ok {
			f.buf = append(f.buf, long...)
		} else {
			f.buf = append(f.buf, w...)
		}
	}
}

func (f *folder) rune(r rune) {
	switch {
	case r < utf8.RuneSelf:
		switch c := byte(r); {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			f.emit(c)
		case 'A' <= c && c <= 'Z':
			f.emit(c + 'a' - 'A')
		default:
			f.pending = true
		}
	case unicode.Is(unicode.Mn, r), r == '’', r == 'ʼ', r == 'ʻ', r == '´':
		// accents typed on their own, and apostrophes, are not separators
	case unicode.IsLetter(r) || unicode.IsDigit(r):
		if f.pending && len(f.buf) > f.start {
			f.buf = append(f.buf, ' ')
		}
		f.pending = false
		f.buf = utf8.AppendRune(f.buf, unicode.ToLower(r))
	default:
		f.pending = true
	}
}

func (f *folder) emit(c byte) {
	if f.pending && len(f.buf) > f.start {
		f.buf = append(f.buf, ' ')
	}
	f.pending = false
	f.buf = append(f.buf, c)
}

// fold returns the form in which Search compares names, cities and queries.
func fold(s string) string {
	var f folder
	return string(f.fold(s))
}
