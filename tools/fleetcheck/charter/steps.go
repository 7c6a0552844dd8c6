package charter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// The request the demo plays: a platinum client of the sample workbook
// flying six people coast to coast.
const (
	clientEmail = "priya.raman@example.com"
	fromICAO    = "KTEB" // Teterboro
	toICAO      = "KVNY" // Van Nuys
	passengers  = 6
	budgetUSD   = 130000
	deskPhone   = "+1-555-0100"
)

type rows[T any] struct {
	Rows     []T `json:"rows"`
	RowCount int `json:"row_count"`
}

type idRow struct {
	ID string `json:"id"`
}

// recordRequest: the orchestrator records the client's request and opens
// its workflow.
func (r *run) recordRequest(ctx context.Context) error {
	day := time.Now().UTC().AddDate(0, 0, 21)
	r.depDate = time.Date(day.Year(), day.Month(), day.Day(), 14, 0, 0, 0, time.UTC)
	var req rows[idRow]
	err := r.do(ctx, "orchestrator", "supabase", "supabase_insert", map[string]any{
		"table": "iso_requests",
		"data": rowsData(map[string]any{
			"client_email": clientEmail, "departure_airport": fromICAO, "arrival_airport": toICAO,
			"departure_date": r.depDate.Format(time.DateOnly), "passengers": passengers, "status": "new",
			"details": map[string]any{
				"source":     "email",
				"request":    fmt.Sprintf("Six of us, Teterboro to Van Nuys on %s around 2pm, one way. Budget about USD 130,000.", r.depDate.Format("January 2")),
				"max_budget": budgetUSD,
			},
		}),
	}, &req, func() string {
		return fmt.Sprintf("request %s recorded: %s→%s, %d passengers, %s", short(first(req.Rows).ID), fromICAO, toICAO, passengers,
			r.depDate.Format(time.DateOnly))
	})
	if err != nil {
		return err
	}
	if len(req.Rows) != 1 || req.Rows[0].ID == "" {
		return errors.New("supabase_insert iso_requests returned no row id")
	}
	r.res.RequestID = req.Rows[0].ID
	var wf rows[idRow]
	err = r.do(ctx, "orchestrator", "supabase", "supabase_insert", map[string]any{
		"table": "iso_workflows",
		"data":  rowsData(map[string]any{"request_id": r.res.RequestID, "state": "CREATED", "priority": "high"}),
	}, &wf, func() string {
		return fmt.Sprintf("workflow %s opened: CREATED, priority high", short(first(wf.Rows).ID))
	})
	if err != nil {
		return err
	}
	if len(wf.Rows) != 1 {
		return errors.New("supabase_insert iso_workflows returned no row")
	}
	r.res.WorkflowID = wf.Rows[0].ID
	return nil
}

func first[T any](xs []T) T {
	var zero T
	if len(xs) == 0 {
		return zero
	}
	return xs[0]
}

type clientRecord struct {
	ClientID    string `json:"client_id"`
	Name        string `json:"name"`
	Email       string `json:"email"`
	Phone       string `json:"phone"`
	Company     string `json:"company"`
	VIPStatus   string `json:"vip_status"`
	Preferences struct {
		AircraftCategory string `json:"aircraft_category"`
		Catering         string `json:"catering"`
	} `json:"preferences"`
}

// lookUpClient: the client-data agent finds the client in the client sheet,
// caches the profile and puts the name on the request.
func (r *run) lookUpClient(ctx context.Context) error {
	c := &r.client
	err := r.do(ctx, "client_data", "sheets", "get_client", map[string]any{"identifier": clientEmail}, c, func() string {
		return fmt.Sprintf("%s (%s), %s, %s, prefers %s aircraft", c.Name, c.ClientID, c.Company, c.VIPStatus, c.Preferences.AircraftCategory)
	})
	if err != nil {
		return err
	}
	if c.Name == "" {
		return errors.New("get_client returned no name")
	}
	r.res.ClientName, r.res.ClientEmail = c.Name, c.Email
	var cached rows[idRow]
	err = r.do(ctx, "client_data", "supabase", "supabase_insert", map[string]any{
		"table": "client_cache", "onConflict": "email",
		"data": rowsData(map[string]any{"client_id": c.ClientID, "email": c.Email, "name": c.Name, "company": c.Company, "phone": c.Phone,
			"vip_status": c.VIPStatus, "preferences": map[string]any{"aircraft_category": c.Preferences.AircraftCategory, "catering": c.Preferences.Catering}}),
	}, &cached, func() string { return "profile cached in client_cache (upsert on email)" })
	if err != nil {
		return err
	}
	var upd rows[idRow]
	return r.do(ctx, "client_data", "supabase", "supabase_update", map[string]any{
		"table": "iso_requests", "filters": whereEq("id", r.res.RequestID),
		"data": cells(map[string]any{"client_name": c.Name, "status": "client_identified"}),
	}, &upd, func() string {
		return fmt.Sprintf("request %s: client_name set, status client_identified", short(r.res.RequestID))
	})
}

