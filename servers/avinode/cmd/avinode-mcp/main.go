// Command avinode-mcp is the avinode MCP server: charter trips with deep
// links into Avinode's marketplace, RFQs, quotes, operator messages, airports
// and empty legs — on Avinode's API when credentials are set, else on a
// simulated marketplace — and, as `avinode-mcp webhooks`, the service that
// receives Avinode's webhook notifications and processes them.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/avinode"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/feed"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/market"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/mock"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/tools"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/webhooks"
	"github.com/mcp-fleet/mcp-fleet/shared/cli"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
)

func main() {
	os.Exit(kit.Main(spec(), os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

// deliveryInterval is how often the simulated marketplace publishes the
// operators' answers that have fallen due.
const deliveryInterval = 500 * time.Millisecond

// Webhook processing modes (--webhook-processing).
const (
	processingAuto    = "auto"
	processingInline  = "inline"
	processingService = "service"
)

// settings are avinode's own flags, beside the kit's.
type settings struct {
	apiToken, apiKey, authToken string
	clientID, clientSecret      string
	apiURL, actAs               string
	product, apiVersion         string
	timeout                     time.Duration
	dbPath, databaseURL         string
	processing                  string
	mockFirst, mockWindow       time.Duration
	mockLatency                 time.Duration
	mockOperators               int

	// Set by the command being run, not by flags: where the simulated
	// operators' notifications are posted, and whether this process
	// leaves publishing their answers to the webhook service.
	mockNotify    func(ctx context.Context, body []byte) error
	mockNoPublish bool
}

func (s *settings) register(f *cli.Flags) {
	f.Secret(&s.apiToken, "AVINODE_API_TOKEN", "Avinode application token (X-Avinode-ApiToken); empty or starting with mock_: the simulated marketplace")
	f.Secret(&s.apiKey, "AVINODE_API_KEY", "another name for AVINODE_API_TOKEN")
	f.Secret(&s.authToken, "AVINODE_AUTH_TOKEN", "bearer token (JWT) of the Avinode API connection")
	f.String(&s.clientID, "client-id", []string{"AVINODE_CLIENT_ID"}, "", "OAuth client id: with AVINODE_CLIENT_SECRET, exchanged at the API's /oauth/token for bearer tokens instead of AVINODE_AUTH_TOKEN")
	f.Secret(&s.clientSecret, "AVINODE_CLIENT_SECRET", "OAuth client secret (with --client-id)")
	f.String(&s.apiURL, "api-url", []string{"AVINODE_API_URL"}, avinode.SandboxURL, "Avinode API root; production is "+avinode.ProductionURL)
	f.String(&s.actAs, "act-as", []string{"AVINODE_ACT_AS_ACCOUNT"}, "", "Avinode user login sent as X-Avinode-ActAsAccount, so operators see that person's name")
	f.String(&s.product, "product", []string{"AVINODE_PRODUCT"}, "", "X-Avinode-Product: the calling software (default mcp-fleet/<version>)")
	f.String(&s.apiVersion, "api-version", []string{"AVINODE_API_VERSION"}, "v1.0", "X-Avinode-ApiVersion")
	f.Duration(&s.timeout, "api-timeout", []string{"AVINODE_TIMEOUT"}, 30*time.Second, "time limit of one Avinode call, retries included")
	f.String(&s.dbPath, "db-path", []string{"AVINODE_DB_PATH"}, "", "the local store of trips, RFQs, quotes, messages and webhook events (default: <data dir>/avinode.db)")
	f.Secret(&s.databaseURL, "DATABASE_URL", "PostgreSQL URL of the store instead of the local SQLite file: what every avinode-mcp process and the webhook service share to scale past one machine")
	f.Enum(&s.processing, "webhook-processing", []string{"AVINODE_WEBHOOK_PROCESSING"}, processingAuto,
		[]string{processingAuto, processingInline, processingService},
		"who processes webhook events: inline (this process), service (the avinode-mcp webhooks service; this process only reads the store and listens for changes), auto (inline on the simulated marketplace, else service)")
	f.Duration(&s.mockFirst, "mock-first-response", []string{"AVINODE_MOCK_FIRST_RESPONSE"}, mock.DefaultFirstResponse,
		"simulated marketplace: when the first operator quotes after create_trip, and how long operators take to answer a message")
	f.Duration(&s.mockWindow, "mock-response-window", []string{"AVINODE_MOCK_RESPONSE_WINDOW"}, mock.DefaultResponseWindow,
		"simulated marketplace: the time within which the other operators answer")
	f.Duration(&s.mockLatency, "mock-latency", []string{"AVINODE_MOCK_LATENCY"}, 0, "simulated marketplace: network latency added to every call (0: none)")
	f.Int(&s.mockOperators, "mock-operators", []string{"AVINODE_MOCK_OPERATORS"}, mock.DefaultOperators,
		fmt.Sprintf("simulated marketplace: operators a trip is sent to (1-%d)", mock.MaxOperators))
	f.Check("api-timeout", func() error {
		if s.timeout <= 0 {
			return errors.New("want a positive duration such as 30s")
		}
		return nil
	})
	f.Check("mock-operators", func() error {
		if s.mockOperators < 1 || s.mockOperators > mock.MaxOperators {
			return fmt.Errorf("want 1 to %d, got %d", mock.MaxOperators, s.mockOperators)
		}
		return nil
	})
}

// key is the application token under either name.
func (s *settings) key() (string, error) {
	if s.apiToken != "" && s.apiKey != "" && s.apiToken != s.apiKey {
		return "", &cli.UsageError{Msg: "AVINODE_API_TOKEN and AVINODE_API_KEY are both set and differ; set one"}
	}
	if s.apiToken != "" {
		return s.apiToken, nil
	}
	return s.apiKey, nil
}

// mockMode: no application token, or a mock_ one.
func mockMode(key string) bool { return key == "" || strings.HasPrefix(key, "mock_") }

// backend builds the marketplace: the simulation (returned as mock too) or
// the Avinode client.
func (s *settings) backend(env *kit.Env, st *store.Store) (market.Backend, *mock.Market, error) {
	key, err := s.key()
	if err != nil {
		return nil, nil, err
	}
	if mockMode(key) {
		m := mock.New(st, mock.Config{FirstResponse: s.mockFirst, ResponseWindow: s.mockWindow, Latency: s.mockLatency,
			Operators: s.mockOperators, Notify: s.mockNotify, NoPublish: s.mockNoPublish})
		env.Logger.Info().Str("marketplace", "mock").Msg("no Avinode credentials: serving the simulated marketplace")
		return m, m, nil
	}
	c, err := s.client(env)
	if err != nil {
		return nil, nil, err
	}
	env.AddHealthCheck("avinode", c.Healthy)
	env.Logger.Info().Str("marketplace", "avinode").Str("api_url", s.apiURL).Msg("serving Avinode's API")
	return avinode.NewBackend(c, st), nil, nil
}

// client builds the Avinode API client from the credentials.
func (s *settings) client(env *kit.Env) (*avinode.Client, error) {
	key, err := s.key()
	if err != nil {
		return nil, err
	}
	switch {
	case mockMode(key) && s.authToken == "" && s.clientID == "":
		return nil, &cli.UsageError{Msg: "this needs Avinode's API: set AVINODE_API_TOKEN and AVINODE_AUTH_TOKEN (or AVINODE_CLIENT_ID and AVINODE_CLIENT_SECRET)"}
	case s.authToken == "" && s.clientID == "" && s.clientSecret == "":
		return nil, &cli.UsageError{Msg: "AVINODE_API_TOKEN is set but no authentication: set AVINODE_AUTH_TOKEN, or AVINODE_CLIENT_ID and AVINODE_CLIENT_SECRET (or unset AVINODE_API_TOKEN for the simulated marketplace)"}
	case s.authToken == "" && (s.clientID == "" || s.clientSecret == ""):
		return nil, &cli.UsageError{Msg: "OAuth needs both AVINODE_CLIENT_ID and AVINODE_CLIENT_SECRET"}
	}
	c, err := avinode.New(avinode.Config{BaseURL: s.apiURL, APIToken: key, AuthToken: s.authToken, ClientID: s.clientID,
		ClientSecret: s.clientSecret, Product: s.product, APIVersion: s.apiVersion, ActAsAccount: s.actAs, Timeout: s.timeout,
		Version: env.Info.Version, Logger: env.Logger, Redactor: env.Redactor})
	if err != nil {
		return nil, &cli.UsageError{Msg: err.Error()}
	}
	return c, nil
}

// openStore opens the store: PostgreSQL when DATABASE_URL is set, else the
// SQLite file (--db-path, or avinode.db in the data directory).
func (s *settings) openStore(ctx context.Context, env *kit.Env, opts store.Options) (*store.Store, error) {
	if s.databaseURL != "" {
		if s.dbPath != "" {
			return nil, &cli.UsageError{Msg: "DATABASE_URL and --db-path (AVINODE_DB_PATH) are both set; set one: the store is either PostgreSQL or an SQLite file"}
		}
		if _, err := pgx.ParseConfig(s.databaseURL); err != nil {
			// The parser's message may quote the URL, password included.
			return nil, &cli.UsageError{Msg: "DATABASE_URL is not a valid PostgreSQL URL (expected postgres://user:password@host:port/database?options)"}
		}
		st, err := store.OpenPostgres(ctx, s.databaseURL, opts)
		if err != nil {
			return nil, fmt.Errorf("avinode store (PostgreSQL, DATABASE_URL): %s", env.Redactor.String(err.Error()))
		}
		return st, nil
	}
	path, err := env.DataPath(s.dbPath, "avinode.db")
	if err != nil {
		return nil, err
	}
	st, err := store.OpenSQLite(ctx, path, opts)
	if err != nil {
		return nil, fmt.Errorf("avinode store: %w", err)
	}
	return st, nil
}

// inline decides whether this MCP process processes webhook events itself.
func (s *settings) inline(mockMarket bool) bool {
	switch s.processing {
	case processingInline:
		return true
	case processingService:
		return false
	}
	return mockMarket
}

// publish runs the simulated marketplace's clock: due answers are published
// with their pointers, and the processor is woken for them.
func publish(env *kit.Env, m *mock.Market, proc *webhooks.Processor) kit.Worker {
	return kit.Worker{Name: "mock-marketplace", Run: func(ctx context.Context) error {
		var poke func(int)
		if proc != nil {
			poke = func(int) { proc.Poke() }
		}
		return m.Run(ctx, deliveryInterval, poke, func(err error) {
			env.Logger.Warn().Err(err).Msg("the simulated marketplace could not publish its operators' answers or post their notifications; retrying")
		})
	}}
}

func (s *settings) setup(ctx context.Context, env *kit.Env) ([]kit.Tool, func(), error) {
	f := feed.New(env.Notifier, env.Logger)
	st, err := s.openStore(ctx, env, store.Options{OnChange: f.Local})
	if err != nil {
		return nil, nil, err
	}
	f.Attach(st)
	// In service mode the webhook service publishes the simulated
	// operators' answers (and posts their notifications); this process
	// only applies what is published.
	s.mockNoPublish = s.processing == processingService
	b, m, err := s.backend(env, st)
	if err != nil {
		_ = st.Close()
		return nil, nil, err
	}
	env.AddHealthCheck("store", st.Ping)
	d := tools.Deps{Store: st, Market: b, Watch: f.Watch}
	if s.inline(m != nil) {
		proc, err := webhooks.NewProcessor(webhooks.ProcessorConfig{Store: st, Resolver: b, Workers: s.workers(0), Logger: env.Logger,
			Metrics: env.Metrics, Health: env.Health})
		if err != nil {
			_ = st.Close()
			return nil, nil, err
		}
		env.AddWorker(kit.Worker{Name: "webhook-processor", Run: proc.Run})
		if m != nil {
			env.AddWorker(publish(env, m, proc))
		}
		d.Poke = proc.Poke
		env.Logger.Info().Str("webhook_processing", processingInline).
			Msg("this process processes webhook events itself (no webhook service configured)")
	} else {
		env.Logger.Info().Str("webhook_processing", processingService).
			Msg("webhook events are processed by the avinode-mcp webhooks service; this process reads the store and listens for changes")
	}
	env.AddWorker(kit.Worker{Name: "change-feed", Run: f.Run})
	for _, t := range tools.Templates(d) {
		env.AddTemplate(t)
	}
	return tools.All(d), func() { _ = st.Close() }, nil
}

func spec() kit.Spec {
	var s settings
	return kit.Spec{
		Info: kit.Info{Name: "avinode",
			Instructions: "Private-jet charter through Avinode. create_trip creates a trip and returns a deep link: give it to the " +
				"user, who sends requests for quote to operators in Avinode. Quotes arrive over time: read them with get_quotes " +
				"(or subscribe to avinode://trips/{trip_id}/quotes). Airports are ICAO codes; search_airports finds them. Without " +
				"Avinode credentials the server runs a simulated marketplace whose operators answer on their own."},
		Summary:     "MCP server for the Avinode charter marketplace: trips and deep links, RFQs, quotes, operator messages, airports, empty legs",
		DefaultPort: 3001,
		Flags:       s.register,
		Setup:       s.setup,
		Commands:    webhookCommands(&s),
	}
}
