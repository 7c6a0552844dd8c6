// Package postgrestfake is an HTTP fake of a Supabase project's REST API
// (PostgREST) for tests: it checks requests the way the real service does —
// the apikey and Authorization headers, the schema profile headers, the
// Prefer header, the query string by PostgREST's grammar (operators,
// quoted values, in.(…), or=(…)/and=(…) trees, order, limit, offset,
// on_conflict, columns), and Supabase's refusal of an update or delete
// without filters — then runs the request on a real backend and answers as
// PostgREST does: rows as JSON, Content-Range with counts, errors as
// {code, message, details, hint} with PostgREST's statuses.
package postgrestfake

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/backend"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/query"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// Recorded is a request as the fake received it.
type Recorded struct {
	Method   string
	Path     string
	RawQuery string
	Header   http.Header
	Body     []byte
}

// Server is the fake.
type Server struct {
	backend backend.Backend
	key     string
	bearer  string // expected Authorization bearer; "" when none may be sent
	schemas []string

	mu       sync.Mutex
	requests []Recorded
}

// New serves b with key as the project's API key. jwt, when set, is the
// bearer token expected instead of a JWT-shaped key.
func New(b backend.Backend, key, jwt string, schemas []string) *Server {
	bearer := jwt
	if bearer == "" && strings.HasPrefix(key, "eyJ") {
		bearer = key
	}
	if len(schemas) == 0 {
		schemas = []string{"public"}
	}
	return &Server{backend: b, key: key, bearer: bearer, schemas: schemas}
}

// Requests returns what was received so far.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Last returns the last request received.
func (s *Server) Last() Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		return Recorded{}
	}
	return s.requests[len(s.requests)-1]
}

type pgrstError struct {
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Details *string `json:"details"`
	Hint    *string `json:"hint"`
}

func str(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, status int, code, msg, details, hint string) {
	writeJSON(w, status, pgrstError{Code: code, Message: msg, Details: str(details), Hint: str(hint)})
}

// statusOf is PostgREST's HTTP status for an error code.
func statusOf(code string) int {
	switch {
	case code == "23505" || code == "23503":
		return http.StatusConflict
	case code == "42P01" || code == "PGRST205" || code == "PGRST202":
		return http.StatusNotFound
	case code == "42501":
		return http.StatusForbidden
	case code == "25006":
		return http.StatusMethodNotAllowed
	case code == "57014":
		return http.StatusInternalServerError
	case code == "40001" || code == "40P01":
		return http.StatusServiceUnavailable
	}
	return http.StatusBadRequest
}

// failErr answers with the error of a backend call.
func failErr(w http.ResponseWriter, err error) {
	var de *backend.DBError
	if errors.As(err, &de) {
		fail(w, statusOf(de.State), de.State, de.Message, de.Details, de.Hint)
		return
	}
	var pe *parseErr
	if errors.As(err, &pe) {
		fail(w, http.StatusBadRequest, "PGRST100", pe.msg, "", "")
		return
	}
	me := mcperr.Wrap(err)
	switch me.Code {
	case mcperr.NotFound:
		fail(w, http.StatusNotFound, "PGRST205", me.Message, "", "")
	case mcperr.Validation:
		code := "PGRST100"
		if strings.Contains(me.Message, "has no column") {
			code = "42703"
		}
		fail(w, http.StatusBadRequest, code, me.Message, "", "")
	case mcperr.PermissionDeny:
		fail(w, http.StatusForbidden, "42501", me.Message, "", "")
	default:
		fail(w, http.StatusInternalServerError, "XX000", me.Message, "", "")
	}
}

// prefs are the parsed Prefer header.
type prefs struct {
	representation bool
	count          bool
	resolution     string
	missingDefault bool
	strict         bool
	maxAffected    int
}