type tripCreated struct {
	TripID         string `json:"trip_id"`
	DisplayID      string `json:"display_id"`
	DeepLink       string `json:"deep_link"`
	OperatorsAsked int    `json:"operators_asked"`
	Resources      struct {
		Quotes string `json:"quotes"`
	} `json:"resources"`
}

// createTrip: the flight-search agent creates the trip in Avinode (the
// simulated marketplace here), keeps the deep link for the user and notes
// the trip on the workflow.
func (r *run) createTrip(ctx context.Context) error {
	t := &r.trip
	category := r.client.Preferences.AircraftCategory
	args := map[string]any{
		"departure_airport": fromICAO, "arrival_airport": toICAO, "passengers": passengers,
		"departure_date":     r.depDate.Format(time.RFC3339),
		"external_reference": r.res.RequestID,
		"notes":              "client " + r.client.ClientID + "; catering " + r.client.Preferences.Catering,
	}
	if category != "" {
		args["aircraft_category"] = category
	}
	err := r.do(ctx, "flight_search", "avinode", "create_trip", args, t, func() string {
		return fmt.Sprintf("trip %s (%s) sent to %d operators; deep link %s", t.TripID, t.DisplayID, t.OperatorsAsked, t.DeepLink)
	})
	if err != nil {
		return err
	}
	if t.TripID == "" || t.Resources.Quotes == "" || t.DeepLink == "" {
		return errors.New("create_trip returned no trip id, deep link or quotes resource")
	}
	r.res.TripID, r.res.DeepLink = t.TripID, t.DeepLink
	var upd rows[idRow]
	return r.do(ctx, "flight_search", "supabase", "supabase_update", map[string]any{
		"table": "iso_workflows", "filters": whereEq("id", r.res.WorkflowID),
		"data": cells(map[string]any{"state": "AWAITING_QUOTES", "metadata": map[string]any{"avinode_trip_id": t.TripID, "deep_link": t.DeepLink}}),
	}, &upd, func() string { return "workflow: AWAITING_QUOTES, trip and deep link in metadata" })
}

type quotesDoc struct {
	Quotes      []quote `json:"quotes"`
	QuoteStatus struct {
		OperatorsAsked int `json:"operators_asked"`
		Responded      int `json:"responded"`
		Quoted         int `json:"quoted"`
		Declined       int `json:"declined"`
		Pending        int `json:"pending"`
		Declines       []struct {
			SellerName string `json:"seller_name"`
			Reason     string `json:"reason"`
		} `json:"declines"`
	} `json:"quote_status"`
}

type quote struct {
	QuoteID          string  `json:"quote_id"`
	RFQID            string  `json:"rfq_id"`
	OperatorID       string  `json:"operator_id"`
	OperatorName     string  `json:"operator_name"`
	AircraftType     string  `json:"aircraft_type"`
	AircraftCategory string  `json:"aircraft_category"`
	AircraftTail     string  `json:"aircraft_tail"`
	AircraftCapacity int     `json:"aircraft_capacity"`
	YearOfMake       int     `json:"year_of_make"`
	Currency         string  `json:"currency"`
	BasePrice        float64 `json:"base_price"`
	TaxesFees        float64 `json:"taxes_fees"`
	TotalPrice       float64 `json:"total_price"`
	Breakdown        []struct {
		Label string `json:"label"`
		Kind  string `json:"kind"`
	} `json:"breakdown"`
	ValidUntil string `json:"valid_until"`
}

