package database

import (
	"database/sql/driver"
	"encoding/json"
	"math"
	"math/big"
	"net/netip"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"modernc.org/sqlite"
)

func TestConfigDefaults(t *testing.T) {
	c := Config{}.withDefaults()
	if c.DefaultLimit != 100 || c.MaxLimit != 1000 || c.StatementTimeout != 30*time.Second ||
		c.MaxResultBytes != 5<<20 || c.MaxConns != 8 {
		t.Errorf("defaults: %+v", c)
	}
	c = Config{DefaultLimit: 500, MaxLimit: 50, StatementTimeout: time.Second, MaxResultBytes: 10, MaxConns: 1}.withDefaults()
	if c.DefaultLimit != 50 || c.MaxLimit != 50 || c.StatementTimeout != time.Second || c.MaxResultBytes != 10 || c.MaxConns != 1 {
		t.Errorf("explicit: %+v", c)
	}
}

func TestJSONValue(t *testing.T) {
	ts := time.Date(2024, 1, 2, 3, 4, 5, 600_000_000, time.FixedZone("x", 2*3600))
	for _, tc := range []struct {
		in    any
		style timeStyle
		want  string
	}{
		{nil, 0, `null`},
		{true, 0, `true`},
		{int16(-3), 0, `-3`},
		{int64(math.MaxInt64), 0, `9223372036854775807`},
		{uint32(7), 0, `7`},
		{float32(1.5), 0, `1.5`},
		{math.NaN(), 0, `"NaN"`},
		{math.Inf(1), 0, `"Infinity"`},
		{math.Inf(-1), 0, `"-Infinity"`},
		{[]byte{0, 255}, 0, `"AP8="`},
		{"é\n", 0, `"é\n"`},
		{json.RawMessage(`{"a":1}`), 0, `{"a":1}`},
		{ts, timeZoned, `"2024-01-02T01:04:05.6Z"`},
		{ts, timeLocal, `"2024-01-02T03:04:05.6"`},
		{ts, timeDate, `"2024-01-02"`},
		{[]any{int32(1), nil, math.NaN()}, 0, `[1,null,"NaN"]`},
		{[16]byte{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11}, 0,
			`"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"`},
		{netip.MustParsePrefix("10.0.0.0/8"), 0, `"10.0.0.0/8"`},
		{pgtype.Infinity, timeZoned, `"infinity"`},
		{pgtype.Numeric{Int: bigInt(t, "1234567890123456789012345"), Exp: -3, Valid: true}, 0, `"1234567890123456789012.345"`},
		{struct{ A int }{1}, 0, `"{1}"`},
	} {
		raw, err := json.Marshal(jsonValue(tc.in, tc.style))
		if err != nil || string(raw) != tc.want {
			t.Errorf("jsonValue(%#v) = %s, %v; want %s", tc.in, raw, err, tc.want)
		}
	}
}

func TestNest(t *testing.T) {
	elems := []any{int32(1), int32(2), int32(3), int32(4), int32(5), int32(6)}
	for _, tc := range []struct {
		dims []pgtype.ArrayDimension
		want string
	}{
		{nil, `[1,2,3,4,5,6]`},
		{[]pgtype.ArrayDimension{{Length: 6}}, `[1,2,3,4,5,6]`},
		{[]pgtype.ArrayDimension{{Length: 2}, {Length: 3}}, `[[1,2,3],[4,5,6]]`},
		{[]pgtype.ArrayDimension{{Length: 3}, {Length: 2}}, `[[1,2],[3,4],[5,6]]`},
		{[]pgtype.ArrayDimension{{Length: 1}, {Length: 2}, {Length: 3}}, `[[[1,2,3],[4,5,6]]]`},
	} {
		if got := mustJSON(t, nest(elems, tc.dims, 0)); got != tc.want {
			t.Errorf("nest %v = %s, want %s", tc.dims, got, tc.want)
		}
	}
	if got := mustJSON(t, nest(nil, []pgtype.ArrayDimension{{Length: 0}, {Length: 0}}, 0)); got != `[]` {
		t.Errorf("empty = %s", got)
	}
}

