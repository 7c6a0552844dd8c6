package database

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// TestAppendPGMatchesJSON: the fast encoder writes exactly what decoding
// with pgx and encoding with encoding/json writes.
func TestAppendPGMatchesJSON(t *testing.T) {
	m := pgtype.NewMap()
	ts := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cases := []struct {
		oid    uint32
		values []any
	}{
		{pgtype.BoolOID, []any{true, false}},
		{pgtype.Int2OID, []any{int16(0), int16(-32768), int16(32767)}},
		{pgtype.Int4OID, []any{int32(0), int32(math.MinInt32), int32(math.MaxInt32)}},
		{pgtype.Int8OID, []any{int64(math.MinInt64), int64(math.MaxInt64), int64(9007199254740993)}},
		{pgtype.OIDOID, []any{uint32(0), uint32(math.MaxUint32)}},
		{pgtype.Float8OID, []any{0.0, math.Copysign(0, -1), 1.5, 1e21, 1e20, 1e-6, 1e-7, 123456789.123, -2.5e-300,
			math.MaxFloat64, math.SmallestNonzeroFloat64, math.NaN(), math.Inf(1), math.Inf(-1)}},
		{pgtype.Float4OID, []any{float32(1.1), float32(-3.4e38), float32(1e-7), float32(math.Inf(-1))}},
		{pgtype.TimestamptzOID, []any{ts("2024-01-02T01:04:05.123456Z"), ts("0001-01-01T00:00:00Z"), ts("9999-12-31T23:59:59.999999Z"),
			ts("1969-12-31T23:59:59.5Z"), ts("1999-12-31T23:59:59.000001Z")}},
		{pgtype.TimestampOID, []any{ts("2024-01-02T03:04:05Z"), ts("1500-06-30T12:00:00.25Z")}},
		{pgtype.DateOID, []any{ts("2024-01-02T00:00:00Z"), ts("1000-02-28T00:00:00Z"), ts("2400-12-31T00:00:00Z")}},
	}
	for _, c := range cases {
		for _, v := range c.values {
			raw, err := m.Encode(c.oid, pgtype.BinaryFormatCode, v, nil)
			if err != nil {
				t.Fatalf("encoding %v as oid %d: %v", v, c.oid, err)
			}
			f := pgconn.FieldDescription{DataTypeOID: c.oid, Format: pgtype.BinaryFormatCode}
			compare(t, m, f, raw)
		}
	}
	for _, s := range []string{"", "plain", `quote " backslash \ slash /`, "<script>&amp;</script>", "tab\tnl\ncr\r\x00\x1f\x7f",
		"é ü 中文 🎉", "\u2028\u2029", "bad \xff\xfe utf8 \xc3", "\b\f"} {
		for _, oid := range []uint32{pgtype.TextOID, pgtype.VarcharOID, pgtype.NumericOID, pgtype.NameOID} {
			compare(t, m, pgconn.FieldDescription{DataTypeOID: oid, Format: pgtype.TextFormatCode}, []byte(s))
		}
	}
	compare(t, m, pgconn.FieldDescription{DataTypeOID: pgtype.TextOID}, nil)
	compare(t, m, pgconn.FieldDescription{DataTypeOID: voidOID}, []byte(""))

	// No fast form: infinities, unusual lengths, other types.
	for _, tc := range []struct {
		oid    uint32
		format int16
		raw    []byte
	}{
		{pgtype.TimestamptzOID, pgtype.BinaryFormatCode, []byte{0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{pgtype.DateOID, pgtype.BinaryFormatCode, []byte{0x80, 0, 0, 0}},
		{pgtype.Int4OID, pgtype.BinaryFormatCode, []byte{1, 2}},
		{pgtype.JSONBOID, pgtype.TextFormatCode, []byte(`{"a": 1}`)},
		{pgtype.ByteaOID, pgtype.BinaryFormatCode, []byte{1}},
	} {
		if _, ok := appendPG(nil, pgconn.FieldDescription{DataTypeOID: tc.oid, Format: tc.format}, tc.raw); ok {
			t.Errorf("oid %d %x: took the fast path", tc.oid, tc.raw)
		}
	}
}

func compare(t *testing.T, m *pgtype.Map, f pgconn.FieldDescription, raw []byte) {
	t.Helper()
	fast, ok := appendPG(nil, f, raw)
	if !ok {
		t.Errorf("oid %d %q: no fast form", f.DataTypeOID, raw)
		return
	}
	v, err := pgValue(m, f, raw)
	if err != nil {
		t.Fatal(err)
	}
	slow, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if string(fast) != string(slow) {
		t.Errorf("oid %d %q: fast %s, encoding/json %s", f.DataTypeOID, raw, fast, slow)
	}
}