// awaitQuotes: the proposal-analysis agent subscribes to the trip's quotes
// resource and reads it again each time the server says it changed — each
// change an operator's answer that came in as a webhook event and was
// processed into the store — until every operator has answered or the wait
// is over.
func (r *run) awaitQuotes(ctx context.Context) error {
	const agent = "proposal_analysis"
	s := r.sessions[agent+"/avinode"]
	uri := r.trip.Resources.Quotes
	t0 := time.Now()
	if err := s.subscribe(ctx, uri); err != nil {
		r.res.Failed++
		return err
	}
	r.line(agent, "avinode", "subscribe", uri, time.Since(t0))
	deadline := time.Now().Add(r.cfg.QuoteWait)
	read := func(event string) error {
		t0 := time.Now()
		r.res.Calls++
		if err := s.read(ctx, uri, &r.quotes); err != nil {
			r.res.Failed++
			return err
		}
		st := r.quotes.QuoteStatus
		r.line(agent, "avinode", event, fmt.Sprintf("%d quoted, %d declined, %d pending of %d operators",
			st.Quoted, st.Declined, st.Pending, st.OperatorsAsked), time.Since(t0))
		return nil
	}
	if err := read("resources/read"); err != nil {
		return err
	}
	for r.quotes.QuoteStatus.Pending > 0 && time.Now().Before(deadline) {
		wctx, cancel := context.WithDeadline(ctx, deadline)
		err := s.updated(wctx, uri)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			break // the wait is over; rank what came in
		}
		r.res.Updates++
		if err := read("updated → read"); err != nil {
			return err
		}
	}
	st := r.quotes.QuoteStatus
	r.res.OperatorsAsked, r.res.Quotes, r.res.Declines = st.OperatorsAsked, len(r.quotes.Quotes), st.Declined
	for _, d := range st.Declines {
		r.line(agent, "avinode", "  decline", d.SellerName+": "+d.Reason, 0)
	}
	if st.Pending > 0 {
		r.line(agent, "avinode", "  still silent", fmt.Sprintf("%d operator(s); ranking the %d quotes in hand", st.Pending, len(r.quotes.Quotes)), 0)
	}
	if r.res.Updates == 0 {
		return fmt.Errorf("no notifications/resources/updated for %s within %s", uri, r.cfg.QuoteWait)
	}
	if len(r.quotes.Quotes) == 0 {
		return fmt.Errorf("no operator quoted trip %s within %s", r.trip.TripID, r.cfg.QuoteWait)
	}
	return nil
}

// refusedCall: the proposal-analysis agent, whose policy is read-only on
// Avinode, tries to cancel the trip. The server must refuse it.
func (r *run) refusedCall(ctx context.Context) error {
	const agent = "proposal_analysis"
	t0 := time.Now()
	err := r.sessions[agent+"/avinode"].call(ctx, "cancel_trip", map[string]any{"trip_id": r.trip.TripID, "reason": "OTHER"}, nil)
	took := time.Since(t0)
	r.res.Calls++
	var ce *callError
	if errors.As(err, &ce) && ce.Body.Code == mcperr.PermissionDeny {
		r.res.Refused++
		r.line(agent, "avinode", "cancel_trip", "REFUSED as it must be: "+string(ce.Body.Code)+" ("+ce.Body.Message+")", took)
		return nil
	}
	r.res.Failed++
	if err == nil {
		r.line(agent, "avinode", "cancel_trip", "NOT REFUSED: the policy let a read-only agent cancel the trip", took)
		return errors.New("cancel_trip by proposal_analysis was not refused")
	}
	r.line(agent, "avinode", "cancel_trip", "FAILED otherwise than refused: "+err.Error(), took)
	return fmt.Errorf("cancel_trip by proposal_analysis: want PERMISSION_DENIED, got %w", err)
}

// usdPer converts the simulated operators' currencies at a fixed rate: the
// analysis compares prices, it does not settle them.
var usdPer = map[string]float64{"USD": 1, "EUR": 1.08, "GBP": 1.27}

// assess is the analysis agent's judgement of a quote beside its price:
// safety from the aircraft's age, comfort from its cabin class, and flight
// time from the operator's breakdown.
func assess(q quote, now time.Time) (safety, comfort float64, minutes int) {
	age := now.Year() - q.YearOfMake
	safety = math.Max(3, math.Min(5, 5-0.1*float64(max(0, age-3))))
	comfort = map[string]float64{"light": 3.0, "midsize": 3.8, "heavy": 4.5, "ultra-long-range": 4.8}[q.AircraftCategory]
	if comfort == 0 {
		comfort = 3.5
	}
	for _, b := range q.Breakdown {
		var hours float64
		if b.Kind == "flight" {
			if _, err := fmt.Sscanf(b.Label, "Flight time %f h", &hours); err == nil {
				minutes = int(math.Round(hours * 60))
			}
		}
	}
	return math.Round(safety*10) / 10, comfort, minutes
}

