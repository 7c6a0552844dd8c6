package main

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/avinode"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/mock"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/webhooks"
	"github.com/mcp-fleet/mcp-fleet/shared/cli"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/ratelimit"
	"github.com/mcp-fleet/mcp-fleet/shared/suggest"
	"github.com/mcp-fleet/mcp-fleet/shared/urlrule"
)

// Roles of the webhook service (--role).
const (
	roleAll       = "all"
	roleReceiver  = "receiver"
	roleProcessor = "processor"
)

// webhookSettings are the flags of the webhook commands.
type webhookSettings struct {
	listen                   string
	clientID, clientSecret   string
	signingSecret, signature string
	maxBody                  int
	rateSpec                 string
	rate                     ratelimit.Rate
	allow, trusted           []string
	allowNets, trustedNets   []netip.Prefix // parsed by the flags' checks
	role                     string
	workers, maxRetries      int
	lease, poll, retryBase   time.Duration
	metricsToken             string
	mockURL                  string

	targetURL, displayName string
	events                 []string
}

func (w *webhookSettings) credentials(f *cli.Flags) {
	f.String(&w.clientID, "webhook-client-id", []string{"AVINODE_WEBHOOK_CLIENT_ID"}, "",
		"the subscription's clientIdentifier: the HTTP Basic user Avinode sends with every notification")
	f.Secret(&w.clientSecret, "AVINODE_WEBHOOK_CLIENT_SECRET",
		fmt.Sprintf("the subscription's clientSecret: the HTTP Basic password (at least %d characters)", webhooks.MinSecretLength))
}

