// Package charter plays the job the fleet exists for — a private-jet charter
// request taken from first contact to a proposal in the client's inbox — on
// the servers' local backends, with no credentials and no network.
//
// Six agents, each a real MCP client over stdio with its own identity in the
// agent policy, drive the servers as a charter assistant's agents would: the
// orchestrator records the request (supabase), the client-data agent looks
// the client up (sheets), the flight-search agent creates the Avinode trip
// and hands over its deep link (avinode), the simulated operators' answers
// travel as webhook events through the avinode webhook service into the
// store and reach the proposal-analysis agent as resource updates, which it
// scores (supabase_rpc) and ranks, the communication agent mails the
// proposal (gmail, a real .eml file) and the error monitor reviews the
// webhook queue and logs a simulated failure. One call outside an agent's
// policy is made on purpose and must be refused.
//
// Run prints a transcript and returns what happened and where to look;
// cmd/charter-demo runs it for `make demo`, and the package's test runs the
// same flow against freshly built servers.
package charter

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/acl"
)

// Config says where the servers are and where the run keeps its state.
type Config struct {
	// Bin is the directory holding the <server>-mcp binaries (make build's bin/).
	Bin string
	// Policy is the agent policy file the servers enforce (configs/acl.yaml).
	Policy string
	// Grants are the opt-in grant files (configs/acl.d/) that widen the
	// policy for this run, given to every server after it. The workflow
	// needs one: the error monitor's review of the webhook queue
	// (configs/acl.d/error-monitor-webhook-queue.yaml).
	Grants []string
	// Dir holds the run's state: the servers' data directories and logs. It is
	// created, or emptied when a previous run left it; any other non-empty
	// directory is refused, so a mistyped path never loses someone's files.
	Dir string
	// Out receives the transcript.
	Out io.Writer
	// QuoteWait is how long the proposal agent waits, after the trip is
	// created, for every operator to answer before ranking the quotes in
	// hand (default 5s).
	QuoteWait time.Duration
	// steps are the grant files' names and steps, for the transcript.
	steps []string
	// FirstResponse and ResponseWindow pace the simulated operators (default
	// 1s and 2s): the first answer after FirstResponse, the others within
	// ResponseWindow.
	FirstResponse, ResponseWindow time.Duration
}

// Result is what the run did and where its output is.
type Result struct {
	RequestID, WorkflowID   string
	ClientName, ClientEmail string
	TripID, DeepLink        string
	// OperatorsAsked, Quotes and Declines are the trip's answers when ranking began.
	OperatorsAsked, Quotes, Declines int
	// Updates counts the notifications/resources/updated the proposal agent heard.
	Updates int
	// Ranking is the scored quotes, best first.
	Ranking []Ranked
	// EmailPath is the proposal as sent: an .eml file in the local mailbox.
	EmailPath, EmailMessageID string
	// WebhookEvents counts the trip's webhook events; WebhookCompleted those
	// processed, WebhookViaReceiver those the receiver took over HTTP.
	WebhookEvents, WebhookCompleted, WebhookViaReceiver int
	// Calls counts tool calls and resource reads; Failed those that failed
	// (the deliberate refusal is counted in Refused, not Failed).
	Calls, Failed, Refused int
	// Workbook, Database and Mailbox are the local backends' files.
	Workbook, Database, Mailbox string
	Elapsed                     time.Duration
}

// Ranked is one scored quote.
type Ranked struct {
	Rank         int
	Operator     string
	Aircraft     string
	PriceUSD     float64
	Score        float64
	AvinodeQuote string
}

// marker names a directory as a previous run's, so Run may empty it.
const marker = ".charter-demo"

// servers every agent set uses, and which agents use them.
var agentServers = []struct {
	agent   string
	servers []string
}{
	{"orchestrator", []string{"supabase"}},
	{"client_data", []string{"sheets", "supabase"}},
	{"flight_search", []string{"avinode", "supabase"}},
	{"proposal_analysis", []string{"avinode", "supabase"}},
	{"communication", []string{"gmail", "supabase"}},
	{"error_monitor", []string{"avinode", "supabase"}},
}

