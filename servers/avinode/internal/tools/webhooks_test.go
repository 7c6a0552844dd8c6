package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
	"github.com/mcp-fleet/mcp-fleet/shared/mcptest"
)

type eventRow struct {
	ID             string `json:"event_id"`
	AvinodeEventID string `json:"avinode_event_id"`
	EventType      string `json:"event_type"`
	ResourceType   string `json:"resource_type"`
	TripID         string `json:"trip_id"`
	Status         string `json:"status"`
	RetryCount     int    `json:"retry_count"`
	LastError      string `json:"last_error"`
	RequeueCount   int    `json:"requeue_count"`
}

type eventsResult struct {
	Events     []eventRow     `json:"events"`
	Total      int            `json:"total"`
	Queue      map[string]int `json:"queue"`
	NextBefore string         `json:"next_before"`
}

// TestWebhookTools: list_webhook_events shows what the simulated
// marketplace's pointers became, filtered and paged; requeue_webhook_event
// puts a dead-letter event back, and refuses what cannot be requeued.
func TestWebhookTools(t *testing.T) {
	e := newMockEnv(t)
	c := e.c
	ctx := context.Background()
	var trip tripResult
	mcptest.OK(t, c.Call("create_trip", map[string]any{"departure_airport": "KTEB", "arrival_airport": "KVNY", "passengers": 6,
		"departure_date": futureDate(e.clock, 72*time.Hour)}), &trip)
	e.clock.Advance(3 * time.Minute)
	if _, err := e.m.Deliver(ctx, ""); err != nil {
		t.Fatal(err)
	}
	e.process(t)

	var all eventsResult
	res := c.Call("list_webhook_events", map[string]any{})
	mcptest.Structured(t, res, &all)
	if all.Total == 0 || all.Queue["completed"] != all.Total || all.Queue["dead_letter"] != 0 || all.NextBefore != "" {
		t.Fatalf("list = %+v", all)
	}
	if !strings.Contains(mcptest.Text(res), "untrusted-data-") {
		t.Errorf("event listings are not fenced: %.200s", mcptest.Text(res))
	}
	var byTrip, quotes, page eventsResult
	mcptest.Structured(t, c.Call("list_webhook_events", map[string]any{"trip_id": trip.TripID, "status": "completed"}), &byTrip)
	mcptest.Structured(t, c.Call("list_webhook_events", map[string]any{"type": "quote_received"}), &quotes)
	mcptest.Structured(t, c.Call("list_webhook_events", map[string]any{"limit": 1}), &page)
	if byTrip.Total != all.Total || quotes.Total == 0 || page.Total != 1 || page.NextBefore != page.Events[0].ID {
		t.Errorf("by trip %d, quotes %d, page %+v", byTrip.Total, quotes.Total, page)
	}
	for _, ev := range quotes.Events {
		if ev.EventType != "quote_received" || ev.TripID != trip.TripID || ev.ResourceType != "rfqs" {
			t.Errorf("quote event %+v", ev)
		}
	}
	var next eventsResult
	mcptest.Structured(t, c.Call("list_webhook_events", map[string]any{"limit": 200, "before": page.NextBefore}), &next)
	if next.Total != all.Total-1 {
		t.Errorf("the next page has %d of %d", next.Total, all.Total-1)
	}

	// A pointer the processor cannot fetch goes to the dead letter…
	raw, _ := json.Marshal(map[string]string{"id": "asellermsg-9", "href": "https://elsewhere.example/api/tripmsgs/asellermsg-9", "type": "tripmsgs"})
	if _, _, err := e.st.ReceiveWebhookEvent(ctx, store.Incoming{Pointer: store.Pointer{ID: "asellermsg-9", Type: "tripmsgs",
		Href: "https://elsewhere.example/api/tripmsgs/asellermsg-9"}, Raw: raw, Source: store.SourceAvinode, ReceivedAt: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	e.process(t)
	var dead eventsResult
	mcptest.Structured(t, c.Call("list_webhook_events", map[string]any{"status": "dead_letter"}), &dead)
	if dead.Total != 1 || !strings.Contains(dead.Events[0].LastError, "not under the API root") || dead.Queue["dead_letter"] != 1 {
		t.Fatalf("dead letter = %+v", dead)
	}
	// …and is requeued once.
	var requeued struct {
		Event eventRow `json:"event"`
		Note  string   `json:"note"`
	}
	mcptest.Structured(t, c.Call("requeue_webhook_event", map[string]any{"event_id": dead.Events[0].ID}), &requeued)
	if requeued.Event.Status != "pending" || requeued.Event.RequeueCount != 1 || requeued.Note == "" {
		t.Errorf("requeue = %+v", requeued)
	}
	b := mcptest.FailCode(t, c.Call("requeue_webhook_event", map[string]any{"event_id": dead.Events[0].ID}), mcperr.Conflict)
	if !strings.Contains(b.Message, "pending") {
		t.Errorf("requeueing a pending event: %q", b.Message)
	}
	mcptest.FailCode(t, c.Call("requeue_webhook_event", map[string]any{"event_id": all.Events[0].ID}), mcperr.Conflict)
	failField(t, c.Call("requeue_webhook_event", map[string]any{"event_id": "wh-00000000000000000000"}), mcperr.NotFound, "event_id")
	failField(t, c.Call("requeue_webhook_event", map[string]any{"event_id": "42"}), mcperr.Validation, "event_id")
	failField(t, c.Call("list_webhook_events", map[string]any{"status": "lost"}), mcperr.Validation, "status")
	failField(t, c.Call("list_webhook_events", map[string]any{"before": "wh-00000000000000000000"}), mcperr.Validation, "before")
	failField(t, c.Call("list_webhook_events", map[string]any{"limit": 0}), mcperr.Validation, "limit")
}
