package tools

import (
	"context"
	"errors"

	"github.com/mcp-fleet/mcp-fleet/servers/avinode/internal/store"
	"github.com/mcp-fleet/mcp-fleet/shared/kit"
	"github.com/mcp-fleet/mcp-fleet/shared/mcperr"
)

// WebhookTools returns list_webhook_events and requeue_webhook_event: the
// operations view of the webhook event queue.
func WebhookTools(d Deps) []kit.Tool {
	return []kit.Tool{listWebhookEvents(d), requeueWebhookEvent(d)}
}

// webhookSource names the content of event listings for fenced results:
// pointers as Avinode sent them, and upstream error texts.
const webhookSource = "Avinode webhook notifications and upstream error messages"

type listEventsArgs struct {
	TripID string `json:"trip_id,omitempty" jsonschema:"only events of this trip: its id (atrip-…) or Avinode's short trip reference from the notification" mcp:"maxLength=64" pattern:"^[A-Za-z0-9-]{1,64}$"`
	Type   string `json:"type,omitempty" jsonschema:"only events of this type: what processing found (quote_received, quote_updated, rfq_declined, rfq_cancelled, rfq_updated, message_received, unchanged, unsupported) or the notification's resource type (rfqs, tripmsgs)" mcp:"maxLength=64" pattern:"^[A-Za-z_-]{1,64}$"`
	Status string `json:"status,omitempty" jsonschema:"only events in this status" mcp:"enum=pending|processing|completed|failed|dead_letter"`
	Limit  int    `json:"limit,omitempty" jsonschema:"most events to return, newest first" mcp:"min=1,max=200,default=50"`
	Before string `json:"before,omitempty" jsonschema:"the next page: the event_id next_before gave" pattern:"^wh-[0-9a-f]{20}$"`
}

type listEventsResult struct {
	Events []store.WebhookEvent `json:"events"`
	Total  int                  `json:"total"`
	// Queue counts every stored event by status, whatever the filter.
	Queue map[string]int `json:"queue"`
	// Truncated: the result budget cut the page short. NextBefore, when
	// set, asks for the next (older) page.
	Truncated  bool   `json:"truncated"`
	NextBefore string `json:"next_before,omitempty"`
}

func listWebhookEvents(d Deps) kit.Tool {
	return kit.NewTool(kit.Tool{
		Name:  "list_webhook_events",
		Title: "List webhook events",
		Description: "List the webhook notifications Avinode (or the simulated marketplace) sent — each a pointer to a quote, an " +
			"RFQ or a message that the server fetched and stored — newest first, with where each stands: pending, processing, " +
			"completed (with what it turned out to be: quote_received, rfq_declined, message_received…), failed (retried " +
			"with backoff; next_retry_at) or dead_letter (given up; last_error says why). Filter by trip, type or status; " +
			"queue counts all events by status. Use it to review the dead letter before requeue_webhook_event.",
		Paging: "ask for the next page with before set to next_before, or for fewer events with limit",
		Effect: kit.ReadOnly,
	}, func(ctx context.Context, c *kit.Call, a listEventsArgs) (kit.Fenced[listEventsResult], error) {
		var none kit.Fenced[listEventsResult]
		// One more than asked tells whether another page follows.
		evs, err := d.Store.WebhookEvents(ctx, store.EventFilter{TripID: a.TripID, Type: a.Type, Status: a.Status,
			Before: a.Before, Limit: a.Limit + 1})
		if errors.Is(err, store.ErrNotFound) {
			return none, mcperr.Invalid("before", a.Before, "an event_id from a previous listing", "no webhook event %s exists", a.Before)
		}
		if err != nil {
			return none, err
		}
		counts, err := d.Store.WebhookEventCounts(ctx)
		if err != nil {
			return none, err
		}
		res := listEventsResult{Events: []store.WebhookEvent{}, Queue: counts}
		var p page
		if res.Events, p, err = pageOf(c, evs, 0, a.Limit, res); err != nil {
			return none, err
		}
		res.Total, res.Truncated = len(res.Events), p.Truncated
		if p.NextOffset > 0 {
			res.NextBefore = res.Events[len(res.Events)-1].ID
		}
		return kit.Fenced[listEventsResult]{Source: webhookSource, Value: res}, nil
	})
}

type requeueArgs struct {
	EventID string `json:"event_id" jsonschema:"the event to process again, as list_webhook_events shows it (wh-…)" pattern:"^wh-[0-9a-f]{20}$"`
}

type requeueResult struct {
	Event store.WebhookEvent `json:"event"`
	Note  string             `json:"note"`
}

func requeueWebhookEvent(d Deps) kit.Tool {
	return kit.NewTool(kit.Tool{
		Name:  "requeue_webhook_event",
		Title: "Requeue a webhook event",
		Description: "Put a webhook event that is in the dead letter (or waiting for a retry) back in the queue, due now, with its " +
			"retries restored: the processor fetches what it points at again. Do it once the reason in last_error is mended " +
			"(Avinode reachable again, credentials fixed). Completed, pending and processing events cannot be requeued.",
		Effect: kit.Additive,
	}, func(ctx context.Context, c *kit.Call, a requeueArgs) (kit.Fenced[requeueResult], error) {
		var none kit.Fenced[requeueResult]
		ev, err := d.Store.RequeueWebhookEvent(ctx, a.EventID, store.Now())
		switch {
		case errors.Is(err, store.ErrNotFound):
			return none, &mcperr.Error{Code: mcperr.NotFound, Field: "event_id", Value: a.EventID,
				Message: "no webhook event " + a.EventID + " exists"}
		case errors.Is(err, store.ErrNotRequeueable):
			return none, mcperr.New(mcperr.Conflict, "webhook event %s is %s; only an event in the dead letter or waiting for a retry can be requeued",
				a.EventID, ev.Status)
		case err != nil:
			return none, err
		}
		if d.Poke != nil {
			d.Poke()
		}
		return kit.Fenced[requeueResult]{Source: webhookSource, Value: requeueResult{Event: *ev,
			Note: "Requeued: the webhook processor takes it up within a second; list_webhook_events shows the outcome."}}, nil
	})
}