// usedServers are the servers the agents use, each once, by name.
func usedServers() []string {
	var out []string
	for _, a := range agentServers {
		out = append(out, a.servers...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Run plays the workflow and returns its result. An error means the
// workflow did not complete; the transcript says where it stopped.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if err := prepare(cfg.Dir); err != nil {
		return nil, err
	}
	r := &run{cfg: cfg, out: &syncWriter{w: cfg.Out}, start: time.Now(), res: &Result{}, sessions: map[string]*session{}}
	defer r.close()
	r.header()
	if err := r.startWebhooks(ctx); err != nil {
		return r.res, err
	}
	if err := r.connect(ctx); err != nil {
		return r.res, err
	}
	for _, step := range []func(context.Context) error{
		r.recordRequest, r.lookUpClient, r.createTrip, r.awaitQuotes, r.refusedCall, r.scoreQuotes, r.sendProposal, r.monitor,
	} {
		if err := step(ctx); err != nil {
			r.out.printf("\nFAILED: %v\n", err)
			return r.res, err
		}
	}
	if err := r.verify(); err != nil {
		r.out.printf("\nFAILED: %v\n", err)
		return r.res, err
	}
	r.res.Elapsed = time.Since(r.start)
	r.footer()
	return r.res, nil
}

func (c *Config) defaults() error {
	for name, v := range map[string]string{"Bin": c.Bin, "Policy": c.Policy, "Dir": c.Dir} {
		if v == "" {
			return fmt.Errorf("charter: %s is required", name)
		}
	}
	for _, p := range []*string{&c.Bin, &c.Policy, &c.Dir} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = abs
	}
	if _, err := os.Stat(c.Policy); err != nil {
		return fmt.Errorf("charter: the agent policy: %w", err)
	}
	for i, g := range c.Grants {
		abs, err := filepath.Abs(g)
		if err != nil {
			return err
		}
		c.Grants[i] = abs
	}
	p, err := acl.Load(c.Policy, c.Grants...)
	if err != nil {
		return fmt.Errorf("charter: the agent policy: %w", err)
	}
	c.steps = nil
	for _, g := range p.Grants() {
		c.steps = append(c.steps, filepath.Base(g.Path)+" — "+g.Step)
	}
	for _, s := range usedServers() {
		if _, err := os.Stat(c.binary(s)); err != nil {
			return fmt.Errorf("charter: %s-mcp is not in %s (run make build): %w", s, c.Bin, err)
		}
	}
	if c.Out == nil {
		c.Out = io.Discard
	}
	if c.QuoteWait <= 0 {
		c.QuoteWait = 5 * time.Second
	}
	if c.FirstResponse <= 0 {
		c.FirstResponse = time.Second
	}
	if c.ResponseWindow <= 0 {
		c.ResponseWindow = 2 * time.Second
	}
	return nil
}

func (c *Config) binary(server string) string { return filepath.Join(c.Bin, server+"-mcp") }

// prepare makes dir an empty directory for the run with its marker.
func prepare(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	case len(entries) > 0:
		if _, err := os.Stat(filepath.Join(dir, marker)); err != nil {
			return fmt.Errorf("charter: %s is not empty and is not a previous demo run's; choose another directory", dir)
		}
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("charter: empty the previous run's %s: %w", dir, err)
		}
	}
	for _, d := range []string{dir, filepath.Join(dir, "data"), filepath.Join(dir, "logs"), filepath.Join(dir, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, marker), []byte("state of a charter demo run; the next run empties this directory\n"), 0o644)
}

// run is one play of the workflow.
type run struct {
	cfg      Config
	out      *syncWriter
	start    time.Time
	res      *Result
	sessions map[string]*session // agent/server
	webhooks *exec.Cmd
	hookDone chan error // the webhook service's exit
	hookLog  *os.File

	// what the steps hand each other
	client  clientRecord
	trip    tripCreated
	quotes  quotesDoc
	stored  map[string]quote // quotes row id → the Avinode quote it holds
	depDate time.Time
}

// env is the whole environment a server process gets.
func (r *run) env(agent string) []string {
	e := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(r.cfg.Dir, "home"),
		"MCP_DATA_DIR=" + filepath.Join(r.cfg.Dir, "data"),
		"MCP_LOG_LEVEL=info",
		"GMAIL_BACKEND=local",
		"GMAIL_FROM_NAME=Charter Desk",
		"AVINODE_WEBHOOK_PROCESSING=service",
		"AVINODE_MOCK_FIRST_RESPONSE=" + r.cfg.FirstResponse.String(),
		"AVINODE_MOCK_RESPONSE_WINDOW=" + r.cfg.ResponseWindow.String(),
	}
	if agent != "" {
		e = append(e, "MCP_ACL_FILE="+strings.Join(append([]string{r.cfg.Policy}, r.cfg.Grants...), string(os.PathListSeparator)),
			"MCP_AGENT="+agent)
	}
	return e
}

func (r *run) header() {
	r.out.printf("mcp-fleet charter demo: six agents, four servers over stdio, local backends, no credentials\n")
	r.out.printf("state and logs: %s\n", r.cfg.Dir)
	r.out.printf("agent policy:   %s (the least-privilege default)\n", r.cfg.Policy)
	for _, s := range r.cfg.steps {
		r.out.printf("  widened by:   %s\n", s)
	}
	r.out.printf("\n")
	r.out.printf("  %6s  %-17s  %-8s  %-22s  %s\n", "time", "agent", "server", "tool", "result")
}

// line prints one transcript line.
func (r *run) line(agent, server, what, result string, took time.Duration) {
	ms := ""
	if took > 0 {
		ms = fmt.Sprintf("  (%.1f ms)", float64(took.Microseconds())/1000)
	}
	r.out.printf("  %5.2fs  %-17s  %-8s  %-22s  %s%s\n", time.Since(r.start).Seconds(), agent, server, what, result, ms)
}