type scoreRow struct {
	QuoteID      string  `json:"quote_id"`
	PriceScore   float64 `json:"price_score"`
	SafetyScore  float64 `json:"safety_score"`
	SpeedScore   float64 `json:"speed_score"`
	ComfortScore float64 `json:"comfort_score"`
	TotalScore   float64 `json:"total_score"`
	Rank         int     `json:"rank"`
}

// scoreQuotes: the proposal-analysis agent stores the quotes, scores them
// with the database's calculate_quote_scores, stores the ranking and marks
// the workflow ready.
func (r *run) scoreQuotes(ctx context.Context) error {
	const agent = "proposal_analysis"
	now := time.Now()
	var data []map[string]any
	for _, q := range r.quotes.Quotes {
		rate, ok := usdPer[q.Currency]
		if !ok {
			rate = 1
		}
		safety, comfort, minutes := assess(q, now)
		row := map[string]any{
			"rfp_id": r.trip.TripID, "request_id": r.res.RequestID, "operator_id": q.OperatorID, "operator_name": q.OperatorName,
			"aircraft_type": q.AircraftType, "aircraft_id": q.AircraftTail,
			"base_price_usd": math.Round(q.BasePrice * rate), "taxes_fees_usd": math.Round(q.TaxesFees * rate),
			"total_price_usd": math.Round(q.TotalPrice * rate), "safety_rating": safety, "comfort_rating": comfort,
			"valid_until": q.ValidUntil, "status": "received", "notes": "avinode " + q.QuoteID,
		}
		if minutes > 0 {
			row["flight_time_minutes"] = minutes
		}
		data = append(data, row)
	}
	var stored rows[struct {
		ID    string `json:"id"`
		Notes string `json:"notes"`
	}]
	err := r.do(ctx, agent, "supabase", "supabase_insert", map[string]any{"table": "quotes", "data": rowsData(data...)}, &stored,
		func() string { return fmt.Sprintf("%d quotes stored for trip %s", stored.RowCount, r.trip.TripID) })
	if err != nil {
		return err
	}
	if len(stored.Rows) != len(data) {
		return fmt.Errorf("supabase_insert quotes stored %d rows of %d", len(stored.Rows), len(data))
	}
	byAvinodeID := map[string]quote{}
	for _, q := range r.quotes.Quotes {
		byAvinodeID[q.QuoteID] = q
	}
	r.stored = map[string]quote{}
	var scoring []map[string]any
	for i, row := range stored.Rows {
		r.stored[row.ID] = byAvinodeID[strings.TrimPrefix(row.Notes, "avinode ")]
		in := map[string]any{"id": row.ID}
		for _, k := range []string{"total_price_usd", "safety_rating", "comfort_rating", "flight_time_minutes"} {
			if v, ok := data[i][k]; ok {
				in[k] = v
			}
		}
		scoring = append(scoring, in)
	}
	var scores rows[scoreRow]
	err = r.do(ctx, agent, "supabase", "supabase_rpc", map[string]any{
		"function": "calculate_quote_scores",
		"params":   params(map[string]any{"quotes": scoring, "client_preferences": map[string]any{"max_budget": budgetUSD}}),
	}, &scores, func() string {
		best := first(scores.Rows)
		return fmt.Sprintf("calculate_quote_scores: %d scored, best %s at %.0f/100", len(scores.Rows), short(best.QuoteID), best.TotalScore)
	})
	if err != nil {
		return err
	}
	if len(scores.Rows) != len(scoring) {
		return fmt.Errorf("calculate_quote_scores scored %d quotes of %d", len(scores.Rows), len(scoring))
	}
	var ranking []map[string]any
	for _, s := range scores.Rows {
		ranking = append(ranking, map[string]any{"rfp_id": r.trip.TripID, "quote_id": s.QuoteID, "price_score": s.PriceScore,
			"safety_score": s.SafetyScore, "speed_score": s.SpeedScore, "comfort_score": s.ComfortScore,
			"total_score": s.TotalScore, "rank": s.Rank})
	}
	var saved rows[idRow]
	err = r.do(ctx, agent, "supabase", "supabase_insert", map[string]any{"table": "quote_scores", "data": rowsData(ranking...)}, &saved,
		func() string { return fmt.Sprintf("ranking of %d stored in quote_scores", saved.RowCount) })
	if err != nil {
		return err
	}
	var upd rows[idRow]
	return r.do(ctx, agent, "supabase", "supabase_update", map[string]any{
		"table": "iso_workflows", "filters": whereEq("id", r.res.WorkflowID), "data": cells(map[string]any{"state": "PROPOSAL_READY"}),
	}, &upd, func() string { return "workflow: PROPOSAL_READY" })
}

