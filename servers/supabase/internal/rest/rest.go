// Package rest is the Supabase tools' backend on a Supabase project's REST
// API (PostgREST): the query model rendered to PostgREST requests, sent
// with the project's key through the fleet's upstream client, and
// PostgREST's errors ({code, message, details, hint}) mapped onto the
// fleet's codes. Table discovery reads the API's OpenAPI description.
package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/backend"
	"github.com/mcp-fleet/mcp-fleet/servers/supabase/internal/query"
	"github.com/mcp-fleet/mcp-fleet/shared/logging"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/upstream"
)

// Config configures the client.
type Config struct {
	// URL is the project URL (https://<ref>.supabase.co) or its REST root
	// (…/rest/v1).
	URL string
	// Key is the API key sent as apikey: a publishable or secret key
	// (sb_…), or a legacy anon or service_role JWT.
	Key string
	// JWT, when set, is sent as the bearer token instead of a JWT-shaped
	// key: a token for a custom database role under row level security.
	JWT string
	// Schemas are the exposed schemas; the first is the default profile.
	Schemas  []string
	Version  string
	Timeout  time.Duration
	Logger   *zerolog.Logger
	Redactor *logging.Redactor
	// MaxResponseBytes caps a response body (8 MiB when zero).
	MaxResponseBytes int64
}

// Client is the PostgREST backend.
type Client struct {
	up      *upstream.Client
	base    string
	schemas []string
	maxBody int64
}

var _ backend.Backend = (*Client)(nil)

// isJWT reports a key shaped like a JSON Web Token (the legacy keys).
func isJWT(s string) bool { return strings.HasPrefix(s, "eyJ") && strings.Count(s, ".") == 2 }

// BaseURL derives the REST root from a project URL.
func BaseURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.User != nil {
		return "", fmt.Errorf("the Supabase URL must be the project's http(s) URL, e.g. https://<project>.supabase.co")
	}
	p := strings.TrimSuffix(u.Path, "/")
	if !strings.HasSuffix(p, "/rest/v1") {
		p += "/rest/v1"
	}
	u.Path = p
	return u.String(), nil
}