// startWebhooks runs `avinode-mcp webhooks` — the receiver for Avinode's
// notifications and the processor that fetches what each points to — on a
// free loopback port, as the deployment's webhook service, and waits until
// it is healthy. On the simulated marketplace the service publishes the
// operators' answers and POSTs each notification to its receiver with the
// webhook credentials, as Avinode would; the processor then applies it to
// the store the avinode MCP processes share, whose change feed tells their
// subscribers.
func (r *run) startWebhooks(ctx context.Context) error {
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	secret := make([]byte, 24)
	if _, err := rand.Read(secret); err != nil {
		return err
	}
	log, err := os.Create(filepath.Join(r.cfg.Dir, "logs", "avinode-webhooks.log"))
	if err != nil {
		return err
	}
	r.hookLog = log
	cmd := exec.Command(r.cfg.binary("avinode"), "webhooks", "--listen", addr)
	cmd.Env = append(r.env(""), "AVINODE_WEBHOOK_CLIENT_ID=charter-demo", "AVINODE_WEBHOOK_CLIENT_SECRET="+hex.EncodeToString(secret))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the avinode webhook service: %w", err)
	}
	r.webhooks = cmd
	r.hookDone = make(chan error, 1)
	go func() { r.hookDone <- cmd.Wait() }()
	deadline := time.Now().Add(15 * time.Second)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/healthz", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-r.hookDone:
			r.webhooks = nil
			return fmt.Errorf("the avinode webhook service exited (%v); its log: %s", err, log.Name())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the avinode webhook service never became healthy on %s; its log: %s", addr, log.Name())
		}
	}
	r.line("(service)", "avinode", "webhooks", "receiver on "+addr+" (the simulated operators POST to it) and processor, healthy", 0)
	return nil
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// connect starts each agent's servers, one process per agent and server,
// as an MCP client configuration would.
func (r *run) connect(ctx context.Context) error {
	n := 0
	t0 := time.Now()
	for _, a := range agentServers {
		for _, s := range a.servers {
			logPath := filepath.Join(r.cfg.Dir, "logs", a.agent+"-"+s+".log")
			sess, err := dial(ctx, r.cfg.binary(s), a.agent, s, r.env(a.agent), logPath)
			if err != nil {
				return err
			}
			r.sessions[a.agent+"/"+s] = sess
			n++
		}
	}
	r.line("(clients)", "", "connect", fmt.Sprintf("%d stdio sessions for 6 agents, each with its MCP_AGENT identity", n), time.Since(t0))
	return nil
}

func (r *run) close() {
	for _, s := range r.sessions {
		s.close()
	}
	if r.webhooks != nil && r.webhooks.Process != nil {
		_ = r.webhooks.Process.Signal(syscall.SIGTERM)
		select {
		case <-r.hookDone:
		case <-time.After(5 * time.Second):
			_ = r.webhooks.Process.Kill()
			<-r.hookDone
		}
	}
	if r.hookLog != nil {
		_ = r.hookLog.Close()
	}
}

// do runs one tool call as agent on server, prints its line and counts it.
// summary turns the decoded result into the transcript's one line.
func (r *run) do(ctx context.Context, agent, server, tool string, args any, out any, summary func() string) error {
	s := r.sessions[agent+"/"+server]
	if s == nil {
		return fmt.Errorf("%s has no session with %s", agent, server)
	}
	t0 := time.Now()
	err := s.call(ctx, tool, args, out)
	took := time.Since(t0)
	r.res.Calls++
	if err != nil {
		r.res.Failed++
		r.line(agent, server, tool, "FAILED: "+err.Error(), took)
		return err
	}
	r.line(agent, server, tool, summary(), took)
	return nil
}

func (r *run) footer() {
	res := r.res
	r.out.printf("\nSUCCESS: request %s for %s — %d operators asked, %d quotes scored, proposal mailed.\n",
		short(res.RequestID), res.ClientName, res.OperatorsAsked, len(res.Ranking))
	r.out.printf("  %d tool calls and reads, %d failed, %d refused by the agent policy (on purpose), in %.1fs.\n",
		res.Calls, res.Failed, res.Refused, res.Elapsed.Seconds())
	r.out.printf("\nWhere to look:\n")
	r.out.printf("  proposal email  %s\n", res.EmailPath)
	r.out.printf("  client workbook %s\n", res.Workbook)
	r.out.printf("  workflow state  %s  (SQLite: iso_requests, iso_workflows, quotes, quote_scores, agent_errors)\n", res.Database)
	r.out.printf("  avinode store   %s  (trips, RFQs, quotes, webhook events)\n", filepath.Join(r.cfg.Dir, "data", "avinode", "avinode.db"))
	r.out.printf("  server logs     %s\n", filepath.Join(r.cfg.Dir, "logs"))
}

func short(id string) string {
	if i := strings.IndexByte(id, '-'); i > 0 {
		return id[:i]
	}
	return id
}