type proposalRow struct {
	QuoteID       string  `json:"quote_id"`
	Rank          int     `json:"rank"`
	TotalScore    float64 `json:"total_score"`
	OperatorName  string  `json:"operator_name"`
	AircraftType  string  `json:"aircraft_type"`
	TotalPriceUSD float64 `json:"total_price_usd"`
	ValidUntil    string  `json:"valid_until"`
}

// sendProposal: the communication agent reads the ranking and mails the
// best options to the client with the flight_proposal template.
func (r *run) sendProposal(ctx context.Context) error {
	const agent = "communication"
	var ranked rows[proposalRow]
	err := r.do(ctx, agent, "supabase", "supabase_query", map[string]any{
		"table": "ranked_proposals", "filters": whereEq("request_id", r.res.RequestID),
		"orderBy": []any{map[string]any{"column": "rank", "direction": "asc"}}, "limit": 3,
	}, &ranked, func() string {
		b := first(ranked.Rows)
		return fmt.Sprintf("top %d of ranked_proposals: #1 %s, %s, USD %.0f, %.0f/100", len(ranked.Rows), b.OperatorName, b.AircraftType,
			b.TotalPriceUSD, b.TotalScore)
	})
	if err != nil {
		return err
	}
	if len(ranked.Rows) == 0 {
		return errors.New("ranked_proposals has no rows for the request")
	}
	var aircraft []map[string]any
	for _, p := range ranked.Rows {
		q := r.stored[p.QuoteID]
		r.res.Ranking = append(r.res.Ranking, Ranked{Rank: p.Rank, Operator: p.OperatorName, Aircraft: p.AircraftType,
			PriceUSD: p.TotalPriceUSD, Score: p.TotalScore, AvinodeQuote: q.QuoteID})
		aircraft = append(aircraft, map[string]any{"type": p.AircraftType, "operator_name": p.OperatorName, "price_usd": p.TotalPriceUSD,
			"capacity": q.AircraftCapacity, "features": fmt.Sprintf("rank %d, score %.0f/100", p.Rank, p.TotalScore)})
	}
	validUntil := r.depDate
	if t, err := time.Parse(time.RFC3339, first(ranked.Rows).ValidUntil); err == nil {
		validUntil = t
	}
	var sent struct {
		ID        string `json:"id"`
		MessageID string `json:"message_id"`
		Subject   string `json:"subject"`
	}
	err = r.do(ctx, agent, "gmail", "send_template_email", map[string]any{
		"to": r.res.ClientName + " <" + r.res.ClientEmail + ">", "template_name": "flight_proposal",
		"template_data": templateData(map[string]any{
			"client_name": r.res.ClientName, "departure_airport": fromICAO + " (Teterboro)", "arrival_airport": toICAO + " (Van Nuys)",
			"departure_date": r.depDate.Format(time.DateOnly), "passengers": passengers, "aircraft": aircraft,
			"contact_phone": deskPhone, "agent_name": "The Charter Desk", "valid_until": validUntil.Format(time.DateOnly),
		}),
	}, &sent, func() string { return fmt.Sprintf("sent %q", sent.Subject) })
	if err != nil {
		return err
	}
	r.res.EmailMessageID = sent.MessageID
	r.res.Mailbox = filepath.Join(r.cfg.Dir, "data", "gmail", "mailbox")
	r.res.EmailPath = filepath.Join(r.res.Mailbox, "sent", sent.ID+".eml")
	var upd rows[idRow]
	return r.do(ctx, agent, "supabase", "supabase_update", map[string]any{
		"table": "iso_workflows", "filters": whereEq("id", r.res.WorkflowID),
		"data": cells(map[string]any{"state": "PROPOSAL_SENT", "email_sent_at": time.Now().UTC().Format(time.RFC3339), "email_message_id": sent.MessageID}),
	}, &upd, func() string { return "workflow: PROPOSAL_SENT, email_message_id recorded" })
}