func (w *webhookSettings) registerService(f *cli.Flags) {
	f.String(&w.listen, "listen", []string{"AVINODE_WEBHOOK_ADDR"}, "127.0.0.1:8090",
		"address the receiver listens on (POST "+webhooks.Path+", GET /healthz, GET /metrics)")
	w.credentials(f)
	f.Secret(&w.signingSecret, "AVINODE_WEBHOOK_SIGNING_SECRET",
		"optional: also require an HMAC-SHA256 signature of each body under this secret (--signature-header)")
	f.String(&w.signature, "signature-header", []string{"AVINODE_WEBHOOK_SIGNATURE_HEADER"}, webhooks.DefaultSignatureHeader,
		"header carrying the hex HMAC-SHA256 signature (optionally sha256=…), when a signing secret is set")
	f.Int(&w.maxBody, "max-body", []string{"AVINODE_WEBHOOK_MAX_BODY"}, webhooks.DefaultMaxBody, "largest notification body, bytes")
	f.String(&w.rateSpec, "rate-limit", []string{"AVINODE_WEBHOOK_RATE_LIMIT"}, webhooks.DefaultRate.String(),
		"notifications accepted per source address, e.g. 1200/min,burst=200, or off")
	f.List(&w.allow, "allow-sources", "AVINODE_WEBHOOK_ALLOW_SOURCES", ",",
		"only accept notifications from these networks (CIDR, comma separated; default: any)")
	f.List(&w.trusted, "trusted-proxies", "AVINODE_WEBHOOK_TRUSTED_PROXIES", ",",
		"reverse proxies (CIDR) whose X-Forwarded-For names the real source; from anyone else the header is ignored")
	f.Enum(&w.role, "role", []string{"AVINODE_WEBHOOK_ROLE"}, roleAll, []string{roleAll, roleReceiver, roleProcessor},
		"what this process does: all (receive and process), receiver (store notifications only), processor (process stored events only)")
	f.Int(&w.workers, "workers", []string{"AVINODE_WEBHOOK_WORKERS"}, 0,
		fmt.Sprintf("events processed at once in this process (0: %d on PostgreSQL, %d on SQLite, whose one writer more workers only queue for)",
			webhooks.DefaultWorkers, sqliteWorkers))
	f.Int(&w.maxRetries, "max-retries", []string{"AVINODE_WEBHOOK_MAX_RETRIES"}, store.DefaultMaxRetries,
		"failed attempts retried before an event goes to the dead letter")
	f.Duration(&w.retryBase, "retry-base", []string{"AVINODE_WEBHOOK_RETRY_BASE"}, webhooks.DefaultRetryBase,
		"backoff unit: after the n-th failure an event waits retry-base×2ⁿ (at most an hour)")
	f.Duration(&w.lease, "lease", []string{"AVINODE_WEBHOOK_LEASE"}, webhooks.DefaultLease,
		"how long a worker holds an event it took; a worker that dies loses its events to another after this")
	f.Duration(&w.poll, "poll", []string{"AVINODE_WEBHOOK_POLL"}, webhooks.DefaultPoll, "how often an idle worker looks for due events")
	f.Secret(&w.metricsToken, "AVINODE_WEBHOOK_METRICS_TOKEN", "bearer token for GET /metrics (unset: /metrics is not served)")
	f.String(&w.mockURL, "mock-webhook-url", []string{"AVINODE_MOCK_WEBHOOK_URL"}, "",
		"simulated marketplace: the receiver its operators' notifications are POSTed to, with the webhook credentials, as Avinode posts them "+
			"(default: this service's own receiver with --role all; a processor without it queues them in the store directly; unused on Avinode)")
	f.Check("mock-webhook-url", func() error { return checkMockURL(w.mockURL) })
	f.Check("rate-limit", func() error {
		r, err := ratelimit.ParseRate(w.rateSpec)
		w.rate = r
		return err
	})
	f.Check("max-body", func() error {
		if w.maxBody < 256 || w.maxBody > 16<<20 {
			return fmt.Errorf("want 256 to %d bytes, got %d", 16<<20, w.maxBody)
		}
		return nil
	})
	f.Check("workers", func() error {
		if w.workers < 0 || w.workers > 64 {
			return fmt.Errorf("want 0 (automatic) to 64, got %d", w.workers)
		}
		return nil
	})
	f.Check("max-retries", func() error {
		if w.maxRetries < 0 || w.maxRetries > 50 {
			return fmt.Errorf("want 0 to 50, got %d", w.maxRetries)
		}
		return nil
	})
	f.Check("lease", func() error {
		if w.lease < time.Second {
			return fmt.Errorf("want at least 1s, got %s", w.lease)
		}
		return nil
	})
	f.Check("allow-sources", func() (err error) { w.allowNets, err = webhooks.ParsePrefixes(w.allow); return err })
	f.Check("trusted-proxies", func() (err error) { w.trustedNets, err = webhooks.ParsePrefixes(w.trusted); return err })
}

// sqliteWorkers is the processor's default concurrency on SQLite: fetches
// overlap, while writes — one at a time on SQLite — leave the receiver
// its turns.
const sqliteWorkers = 2

// workers is how many events a processor of this process handles at once.
func (s *settings) workers(explicit int) int {
	switch {
	case explicit > 0:
		return explicit
	case s.databaseURL == "":
		return sqliteWorkers
	}
	return webhooks.DefaultWorkers
}

func (w *webhookSettings) registerSubscription(f *cli.Flags) {
	f.String(&w.targetURL, "url", []string{"AVINODE_WEBHOOK_URL"}, "",
		"the receiver's public URL, e.g. https://hooks.example.com"+webhooks.Path+" (https; http only to a loopback address)")
	f.String(&w.displayName, "display-name", []string{"AVINODE_WEBHOOK_DISPLAY_NAME"}, "mcp-fleet avinode-mcp", "the subscription's name in Avinode")
	f.List(&w.events, "events", "AVINODE_WEBHOOK_EVENTS", ",",
		"event types to subscribe to (default "+strings.Join(avinode.BrokerEventTypes, ",")+"; any of "+strings.Join(avinode.WebhookEventTypes, ", ")+")")
	w.credentials(f)
}