func parsePrefer(h http.Header) (prefs, error) {
	var p prefs
	var unknown []string
	for _, line := range h.Values("Prefer") {
		for _, part := range strings.Split(line, ",") {
			part = strings.TrimSpace(part)
			k, v, _ := strings.Cut(part, "=")
			switch {
			case part == "":
			case k == "return" && (v == "representation" || v == "minimal" || v == "headers-only"):
				p.representation = v == "representation"
			case k == "count" && (v == "exact" || v == "planned" || v == "estimated"):
				p.count = true
			case k == "resolution" && (v == "merge-duplicates" || v == "ignore-duplicates"):
				p.resolution = v
			case k == "missing" && (v == "default" || v == "null"):
				p.missingDefault = v == "default"
			case k == "handling" && (v == "strict" || v == "lenient"):
				p.strict = v == "strict"
			case k == "max-affected":
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 {
					unknown = append(unknown, part)
					continue
				}
				p.maxAffected = n
			default:
				unknown = append(unknown, part)
			}
		}
	}
	if p.strict && len(unknown) > 0 {
		return p, fmt.Errorf("invalid preferences given with handling=strict: %s", strings.Join(unknown, ", "))
	}
	return p, nil
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	s.mu.Lock()
	s.requests = append(s.requests, Recorded{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
	s.mu.Unlock()

	if r.Header.Get("apikey") != s.key {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Invalid API key", "hint": "Double check your Supabase `anon` or `service_role` API key."})
		return
	}
	auth := r.Header.Get("Authorization")
	if (s.bearer == "" && auth != "") || (s.bearer != "" && auth != "Bearer "+s.bearer) {
		fail(w, http.StatusUnauthorized, "PGRST301", "JWT could not be decoded or is invalid", "", "")
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/rest/v1")
	if !ok {
		http.NotFound(w, r)
		return
	}
	profileHeader := "Content-Profile"
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		profileHeader = "Accept-Profile"
	}
	schema := s.schemas[0]
	if p := r.Header.Get(profileHeader); p != "" {
		if !slices.Contains(s.schemas, p) {
			fail(w, http.StatusNotAcceptable, "PGRST106", "The schema must be one of the following: "+strings.Join(s.schemas, ", "), "", "")
			return
		}
		schema = p
	}
	pr, err := parsePrefer(r.Header)
	if err != nil {
		fail(w, http.StatusBadRequest, "PGRST122", err.Error(), "", "")
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodDelete &&
		!strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		fail(w, http.StatusUnsupportedMediaType, "PGRST107", "the request body must be application/json", "", "")
		return
	}
	ctx := r.Context()
	switch {
	case rest == "/" || rest == "":
		s.openAPI(ctx, w, schema)
	case strings.HasPrefix(rest, "/rpc/"):
		s.rpc(ctx, w, r, schema, strings.TrimPrefix(rest, "/rpc/"), body)
	default:
		s.table(ctx, w, r, schema, strings.TrimPrefix(rest, "/"), body, pr)
	}
}

// params splits a raw query string as PostgREST does (+ is a space).
func params(raw string) ([][2]string, error) {
	var out [][2]string
	for _, part := range strings.Split(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		dk, err1 := url.QueryUnescape(k)
		dv, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			return nil, failf("malformed query string")
		}
		out = append(out, [2]string{dk, dv})
	}
	return out, nil
}

type request struct {
	items      []query.Item
	where      query.Group
	order      []query.Order
	limit      int
	offset     int
	onConflict []string
	columns    []string
}

func parseRequest(raw string) (*request, error) {
	ps, err := params(raw)
	if err != nil {
		return nil, err
	}
	req := &request{items: []query.Item{{Star: true}}}
	for _, kv := range ps {
		k, v := kv[0], kv[1]
		switch k {
		case "select":
			if req.items, err = query.ParseSelect("select", v); err != nil {
				return nil, failf("failed to parse select parameter (%s)", v)
			}
		case "order":
			if req.order, err = orderParam(v); err != nil {
				return nil, err
			}
		case "limit":
			if req.limit, err = nonNegative("limit", v); err != nil {
				return nil, err
			}
		case "offset":
			if req.offset, err = nonNegative("offset", v); err != nil {
				return nil, err
			}
		case "on_conflict":
			if req.onConflict, err = columnsParam(v); err != nil {
				return nil, err
			}
		case "columns":
			if req.columns, err = columnsParam(v); err != nil {
				return nil, err
			}
		case "or", "and", "not.or", "not.and":
			n, err := logicParam(k, v)
			if err != nil {
				return nil, err
			}
			req.where.Items = append(req.where.Items, n)
		default:
			c, err := filterParam(k, v)
			if err != nil {
				return nil, err
			}
			req.where.Items = append(req.where.Items, query.Node{Cond: c})
		}
	}
	return req, nil
}

func (s *Server) table(ctx context.Context, w http.ResponseWriter, r *http.Request, schema, table string, body []byte, pr prefs) {
	if !query.ValidIdent(table) {
		fail(w, http.StatusNotFound, "PGRST205", "Could not find the table '"+schema+"."+table+"' in the schema cache", "", "")
		return
	}
	req, err := parseRequest(r.URL.RawQuery)
	if err != nil {
		failErr(w, err)
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		q := &query.Select{Schema: schema, Table: table, Items: req.items, Where: req.where, Order: req.order, Offset: req.offset, Count: pr.count}
		if req.limit > 0 {
			// The backend reads one row more; PostgREST returns exactly limit.
			q.Limit = req.limit
		}
		res, err := s.backend.Select(ctx, q)
		if err != nil {
			failErr(w, err)
			return
		}
		total := "*"
		if res.Count != nil {
			total = strconv.FormatInt(*res.Count, 10)
		}
		cr := "*/" + total
		if res.RowCount > 0 {
			cr = fmt.Sprintf("%d-%d/%s", req.offset, req.offset+res.RowCount-1, total)
		}
		w.Header().Set("Content-Range", cr)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			_, _ = w.Write(backend.RowsJSON(res.Rows))
		}
	case http.MethodPost:
		rows, err := payloadRows(body, req.columns, pr.missingDefault)
		if err != nil {
			failErr(w, err)
			return
		}
		q := &query.Insert{Schema: schema, Table: table, Rows: rows, Returning: req.items}
		if pr.resolution != "" {
			q.OnConflict = req.onConflict
			q.IgnoreDuplicates = pr.resolution == "ignore-duplicates"
			if len(q.OnConflict) == 0 {
				failErr(w, failf("an upsert needs on_conflict in this fake"))
				return
			}
		}
		res, err := s.backend.Insert(ctx, q)
		respond(w, http.StatusCreated, res, err, pr)
	case http.MethodPatch, http.MethodDelete:
		if req.where.Empty() {
			// Supabase's safeupdate refuses both.
			verb := "UPDATE"
			if r.Method == http.MethodDelete {
				verb = "DELETE"
			}
			fail(w, http.StatusBadRequest, "21000", verb+" requires a WHERE clause", "", "")
			return
		}
		max := 0
		if pr.strict {
			max = pr.maxAffected
		}
		var res *backend.Result
		if r.Method == http.MethodPatch {
			set, err := query.ParseObject("body", body)
			if err != nil {
				failErr(w, failf("the body must be a JSON object"))
				return
			}
			res, err = s.backend.Update(ctx, &query.Update{Schema: schema, Table: table, Set: set, Where: req.where, Returning: req.items, MaxAffected: max})
			respond(w, http.StatusOK, res, err, pr)
			return
		}
		res, err = s.backend.Delete(ctx, &query.Delete{Schema: schema, Table: table, Where: req.where, Returning: req.items, MaxAffected: max})
		respond(w, http.StatusOK, res, err, pr)
	default:
		fail(w, http.StatusMethodNotAllowed, "PGRST117", "unsupported method "+r.Method, "", "")
	}
}

