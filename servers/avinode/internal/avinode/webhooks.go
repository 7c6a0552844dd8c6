package avinode

import (
	"context"
	"net/http"
)

// WebhookSettings is a webhook subscription: where Avinode posts the
// notifications of the listed event types, and the HTTP Basic credentials it
// authenticates with.
type WebhookSettings struct {
	ID          string `json:"id,omitempty"`
	TargetURI   string `json:"targetURI"`
	DisplayName string `json:"displayName,omitempty"`
	Active      bool   `json:"active"`
	// ClientIdentifier and ClientSecret are what Avinode sends as HTTP
	// Basic user and password with every notification.
	ClientIdentifier string `json:"clientIdentifier,omitempty"`
	ClientSecret     string `json:"clientSecret,omitempty"`
	// ClientAuthenticationType is BASIC.
	ClientAuthenticationType string   `json:"clientAuthenticationType,omitempty"`
	EventTypes               []string `json:"eventTypes"`
}

// Webhook event types a subscription may list.
const (
	EventTripRequest                   = "TripRequest"
	EventTripRequestSellerResponse     = "TripRequestSellerResponse"
	EventTripRequestMine               = "TripRequestMine"
	EventTripRequestSellerResponseMine = "TripRequestSellerResponseMine"
	EventTripChatFromBuyer             = "TripChatFromBuyer"
	EventTripChatFromSeller            = "TripChatFromSeller"
	EventTripChatMine                  = "TripChatMine"
	EventClientLeads                   = "ClientLeads"
	EventEmptyLegs                     = "EmptyLegs"
)

// WebhookEventTypes are the event types Avinode documents.
var WebhookEventTypes = []string{EventTripRequest, EventTripRequestSellerResponse, EventTripRequestMine,
	EventTripRequestSellerResponseMine, EventTripChatFromBuyer, EventTripChatFromSeller, EventTripChatMine,
	EventClientLeads, EventEmptyLegs}

// BrokerEventTypes are what a broker subscribes to: sellers' quotes and
// declines, and their chat messages.
var BrokerEventTypes = []string{EventTripRequestSellerResponse, EventTripChatFromSeller}

// CreateWebhook is POST /webhooks/settings. It is never resent: a timeout
// is reported, and the subscription may exist (ListWebhooks tells).
func (c *Client) CreateWebhook(ctx context.Context, w WebhookSettings) (*WebhookSettings, error) {
	var out WebhookSettings
	return &out, c.call(ctx, http.MethodPost, "/webhooks/settings", nil, w, &out, false)
}

// ListWebhooks is GET /webhooks/settings: the company's subscriptions.
func (c *Client) ListWebhooks(ctx context.Context) ([]WebhookSettings, error) {
	var out []WebhookSettings
	return out, c.call(ctx, http.MethodGet, "/webhooks/settings", nil, nil, &out, false)
}

// UpdateWebhook is PUT /webhooks/settings/{id}: w replaces the subscription
// (Active false deactivates it).
func (c *Client) UpdateWebhook(ctx context.Context, w WebhookSettings) (*WebhookSettings, error) {
	var out WebhookSettings
	return &out, c.call(ctx, http.MethodPut, "/webhooks/settings/"+escape(w.ID), nil, w, &out, false)
}

// BaseURL is the API root the client calls; webhook pointers must point
// under it.
func (c *Client) BaseURL() string { return c.base }