// webhookCommands are `webhooks` (the service) and the subscription
// commands.
func webhookCommands(s *settings) []kit.Command {
	w := &webhookSettings{}
	return []kit.Command{
		{Name: "webhooks", ServerFlags: true, Flags: w.registerService,
			Summary: "the webhook service: receive Avinode's notifications on --listen and process them into the store (runs until stopped)",
			Run: func(ctx context.Context, env *kit.Env) error {
				svc, err := newService(ctx, env, s, w)
				if err != nil {
					return err
				}
				svc.start(env, w)
				return nil
			}},
		{Name: "webhooks-register", ServerFlags: true, Flags: w.registerSubscription,
			Summary: "subscribe the receiver's URL to Avinode's webhook notifications (POST /webhooks/settings)",
			Run:     func(ctx context.Context, env *kit.Env) error { return registerSubscription(ctx, env, s, w) }},
		{Name: "webhooks-list", ServerFlags: true,
			Summary: "list the company's webhook subscriptions in Avinode (GET /webhooks/settings)",
			Run:     func(ctx context.Context, env *kit.Env) error { return listSubscriptions(ctx, env, s) }},
		{Name: "webhooks-deactivate", ServerFlags: true,
			Summary: "deactivate a webhook subscription: webhooks-deactivate <id> (PUT /webhooks/settings/{id})",
			Run:     func(ctx context.Context, env *kit.Env) error { return deactivateSubscription(ctx, env, s) }},
	}
}

// service is the webhook service of one process.
type service struct {
	st      *store.Store
	mock    *mock.Market
	proc    *webhooks.Processor
	handler http.Handler
	notices *noticeSender // the simulated operators' notifications, when they go over HTTP
}

func (w *webhookSettings) receives() bool  { return w.role != roleProcessor }
func (w *webhookSettings) processes() bool { return w.role != roleReceiver }