// New builds the client; nothing is sent until the first call.
func New(cfg Config) (*Client, error) {
	base, err := BaseURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	if cfg.Key == "" {
		return nil, fmt.Errorf("a Supabase API key is required with the Supabase URL")
	}
	if len(cfg.Schemas) == 0 {
		cfg.Schemas = []string{"public"}
	}
	bearer := cfg.JWT
	if bearer == "" && isJWT(cfg.Key) {
		bearer = cfg.Key
	}
	key := cfg.Key
	up, err := upstream.New(upstream.Config{
		Name: "supabase", Server: "supabase-mcp", Version: cfg.Version, Timeout: cfg.Timeout,
		MaxResponseBytes: cfg.MaxResponseBytes, Logger: cfg.Logger, Redactor: cfg.Redactor,
		Auth: func(req *http.Request) error {
			req.Header.Set("apikey", key)
			if bearer != "" {
				req.Header.Set("Authorization", "Bearer "+bearer)
			}
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	maxBody := cfg.MaxResponseBytes
	if maxBody <= 0 {
		maxBody = upstream.DefaultMaxResponseBytes
	}
	return &Client{up: up, base: base, schemas: cfg.Schemas, maxBody: maxBody}, nil
}

// Kind is "postgrest".
func (c *Client) Kind() string { return "postgrest" }

// Close releases idle connections.
func (c *Client) Close() { c.up.CloseIdleConnections() }

// response is a successful answer.
type response struct {
	body   []byte
	header http.Header
}

// errorBody is PostgREST's error document.
type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Details string `json:"details"`
	Hint    string `json:"hint"`
}

func (c *Client) do(ctx context.Context, r *query.Request) (*response, error) {
	u := c.base + r.Path
	if q := r.RawQuery(); q != "" {
		u += "?" + q
	}
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, u, body)
	if err != nil {
		return nil, mcperr.New(mcperr.Internal, "building the request").WithCause(err)
	}
	if r.Body != nil {
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(r.Body)), nil }
	}
	for k, v := range r.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.up.HTTPClient().Do(req)
	if err != nil {
		return nil, upstream.FromError(c.up.Name(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		raw, _ := upstream.ReadBody(resp.Body, 64<<10)
		var eb errorBody
		if json.Unmarshal(raw, &eb) == nil && eb.Message != "" && resp.StatusCode != http.StatusUnauthorized {
			if eb.Code == "" {
				return nil, upstream.FromStatus(c.up.Name(), resp.StatusCode, resp.Header, upstream.Detail(eb.Message))
			}
			return nil, backend.NewDBError(eb.Code, eb.Message, eb.Details, eb.Hint)
		}
		return nil, upstream.FromStatus(c.up.Name(), resp.StatusCode, resp.Header)
	}
	raw, err := upstream.ReadBody(resp.Body, c.maxBody)
	if err != nil {
		return nil, upstream.FromError(c.up.Name(), err)
	}
	return &response{body: raw, header: resp.Header}, nil
}

// total reads the count of a Content-Range header ("0-9/42").
func total(h http.Header) *int64 {
	cr := h.Get("Content-Range")
	i := strings.LastIndexByte(cr, '/')
	if i < 0 {
		return nil
	}
	n, err := strconv.ParseInt(cr[i+1:], 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

func (c *Client) schema(s string) string {
	if s == c.schemas[0] && len(c.schemas) == 1 {
		// The only exposed schema is PostgREST's default profile.
		return ""
	}
	return s
}

func rowsResult(body []byte, limit int) (*backend.Result, error) {
	res, err := backend.RowsResult(body, limit)
	if err != nil {
		return nil, mcperr.New(mcperr.Upstream, "upstream \"supabase\" sent rows that are not a JSON array").WithCause(err)
	}
	return res, nil
}

// Select reads rows (one more than the limit, to tell whether there are
// more).
func (c *Client) Select(ctx context.Context, q *query.Select) (*backend.Result, error) {
	cp := *q
	cp.Schema = c.schema(q.Schema)
	resp, err := c.do(ctx, query.PostgRESTSelect(&cp))
	if err != nil {
		return nil, err
	}
	res, err := rowsResult(resp.body, q.Limit)
	if err != nil {
		return nil, err
	}
	if q.Count {
		res.Count = total(resp.header)
	}
	return res, nil
}

// Insert adds rows and returns them.
func (c *Client) Insert(ctx context.Context, q *query.Insert) (*backend.Result, error) {
	cp := *q
	cp.Schema = c.schema(q.Schema)
	r, err := query.PostgRESTInsert(&cp)
	return c.write(ctx, r, err)
}

// Update changes the matching rows; PostgREST refuses, and rolls back,
// past MaxAffected.
func (c *Client) Update(ctx context.Context, q *query.Update) (*backend.Result, error) {
	cp := *q
	cp.Schema = c.schema(q.Schema)
	r, err := query.PostgRESTUpdate(&cp)
	return c.write(ctx, r, err)
}

// Delete removes the matching rows, with the same guard.
func (c *Client) Delete(ctx context.Context, q *query.Delete) (*backend.Result, error) {
	cp := *q
	cp.Schema = c.schema(q.Schema)
	r, err := query.PostgRESTDelete(&cp)
	return c.write(ctx, r, err)
}

// write sends a rendered write (unless rendering it failed with err) and
// returns the rows PostgREST answers with.
func (c *Client) write(ctx context.Context, r *query.Request, err error) (*backend.Result, error) {
	if err != nil {
		return nil, err
	}
	resp, err := c.do(ctx, r)
	if err != nil {
		return nil, err
	}
	return rowsResult(resp.body, 0)
}

// Call runs a function: an array answer is rows, anything else a value.
func (c *Client) Call(ctx context.Context, q *query.Call) (*backend.Result, error) {
	cp := *q
	cp.Schema = c.schema(q.Schema)
	resp, err := c.do(ctx, query.PostgRESTCall(&cp))
	if err != nil {
		return nil, err
	}
	body := bytes.TrimSpace(resp.body)
	if len(body) > 0 && body[0] == '[' {
		return rowsResult(body, q.Limit)
	}
	if len(body) == 0 {
		body = []byte("null")
	}
	if !json.Valid(body) {
		return nil, mcperr.New(mcperr.Upstream, "upstream \"supabase\" sent a function result that is not JSON")
	}
	return &backend.Result{Scalar: true, Value: body}, nil
}

// openAPI is the part of PostgREST's OpenAPI description used here.
type openAPI struct {
	Paths       map[string]map[string]json.RawMessage `json:"paths"`
	Definitions map[string]struct {
		Required []string `json:"required"`
		// Properties are decoded in order: they list the columns.
		Properties  json.RawMessage `json:"properties"`
		Description string          `json:"description"`
	} `json:"definitions"`
}

type property struct {
	Format      string          `json:"format"`
	Type        string          `json:"type"`
	Description string          `json:"description"`
	Default     json.RawMessage `json:"default"`
}

func (c *Client) describeAll(ctx context.Context, schema string) (map[string]*query.Table, error) {
	r := &query.Request{Method: "GET", Path: "/", Headers: map[string]string{}}
	if s := c.schema(schema); s != "" {
		r.Headers["Accept-Profile"] = s
	}
	resp, err := c.do(ctx, r)
	if err != nil {
		if me := mcperr.Wrap(err); me.Code == mcperr.PermissionDeny || me.Code == mcperr.Authentication {
			return nil, mcperr.New(me.Code, "the configured key may not read the API description, which table discovery needs "+
				"(Supabase serves it to secret keys only); query known tables directly, or configure a secret key or DATABASE_URL: %s", me.Message)
		}
		return nil, err
	}
	var doc openAPI
	if err := json.Unmarshal(resp.body, &doc); err != nil {
		return nil, mcperr.New(mcperr.Upstream, "upstream \"supabase\" sent an API description that is not the expected JSON")
	}
	out := map[string]*query.Table{}
	for name, def := range doc.Definitions {
		if !query.ValidIdent(name) {
			continue
		}
		t := &query.Table{Schema: schema, Name: name, Kind: "view", RowEstimate: -1, Comment: def.Description}
		if ops := doc.Paths["/"+name]; ops["post"] != nil || ops["patch"] != nil {
			t.Kind = "table"
		}
		required := map[string]bool{}
		for _, r := range def.Required {
			required[r] = true
		}
		props, err := query.ParseObject("properties", def.Properties)
		if err != nil {
			continue
		}
		for i, n := range props.Keys {
			var p property
			if json.Unmarshal(props.Values[i], &p) != nil {
				continue
			}
			col := query.Column{Name: n, Type: p.Format, Nullable: !required[n]}
			if len(p.Default) > 0 {
				var s string
				if json.Unmarshal(p.Default, &s) != nil {
					s = string(p.Default)
				}
				col.Default = s
			}
			if strings.Contains(p.Description, "<pk/>") {
				t.PrimaryKey = append(t.PrimaryKey, n)
				col.PrimaryKey = len(t.PrimaryKey)
			}
			if i := strings.Index(p.Description, "<fk table='"); i >= 0 {
				rest := p.Description[i+len("<fk table='"):]
				tbl, rest, _ := strings.Cut(rest, "'")
				_, rest, _ = strings.Cut(rest, "column='")
				refCol, _, _ := strings.Cut(rest, "'")
				t.ForeignKeys = append(t.ForeignKeys, query.ForeignKey{Columns: []string{n}, RefSchema: schema, RefTable: tbl, RefColumns: []string{refCol}})
			}
			t.Columns = append(t.Columns, col)
		}
		out[name] = t
	}
	for _, t := range out {
		for _, fk := range t.ForeignKeys {
			if ref := out[fk.RefTable]; ref != nil {
				ref.Referenced = append(ref.Referenced, query.ForeignKey{Columns: fk.Columns, RefSchema: schema, RefTable: t.Name, RefColumns: fk.RefColumns})
			}
		}
	}
	return out, nil
}

// maxEstimates bounds the row-count requests of one listing.
const maxEstimates = 100

// Tables lists a schema's tables with PostgREST's estimated row counts.
func (c *Client) Tables(ctx context.Context, schema string) ([]backend.TableSummary, error) {
	all, err := c.describeAll(ctx, schema)
	if err != nil {
		return nil, err
	}
	out := make([]backend.TableSummary, 0, len(all))
	for _, t := range all {
		out = append(out, backend.TableSummary{Schema: schema, Name: t.Name, Kind: t.Kind, RowEstimate: -1, Columns: len(t.Columns)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i := range out[:min(len(out), maxEstimates)] {
		wg.Add(1)
		go func(s *backend.TableSummary) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			r := &query.Request{Method: "HEAD", Path: "/" + s.Name, Query: []query.Param{{Key: "select", Value: "*"}, {Key: "limit", Value: "1"}},
				Headers: map[string]string{"Prefer": "count=estimated"}}
			if p := c.schema(schema); p != "" {
				r.Headers["Accept-Profile"] = p
			}
			if resp, err := c.do(ctx, r); err == nil {
				if n := total(resp.header); n != nil {
					s.RowEstimate = *n
				}
			}
		}(&out[i])
	}
	wg.Wait()
	return out, nil
}

// Describe returns one table as the API description tells it.
func (c *Client) Describe(ctx context.Context, schema, table string) (*query.Table, error) {
	all, err := c.describeAll(ctx, schema)
	if err != nil {
		return nil, err
	}
	t := all[table]
	if t == nil {
		return nil, query.TableNotFound("table", schema, table)
	}
	return t, nil
}