func TestParams(t *testing.T) {
	for _, tc := range []struct {
		in       any
		pg       string
		pgNull   bool
		sqlite   any
		sqliteTy string
	}{
		{nil, "", true, nil, "<nil>"},
		{true, "true", false, true, "bool"},
		{"x'y", "x'y", false, "x'y", "string"},
		{json.Number("42"), "42", false, int64(42), "int64"},
		{json.Number("-1.5e3"), "-1.5e3", false, -1500.0, "float64"},
		{json.Number("123456789012345678901234567890"), "123456789012345678901234567890", false,
			"123456789012345678901234567890", "string"},
		{2.5, "2.5", false, 2.5, "float64"},
	} {
		got := pgText(tc.in)
		if (got == nil) != tc.pgNull || string(got) != tc.pg {
			t.Errorf("pgText(%v) = %q", tc.in, got)
		}
		if s := sqliteParam(tc.in); s != tc.sqlite {
			t.Errorf("sqliteParam(%v) = %#v, want %#v", tc.in, s, tc.sqlite)
		}
	}
}

func TestBaseAuthorizer(t *testing.T) {
	ok, deny := sqlite.AuthorizerOK, sqlite.AuthorizerDeny
	for _, tc := range []struct {
		action     sqlite.AuthorizerActionCode
		arg1, arg2 string
		want       sqlite.AuthorizerReturnCode
	}{
		{sqlite.AuthSelect, "", "", ok},
		{sqlite.AuthRead, "t", "c", ok},
		{sqlite.AuthRecursive, "", "", ok},
		{sqlite.AuthFunction, "", "lower", ok},
		{sqlite.AuthFunction, "", "load_extension", deny},
		{sqlite.AuthFunction, "", "LOAD_EXTENSION", deny},
		{sqlite.AuthPragma, "table_info", "t", ok},
		{sqlite.AuthPragma, "TABLE_INFO", "t", ok},
		{sqlite.AuthPragma, "user_version", "", ok},
		{sqlite.AuthPragma, "user_version", "5", deny},
		{sqlite.AuthPragma, "query_only", "0", deny},
		{sqlite.AuthPragma, "writable_schema", "", deny},
		{sqlite.AuthInsert, "t", "", deny},
		{sqlite.AuthUpdate, "t", "c", deny},
		{sqlite.AuthDelete, "t", "", deny},
		{sqlite.AuthAttach, "x.db", "", deny},
		{sqlite.AuthDetach, "main", "", deny},
		{sqlite.AuthTransaction, "BEGIN", "", deny},
		{sqlite.AuthSavepoint, "BEGIN", "a", deny},
		{sqlite.AuthCreateTempTable, "x", "", deny},
		{sqlite.AuthAnalyze, "t", "", deny},
		{sqlite.AuthAlterTable, "main", "t", deny},
	} {
		if got := baseAuthorizer(tc.action, tc.arg1, tc.arg2, "main", ""); got != tc.want {
			t.Errorf("action %d (%q, %q) = %d, want %d", tc.action, tc.arg1, tc.arg2, got, tc.want)
		}
	}
}

func TestPrimaryKey(t *testing.T) {
	pk := primaryKey([]ColumnInfo{{Name: "a", PrimaryKey: 2}, {Name: "b"}, {Name: "c", PrimaryKey: 1}})
	if len(pk) != 2 || pk[0] != "c" || pk[1] != "a" {
		t.Errorf("primaryKey = %v", pk)
	}
	if len(primaryKey(nil)) != 0 {
		t.Error("no columns, a key")
	}
}

func TestWholeStatementRefusesOtherStatements(t *testing.T) {
	if _, err := wholeStatement(nil); err != errDriverChanged {
		t.Errorf("nil: %v", err)
	}
	type notAStmt struct{ driverStmt }
	if _, err := wholeStatement(&notAStmt{}); err != errDriverChanged {
		t.Errorf("foreign statement type: %v", err)
	}
}

// driverStmt is a driver.Stmt without the field wholeStatement reads.
type driverStmt struct{}

func (driverStmt) Close() error                               { return nil }
func (driverStmt) NumInput() int                              { return 0 }
func (driverStmt) Exec([]driver.Value) (driver.Result, error) { return nil, nil }
func (driverStmt) Query([]driver.Value) (driver.Rows, error)  { return nil, nil }

func bigInt(t *testing.T, s string) *big.Int {
	t.Helper()
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		t.Fatal(s)
	}
	return n
}