// newService opens the store and builds the parts of the service that
// --role asks for.
func newService(ctx context.Context, env *kit.Env, s *settings, w *webhookSettings) (*service, error) {
	if w.receives() {
		if w.clientID == "" || w.clientSecret == "" {
			return nil, &cli.UsageError{Msg: "the receiver needs the subscription's credentials: set AVINODE_WEBHOOK_CLIENT_ID and " +
				"AVINODE_WEBHOOK_CLIENT_SECRET (the clientIdentifier and clientSecret given to webhooks-register), or run --role processor"}
		}
		if len(w.clientSecret) < webhooks.MinSecretLength {
			return nil, &cli.UsageError{Msg: fmt.Sprintf("AVINODE_WEBHOOK_CLIENT_SECRET is %d characters; use at least %d (for example: openssl rand -hex 24)",
				len(w.clientSecret), webhooks.MinSecretLength)}
		}
	}
	st, err := s.openStore(ctx, env, store.Options{})
	if err != nil {
		return nil, err
	}
	env.AddHealthCheck("store", st.Ping)
	svc := &service{st: st}
	fail := func(err error) (*service, error) {
		_ = st.Close()
		return nil, err
	}
	if w.processes() {
		key, err := s.key()
		if err != nil {
			return fail(err)
		}
		switch {
		case w.mockURL != "" && !mockMode(key):
			// One stack configuration serves both marketplaces.
			env.Logger.Info().Msg("--mock-webhook-url is not used: with Avinode credentials, Avinode posts the notifications")
		case mockMode(key) && (w.mockURL != "" || w.receives()):
			if w.clientID == "" || w.clientSecret == "" {
				return fail(&cli.UsageError{Msg: "--mock-webhook-url posts with the receiver's credentials: set AVINODE_WEBHOOK_CLIENT_ID and AVINODE_WEBHOOK_CLIENT_SECRET as the receiver has them"})
			}
			svc.notices = newNoticeSender(w)
			s.mockNotify = svc.notices.send
		}
		b, m, err := s.backend(env, st)
		if err != nil {
			return fail(err)
		}
		svc.mock = m
		if w.lease*3/4 < s.timeout {
			env.Logger.Warn().Dur("lease", w.lease).Dur("api_timeout", s.timeout).
				Msg("processing one event is cut off at three quarters of --lease, before an Avinode call's own time limit")
		}
		svc.proc, err = webhooks.NewProcessor(webhooks.ProcessorConfig{Store: st, Resolver: b, Workers: s.workers(w.workers), Lease: w.lease,
			Poll: w.poll, RetryBase: w.retryBase, Logger: env.Logger, Metrics: env.Metrics, Health: env.Health})
		if err != nil {
			return fail(err)
		}
	}
	mux := http.NewServeMux()
	if w.receives() {
		rc, err := webhooks.NewReceiver(webhooks.ReceiverConfig{Store: st, ClientID: w.clientID, ClientSecret: w.clientSecret,
			SigningSecret: w.signingSecret, SignatureHeader: w.signature, MaxBody: int64(w.maxBody), Rate: w.rate, Allow: w.allowNets,
			TrustedProxies: w.trustedNets, MaxRetries: w.maxRetries, Logger: env.Logger, Metrics: env.Metrics, OnStored: svc.poke})
		if err != nil {
			return fail(&cli.UsageError{Msg: err.Error()})
		}
		mux.Handle(webhooks.Path, rc)
	}
	mux.Handle("GET /healthz", env.Health.HealthHandler(map[string]any{"service": "avinode webhooks", "role": w.role}))
	if w.metricsToken != "" {
		want := sha256.Sum256([]byte("Bearer " + w.metricsToken))
		metricsHandler := env.Metrics.Handler()
		mux.Handle("GET /metrics", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			got := sha256.Sum256([]byte(r.Header.Get("Authorization")))
			if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
				rw.Header().Set("WWW-Authenticate", `Bearer realm="avinode-webhooks"`)
				http.Error(rw, "unauthorized", http.StatusUnauthorized)
				return
			}
			metricsHandler.ServeHTTP(rw, r)
		}))
		if err := webhooks.RegisterQueueGauge(env.Metrics, st); err != nil {
			return fail(err)
		}
	}
	mux.HandleFunc("/", func(rw http.ResponseWriter, r *http.Request) {
		http.Error(rw, "not found: notifications go to POST "+webhooks.Path, http.StatusNotFound)
	})
	svc.handler = mux
	return svc, nil
}

func (svc *service) poke() {
	if svc.proc != nil {
		svc.proc.Poke()
	}
}

// start registers the listener and workers; the kit runs them until a
// signal.
func (svc *service) start(env *kit.Env, w *webhookSettings) {
	l := kit.Listener{Name: "webhooks", Addr: w.listen, Handler: svc.handler}
	if svc.notices != nil && w.mockURL == "" {
		l.Ready = svc.notices.listening
	}
	env.AddListener(l)
	if svc.proc != nil {
		env.AddWorker(kit.Worker{Name: "webhook-processor", Run: svc.proc.Run})
		if svc.mock != nil {
			env.AddWorker(publish(env, svc.mock, svc.proc))
		}
	}
	env.Logger.Info().Str("role", w.role).Str("listen", w.listen).Bool("signature_required", w.signingSecret != "").
		Str("rate_limit", w.rate.String()).Msg("avinode webhook service starting")
}

// checkTarget accepts an https URL, or http to a loopback address.
func checkTarget(raw string) error {
	if u, err := url.Parse(raw); err != nil || u.Host == "" {
		return fmt.Errorf("--url %q is not an absolute URL", raw)
	}
	if urlrule.Check(raw) == nil {
		return nil
	}
	return fmt.Errorf("--url %q must use https (Avinode posts credentials with every notification; plain http only to a loopback address)", raw)
}

// printJSON writes v to the command's output.
func printJSON(env *kit.Env, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(env.Stdout, string(b))
	return err
}

