package database

import (
	"encoding/binary"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// The row encoder writes the JSON of the common PostgreSQL values straight
// from their wire form, without a decoded Go value or reflection; every
// other value goes through pgValue and encoding/json. Both give the same
// bytes (see TestAppendPGMatchesJSON).

// pgEpoch is 2000-01-01 UTC, the zero of PostgreSQL's binary dates and
// timestamps; pgEpochUnix is the same in seconds since 1970.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

const pgEpochUnix = 946684800

// appendPG appends the JSON of one value; ok is false when the value has
// no fast form and must take the general path.
func appendPG(buf []byte, f pgconn.FieldDescription, raw []byte) (_ []byte, ok bool) {
	if raw == nil {
		return append(buf, "null"...), true
	}
	if f.Format == pgtype.TextFormatCode {
		switch f.DataTypeOID {
		case pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID, pgtype.NameOID, pgtype.NumericOID, pgtype.UUIDOID:
			return appendJSONString(buf, raw), true
		case voidOID:
			return append(buf, "null"...), true
		}
		return buf, false
	}
	switch f.DataTypeOID {
	case pgtype.BoolOID:
		if len(raw) == 1 {
			return strconv.AppendBool(buf, raw[0] != 0), true
		}
	case pgtype.Int2OID:
		if len(raw) == 2 {
			return strconv.AppendInt(buf, int64(int16(binary.BigEndian.Uint16(raw))), 10), true
		}
	case pgtype.Int4OID:
		if len(raw) == 4 {
			return strconv.AppendInt(buf, int64(int32(binary.BigEndian.Uint32(raw))), 10), true
		}
	case pgtype.Int8OID:
		if len(raw) == 8 {
			return strconv.AppendInt(buf, int64(binary.BigEndian.Uint64(raw)), 10), true
		}
	case pgtype.OIDOID:
		if len(raw) == 4 {
			return strconv.AppendUint(buf, uint64(binary.BigEndian.Uint32(raw)), 10), true
		}
	case pgtype.Float8OID:
		if len(raw) == 8 {
			return appendJSONFloat(buf, math.Float64frombits(binary.BigEndian.Uint64(raw))), true
		}
	case pgtype.Float4OID:
		if len(raw) == 4 {
			return appendJSONFloat(buf, float64(math.Float32frombits(binary.BigEndian.Uint32(raw)))), true
		}
	case pgtype.TimestamptzOID, pgtype.TimestampOID:
		if len(raw) == 8 {
			us := int64(binary.BigEndian.Uint64(raw))
			if us == math.MaxInt64 || us == math.MinInt64 {
				return buf, false // infinity
			}
			t := time.Unix(pgEpochUnix+us/1_000_000, us%1_000_000*1000).UTC()
			layout := time.RFC3339Nano
			if f.DataTypeOID == pgtype.TimestampOID {
				layout = layoutLocal
			}
			buf = append(buf, '"')
			return append(t.AppendFormat(buf, layout), '"'), true
		}
	case pgtype.DateOID:
		if len(raw) == 4 {
			days := int32(binary.BigEndian.Uint32(raw))
			if days == math.MaxInt32 || days == math.MinInt32 {
				return buf, false // infinity
			}
			buf = append(buf, '"')
			return append(pgEpoch.AddDate(0, 0, int(days)).AppendFormat(buf, layoutDate), '"'), true
		}
	}
	return buf, false
}

// appendJSONFloat writes a float as encoding/json does (NaN and the
// infinities as the strings Result documents).
func appendJSONFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Infinity"`...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// 1e-07 → 1e-7, as encoding/json writes it.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// appendJSONString writes s as a JSON string exactly as encoding/json does:
// <, > and & escaped for HTML, invalid UTF-8 replaced by U+FFFD, U+2028 and
// U+2029 escaped.
func appendJSONString(b []byte, s []byte) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