type webhookEvents struct {
	Events []struct {
		Status            string `json:"status"`
		EventType         string `json:"event_type"`
		Source            string `json:"source"`
		SourceIP          string `json:"source_ip"`
		SignatureVerified bool   `json:"signature_verified"`
	} `json:"events"`
	Queue map[string]int `json:"queue"`
}

// monitor: the error monitor reviews the trip's webhook events (a dead
// letter would be an error to report) and logs a simulated failure.
func (r *run) monitor(ctx context.Context) error {
	const agent = "error_monitor"
	var ev webhookEvents
	err := r.do(ctx, agent, "avinode", "list_webhook_events", map[string]any{"trip_id": r.trip.TripID, "limit": 200}, &ev, func() string {
		kinds := map[string]int{}
		for _, e := range ev.Events {
			kinds[e.EventType]++
			if e.Status == "completed" {
				r.res.WebhookCompleted++
			}
			if e.Source == "avinode" && e.SourceIP != "" {
				r.res.WebhookViaReceiver++
			}
		}
		r.res.WebhookEvents = len(ev.Events)
		var parts []string
		for _, k := range []string{"quote_received", "rfq_declined", "quote_updated", "unchanged"} {
			if kinds[k] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", kinds[k], k))
			}
		}
		return fmt.Sprintf("%d events for the trip (%s), %d received over HTTP; dead letter: %d", len(ev.Events),
			strings.Join(parts, ", "), r.res.WebhookViaReceiver, ev.Queue["dead_letter"])
	})
	var ce *callError
	if errors.As(err, &ce) && ce.Body.Code == mcperr.PermissionDeny {
		return fmt.Errorf("the error monitor may not read the webhook queue: give the servers the opt-in grant file "+
			"configs/acl.d/error-monitor-webhook-queue.yaml after the policy (charter-demo --grant): %w", err)
	}
	if err != nil {
		return err
	}
	var logged rows[idRow]
	return r.do(ctx, agent, "supabase", "supabase_insert", map[string]any{
		"table": "agent_errors",
		"data": rowsData(map[string]any{"workflow_id": r.res.WorkflowID, "agent_type": "communication", "task_id": "follow-up-" + short(r.res.RequestID),
			"error_type": "SIMULATED_TIMEOUT", "error_message": "simulated: the follow-up reminder could not be scheduled (demo failure)",
			"retry_count": 1}),
	}, &logged, func() string {
		return fmt.Sprintf("simulated failure logged in agent_errors (%s)", short(first(logged.Rows).ID))
	})
}

// verify checks the run's output where a person would look for it.
func (r *run) verify() error {
	eml, err := os.ReadFile(r.res.EmailPath)
	if err != nil {
		return fmt.Errorf("the proposal email is not in the mailbox: %w", err)
	}
	for _, want := range []string{"To: ", r.res.ClientEmail, "Subject: ", "Message-ID: " + r.res.EmailMessageID} {
		if !strings.Contains(string(eml), want) {
			return fmt.Errorf("the proposal email %s lacks %q", r.res.EmailPath, want)
		}
	}
	r.res.Workbook = filepath.Join(r.cfg.Dir, "data", "sheets", "workbook")
	r.res.Database = filepath.Join(r.cfg.Dir, "data", "supabase", "supabase.db")
	for _, p := range []string{r.res.Workbook, r.res.Database} {
		if _, err := os.Stat(p); err != nil {
			return err
		}
	}
	if r.res.Failed != 0 {
		return fmt.Errorf("%d calls failed", r.res.Failed)
	}
	return nil
}

// templateData writes a template's data as send_template_email takes it:
// name/value pairs, sorted by name, with lists and objects as JSON text.
func templateData(m map[string]any) []map[string]string {
	out := []map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v, ok := m[k].(string)
		if !ok {
			b, _ := json.Marshal(m[k])
			v = string(b)
		}
		out = append(out, map[string]string{"name": k, "value": v})
	}
	return out
}