// shown drops the secret from a subscription before it is printed.
func shown(w avinode.WebhookSettings) avinode.WebhookSettings {
	w.ClientSecret = ""
	return w
}

func registerSubscription(ctx context.Context, env *kit.Env, s *settings, w *webhookSettings) error {
	if w.targetURL == "" {
		return &cli.UsageError{Msg: "--url is required: the receiver's public URL, e.g. https://hooks.example.com" + webhooks.Path}
	}
	if err := checkTarget(w.targetURL); err != nil {
		return &cli.UsageError{Msg: err.Error()}
	}
	if w.clientID == "" || w.clientSecret == "" {
		return &cli.UsageError{Msg: "set AVINODE_WEBHOOK_CLIENT_ID and AVINODE_WEBHOOK_CLIENT_SECRET: Avinode sends them with every notification, and the receiver checks them"}
	}
	if len(w.clientSecret) < webhooks.MinSecretLength {
		return &cli.UsageError{Msg: fmt.Sprintf("AVINODE_WEBHOOK_CLIENT_SECRET is %d characters; use at least %d (for example: openssl rand -hex 24)",
			len(w.clientSecret), webhooks.MinSecretLength)}
	}
	events := w.events
	if len(events) == 0 {
		events = avinode.BrokerEventTypes
	}
	for _, e := range events {
		if !slices.Contains(avinode.WebhookEventTypes, e) {
			return &cli.UsageError{Msg: fmt.Sprintf("--events: %q is not an Avinode event type%s (known: %s)", e,
				suggest.Closest(e, avinode.WebhookEventTypes), strings.Join(avinode.WebhookEventTypes, ", "))}
		}
	}
	c, err := s.client(env)
	if err != nil {
		return err
	}
	out, err := c.CreateWebhook(ctx, avinode.WebhookSettings{TargetURI: w.targetURL, DisplayName: w.displayName, Active: true,
		ClientIdentifier: w.clientID, ClientSecret: w.clientSecret, ClientAuthenticationType: "BASIC", EventTypes: events})
	if err != nil {
		return fmt.Errorf("registering the webhook: %w", err)
	}
	return printJSON(env, map[string]any{"registered": shown(*out),
		"note": "Keep the id: webhooks-deactivate <id> stops the notifications. Run the receiver (avinode-mcp webhooks) with the same AVINODE_WEBHOOK_CLIENT_ID and AVINODE_WEBHOOK_CLIENT_SECRET."})
}

func listSubscriptions(ctx context.Context, env *kit.Env, s *settings) error {
	c, err := s.client(env)
	if err != nil {
		return err
	}
	subs, err := c.ListWebhooks(ctx)
	if err != nil {
		return fmt.Errorf("listing the webhooks: %w", err)
	}
	out := make([]avinode.WebhookSettings, 0, len(subs))
	for _, w := range subs {
		out = append(out, shown(w))
	}
	return printJSON(env, map[string]any{"subscriptions": out, "total": len(out)})
}

func deactivateSubscription(ctx context.Context, env *kit.Env, s *settings) error {
	if len(env.Args) != 1 || env.Args[0] == "" {
		return &cli.UsageError{Msg: "usage: avinode-mcp webhooks-deactivate <id> (webhooks-list shows the ids)"}
	}
	id := env.Args[0]
	c, err := s.client(env)
	if err != nil {
		return err
	}
	subs, err := c.ListWebhooks(ctx)
	if err != nil {
		return fmt.Errorf("reading the webhooks: %w", err)
	}
	i := slices.IndexFunc(subs, func(w avinode.WebhookSettings) bool { return w.ID == id })
	if i < 0 {
		return errors.New("no webhook subscription " + id + " in Avinode (webhooks-list shows them)")
	}
	sub := subs[i]
	sub.Active = false
	out, err := c.UpdateWebhook(ctx, sub)
	if err != nil {
		return fmt.Errorf("deactivating webhook %s: %w", id, err)
	}
	return printJSON(env, map[string]any{"deactivated": shown(*out)})
}
