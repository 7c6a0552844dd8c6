package database

import (
	"database/sql/driver"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"time"
)

// timeStyle says how a time.Time value is written.
type timeStyle int

const (
	timeZoned timeStyle = iota // timestamptz: RFC 3339 in UTC
	timeLocal                  // timestamp without time zone: no offset
	timeDate                   // date: YYYY-MM-DD
)

const (
	layoutLocal = "2006-01-02T15:04:05.999999999"
	layoutDate  = "2006-01-02"
)

// jsonValue converts a value decoded by a driver into one that encodes as
// the JSON documented on Result. It never fails: a value of an unforeseen
// type becomes its text.
func jsonValue(v any, ts timeStyle) any {
	switch x := v.(type) {
	case nil, bool, string, json.RawMessage,
		int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return x
	case float32:
		return jsonFloat(float64(x))
	case float64:
		return jsonFloat(x)
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case time.Time:
		switch ts {
		case timeLocal:
			return x.Format(layoutLocal)
		case timeDate:
			return x.Format(layoutDate)
		}
		return x.UTC().Format(time.RFC3339Nano)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonValue(e, ts)
		}
		return out
	case [16]byte: // uuid, should it arrive in binary
		return fmt.Sprintf("%x-%x-%x-%x-%x", x[0:4], x[4:6], x[6:8], x[8:10], x[10:16])
	case netip.Prefix:
		return x.String()
	case fmt.Stringer: // pgtype.InfinityModifier ("infinity"), and the like
		return x.String()
	case driver.Valuer: // pgtype.Numeric, Interval, Time: their text form
		if dv, err := x.Value(); err == nil {
			if _, again := dv.(driver.Valuer); !again {
				return jsonValue(dv, ts)
			}
		}
	}
	return fmt.Sprint(v)
}

func jsonFloat(f float64) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return f
}