func respond(w http.ResponseWriter, status int, res *backend.Result, err error, pr prefs) {
	if err != nil {
		failErr(w, err)
		return
	}
	if !pr.representation {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(backend.RowsJSON(res.Rows))
}

// payloadRows reads an insert body; with columns, only those keys count and
// a missing one is null (or its default with missing=default); without,
// every object must have the same keys.
func payloadRows(body []byte, columns []string, missingDefault bool) ([]query.Row, error) {
	body = bytes.TrimSpace(body)
	var objs []json.RawMessage
	if len(body) > 0 && body[0] == '[' {
		if err := json.Unmarshal(body, &objs); err != nil {
			return nil, failf("the body is not valid JSON")
		}
	} else {
		objs = []json.RawMessage{body}
	}
	rows := make([]query.Row, 0, len(objs))
	for _, o := range objs {
		row, err := query.ParseObject("body", o)
		if err != nil {
			return nil, failf("the body must be an object or an array of objects")
		}
		if columns != nil {
			var kept query.Row
			for _, c := range columns {
				v, ok := row.Get(c)
				if !ok {
					if missingDefault {
						continue
					}
					v = json.RawMessage("null")
				}
				kept.Keys = append(kept.Keys, c)
				kept.Values = append(kept.Values, v)
			}
			row = kept
		}
		rows = append(rows, row)
	}
	if columns == nil && !query.SameKeys(rows) {
		return nil, backend.NewDBError("PGRST102", "All object keys must match", "", "")
	}
	return rows, nil
}

func (s *Server) rpc(ctx context.Context, w http.ResponseWriter, r *http.Request, schema, fn string, body []byte) {
	if r.Method != http.MethodPost {
		fail(w, http.StatusMethodNotAllowed, "PGRST101", "this fake calls functions with POST only", "", "")
		return
	}
	if !query.ValidIdent(fn) {
		fail(w, http.StatusNotFound, "PGRST202", "Could not find the function "+schema+"."+fn+" in the schema cache", "", "")
		return
	}
	var args query.Row
	if len(bytes.TrimSpace(body)) > 0 {
		var err error
		if args, err = query.ParseObject("body", body); err != nil {
			failErr(w, failf("the body must be a JSON object of named arguments"))
			return
		}
	}
	res, err := s.backend.Call(ctx, &query.Call{Schema: schema, Function: fn, Args: args})
	if err != nil {
		failErr(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	if res.Scalar {
		_, _ = w.Write(res.Value)
		return
	}
	_, _ = w.Write(backend.RowsJSON(res.Rows))
}

// openAPI writes the parts of PostgREST's OpenAPI description that
// clients read: definitions (columns in order, formats, required, key
// notes) and paths.
func (s *Server) openAPI(ctx context.Context, w http.ResponseWriter, schema string) {
	tables, err := s.backend.Tables(ctx, schema)
	if err != nil {
		failErr(w, err)
		return
	}
	var defs, paths bytes.Buffer
	for i, ts := range tables {
		t, err := s.backend.Describe(ctx, schema, ts.Name)
		if err != nil {
			failErr(w, err)
			return
		}
		if i > 0 {
			defs.WriteByte(',')
			paths.WriteByte(',')
		}
		name, _ := json.Marshal(t.Name)
		ops := `{"get":{}}`
		if t.Kind == "table" {
			ops = `{"get":{},"post":{},"patch":{},"delete":{}}`
		}
		fmt.Fprintf(&paths, `%s:%s`, mustJSON("/"+t.Name), ops)
		var required []string
		var props bytes.Buffer
		for j, c := range t.Columns {
			if j > 0 {
				props.WriteByte(',')
			}
			desc := ""
			if c.PrimaryKey > 0 {
				desc += "Note:\nThis is a Primary Key.<pk/>"
			}
			for _, fk := range t.ForeignKeys {
				if len(fk.Columns) == 1 && fk.Columns[0] == c.Name {
					desc += fmt.Sprintf("Note:\nThis is a Foreign Key to `%s.%s`.<fk table='%s' column='%s'/>", fk.RefTable, fk.RefColumns[0], fk.RefTable, fk.RefColumns[0])
				}
			}
			prop := map[string]any{"format": c.Type, "type": "string"}
			if desc != "" {
				prop["description"] = desc
			}
			if c.Default != "" {
				prop["default"] = c.Default
			}
			fmt.Fprintf(&props, "%s:%s", mustJSON(c.Name), mustJSON(prop))
			if !c.Nullable && c.Default == "" {
				required = append(required, c.Name)
			}
		}
		fmt.Fprintf(&defs, `%s:{"type":"object","required":%s,"properties":{%s}}`, name, mustJSON(required), props.String())
	}
	w.Header().Set("Content-Type", "application/openapi+json; charset=utf-8")
	fmt.Fprintf(w, `{"swagger":"2.0","paths":{%s},"definitions":{%s}}`, paths.String(), defs.String())
}

func mustJSON(v any) string {
	if s, ok := v.([]string); ok && s == nil {
		return "[]"
	}
	b, _ := json.Marshal(v)
	return string(b)
}
