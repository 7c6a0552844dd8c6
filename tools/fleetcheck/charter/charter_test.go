package charter

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/internal/testbin"
)

var (
	buildOnce sync.Once
	binDir    string
)

// servers builds the four servers the workflow uses, once per test binary.
func servers(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "charter-bin-")
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"avinode", "gmail", "sheets", "supabase"} {
			testbin.Server(t, dir, s)
		}
		binDir = dir
	})
	if binDir == "" {
		t.Fatal("the servers did not build")
	}
	return binDir
}

func policy(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../../configs/acl.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// grants are the opt-in grant files the workflow needs (the error
// monitor's webhook-queue review), as `make demo` gives them.
func grants(t *testing.T) []string {
	t.Helper()
	p, err := filepath.Abs("../../../configs/acl.d/error-monitor-webhook-queue.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return []string{p}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// TestWorkflow plays the whole workflow on freshly built servers and checks
// what each agent left behind, reading it back as the agents would.
func TestWorkflow(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	var out bytes.Buffer
	res, err := Run(context.Background(), Config{Bin: servers(t), Policy: policy(t), Grants: grants(t), Dir: dir, Out: &out})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	transcript := out.String()
	if res.Failed != 0 || res.Refused != 1 {
		t.Errorf("failed %d, refused %d; want 0 and 1\n%s", res.Failed, res.Refused, transcript)
	}
	if res.Updates < 1 || res.Quotes < 1 || res.OperatorsAsked < res.Quotes {
		t.Errorf("updates %d, quotes %d of %d operators", res.Updates, res.Quotes, res.OperatorsAsked)
	}
	if len(res.Ranking) == 0 || len(res.Ranking) > 3 {
		t.Fatalf("ranking %+v", res.Ranking)
	}
	for i, rk := range res.Ranking {
		if rk.Rank != i+1 || !strings.HasPrefix(rk.AvinodeQuote, "aquote-") || rk.PriceUSD <= 0 {
			t.Errorf("ranking[%d] = %+v", i, rk)
		}
		if i > 0 && rk.Score > res.Ranking[i-1].Score {
			t.Errorf("ranking not by score: %+v", res.Ranking)
		}
	}
	if res.WebhookEvents < 1 || res.WebhookCompleted < 1 || res.WebhookViaReceiver != res.WebhookEvents {
		t.Errorf("webhook events %d, completed %d, through the receiver %d", res.WebhookEvents, res.WebhookCompleted, res.WebhookViaReceiver)
	}
	for _, want := range []string{"REFUSED as it must be: PERMISSION_DENIED", "SUCCESS: request", res.EmailPath, "updated → read",
		"widened by:   error-monitor-webhook-queue.yaml — Reporting failed Avinode webhook events"} {
		if !strings.Contains(transcript, want) {
			t.Errorf("transcript lacks %q:\n%s", want, transcript)
		}
	}
	eml, err := os.ReadFile(res.EmailPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"priya.raman@example.com", "Your flight options: KTEB", res.Ranking[0].Operator, "Content-Type: multipart/alternative"} {
		if !bytes.Contains(eml, []byte(want)) {
			t.Errorf("the proposal email lacks %q", want)
		}
	}

	// Read the workflow state back through the server, as the orchestrator.
	sess, err := dial(context.Background(), filepath.Join(servers(t), "supabase-mcp"), "orchestrator", "supabase",
		(&run{cfg: Config{Dir: dir, Policy: policy(t)}}).env("orchestrator"), filepath.Join(t.TempDir(), "check.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer sess.close()
	var wf rows[struct {
		State          string `json:"state"`
		EmailMessageID string `json:"email_message_id"`
		Metadata       struct {
			TripID string `json:"avinode_trip_id"`
		} `json:"metadata"`
	}]
	if err := sess.call(context.Background(), "supabase_query", map[string]any{"table": "iso_workflows",
		"filters": whereEq("id", res.WorkflowID)}, &wf); err != nil {
		t.Fatal(err)
	}
	if len(wf.Rows) != 1 || wf.Rows[0].State != "PROPOSAL_SENT" || wf.Rows[0].EmailMessageID != res.EmailMessageID ||
		wf.Rows[0].Metadata.TripID != res.TripID {
		t.Errorf("workflow row %+v", wf.Rows)
	}
	var scored rows[idRow]
	if err := sess.call(context.Background(), "supabase_query", map[string]any{"table": "quote_scores",
		"filters": whereEq("rfp_id", res.TripID)}, &scored); err != nil {
		t.Fatal(err)
	}
	if len(scored.Rows) != res.Quotes {
		t.Errorf("%d quote_scores rows for %d quotes", len(scored.Rows), res.Quotes)
	}
	var errs rows[struct {
		ErrorType string `json:"error_type"`
	}]
	if err := sess.call(context.Background(), "supabase_query", map[string]any{"table": "agent_errors",
		"filters": whereEq("workflow_id", res.WorkflowID)}, &errs); err != nil {
		t.Fatal(err)
	}
	if len(errs.Rows) != 1 || errs.Rows[0].ErrorType != "SIMULATED_TIMEOUT" {
		t.Errorf("agent_errors rows %+v", errs.Rows)
	}

	// A second run empties the first one's directory and starts afresh.
	if err := prepare(dir); err != nil {
		t.Fatalf("a previous run's directory: %v", err)
	}
	if _, err := os.Stat(res.EmailPath); !os.IsNotExist(err) {
		t.Errorf("the previous run's email survived: %v", err)
	}
}

// TestPolicyThatAllowsTooMuch: when the policy lets the read-only analysis
// agent cancel trips, the demo must say so and fail rather than pass.
func TestPolicyThatAllowsTooMuch(t *testing.T) {
	raw, err := os.ReadFile(policy(t))
	if err != nil {
		t.Fatal(err)
	}
	loose := strings.Replace(string(raw), "tools: [get_rfq, get_quotes,", "tools: [get_rfq, get_quotes, cancel_trip,", 1)
	if loose == string(raw) {
		t.Fatal("the policy no longer lists proposal_analysis's tools as this test expects")
	}
	p := filepath.Join(t.TempDir(), "acl.yaml")
	if err := os.WriteFile(p, []byte(loose), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res, err := Run(context.Background(), Config{Bin: servers(t), Policy: p, Grants: grants(t), Dir: filepath.Join(t.TempDir(), "run"), Out: &out,
		QuoteWait: 3 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "was not refused") {
		t.Fatalf("err = %v, want the refusal check to fail\n%s", err, out.String())
	}
	if res.Refused != 0 || res.Failed != 1 || !strings.Contains(out.String(), "NOT REFUSED") || !strings.Contains(out.String(), "FAILED:") {
		t.Errorf("refused %d failed %d\n%s", res.Refused, res.Failed, out.String())
	}
}

// TestWorkflowWithThePolicyAlone: the least-privilege policy does not let
// the error monitor read the webhook queue; without the opt-in grant file
// the demo fails at that step, naming the file it needs.
func TestWorkflowWithThePolicyAlone(t *testing.T) {
	var out bytes.Buffer
	_, err := Run(context.Background(), Config{Bin: servers(t), Policy: policy(t), Dir: filepath.Join(t.TempDir(), "run"), Out: &out,
		QuoteWait: 3 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "error-monitor-webhook-queue.yaml") {
		t.Fatalf("err = %v, want the missing grant named\n%s", err, out.String())
	}
	if strings.Contains(out.String(), "widened by") {
		t.Errorf("the transcript claims a widening:\n%s", out.String())
	}
}

func TestConfigErrors(t *testing.T) {
	bin := servers(t)
	empty := t.TempDir()
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no bin", Config{Policy: policy(t), Dir: t.TempDir()}, "Bin is required"},
		{"no servers", Config{Bin: empty, Policy: policy(t), Dir: t.TempDir()}, "avinode-mcp is not in"},
		{"no policy", Config{Bin: bin, Policy: filepath.Join(empty, "acl.yaml"), Dir: t.TempDir()}, "the agent policy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Run(context.Background(), c.cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

func TestPrepareRefusesSomeoneElsesDirectory(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(keep, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := prepare(dir)
	if err == nil || !strings.Contains(err.Error(), "not a previous demo run's") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("the file was lost: %v", err)
	}
	fresh := filepath.Join(dir, "new", "run")
	if err := prepare(fresh); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"data", "logs", "home", marker} {
		if _, err := os.Stat(filepath.Join(fresh, d)); err != nil {
			t.Error(err)
		}
	}
}

func TestAssess(t *testing.T) {
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	mk := func(category string, year int, label string) quote {
		q := quote{AircraftCategory: category, YearOfMake: year}
		q.Breakdown = append(q.Breakdown, struct {
			Label string `json:"label"`
			Kind  string `json:"kind"`
		}{label, "flight"})
		return q
	}
	cases := []struct {
		q               quote
		safety, comfort float64
		minutes         int
	}{
		{mk("heavy", 2024, "Flight time 4.9 h at USD 9800/h"), 5, 4.5, 294},
		{mk("midsize", 2013, "Flight time 1.25 h at USD 4300/h"), 4, 3.8, 75},
		{mk("light", 1990, "Flight time 2 h"), 3, 3.0, 120},
		{mk("", 2020, "Positioning"), 4.7, 3.5, 0},
	}
	for _, c := range cases {
		s, cm, m := assess(c.q, now)
		if s != c.safety || cm != c.comfort || m != c.minutes {
			t.Errorf("assess(%s %d %q) = %v %v %v, want %v %v %v", c.q.AircraftCategory, c.q.YearOfMake, c.q.Breakdown[0].Label,
				s, cm, m, c.safety, c.comfort, c.minutes)
		}
	}
}
