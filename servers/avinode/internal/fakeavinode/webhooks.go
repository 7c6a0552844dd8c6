package fakeavinode

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Webhook event types Avinode documents.
var webhookEventTypes = []string{"TripRequest", "TripRequestSellerResponse", "TripRequestMine", "TripRequestSellerResponseMine",
	"TripChatFromBuyer", "TripChatFromSeller", "TripChatMine", "ClientLeads", "EmptyLegs"}

// webhookIn is the documented shape of a webhook subscription.
type webhookIn struct {
	ID                       string   `json:"id,omitempty"`
	TargetURI                string   `json:"targetURI"`
	DisplayName              string   `json:"displayName,omitempty"`
	Active                   bool     `json:"active"`
	ClientIdentifier         string   `json:"clientIdentifier,omitempty"`
	ClientSecret             string   `json:"clientSecret,omitempty"`
	ClientAuthenticationType string   `json:"clientAuthenticationType,omitempty"`
	EventTypes               []string `json:"eventTypes"`
}

// shown is a subscription as the API answers it: without its secret.
func (w webhookIn) shown() webhookIn {
	w.ClientSecret = ""
	return w
}

func (s *Server) readWebhook(body []byte) (webhookIn, int, any) {
	var in webhookIn
	if err := decodeStrict(body, &in); err != nil {
		st, doc := invalid("body: %v", err)
		return in, st, doc
	}
	u, err := url.Parse(in.TargetURI)
	switch {
	case in.TargetURI == "":
		st, doc := missing("targetURI")
		return in, st, doc
	case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
		st, doc := invalid("targetURI %q is not an absolute URL", in.TargetURI)
		return in, st, doc
	case in.ClientAuthenticationType != "BASIC":
		st, doc := invalid("clientAuthenticationType must be BASIC, not %q", in.ClientAuthenticationType)
		return in, st, doc
	case len(in.EventTypes) == 0:
		st, doc := missing("eventTypes")
		return in, st, doc
	}
	for _, e := range in.EventTypes {
		if !slices.Contains(webhookEventTypes, e) {
			st, doc := invalid("unknown event type %q", e)
			return in, st, doc
		}
	}
	return in, 0, nil
}

func (s *Server) createWebhook(w http.ResponseWriter, r *http.Request, body []byte) (int, any) {
	in, st, doc := s.readWebhook(body)
	if st != 0 {
		return st, doc
	}
	if in.ClientIdentifier == "" || in.ClientSecret == "" {
		return missing("clientIdentifier and clientSecret")
	}
	in.ID = s.nextID("awebhook")
	s.webhooks = append(s.webhooks, &in)
	return http.StatusCreated, in.shown()
}

func (s *Server) listWebhooks(w http.ResponseWriter, r *http.Request, _ []byte) (int, any) {
	out := []any{}
	for _, wh := range s.webhooks {
		out = append(out, wh.shown())
	}
	return http.StatusOK, out
}

func (s *Server) updateWebhook(w http.ResponseWriter, r *http.Request, body []byte) (int, any) {
	in, st, doc := s.readWebhook(body)
	if st != 0 {
		return st, doc
	}
	id := r.PathValue("id")
	i := slices.IndexFunc(s.webhooks, func(w *webhookIn) bool { return w.ID == id })
	if i < 0 {
		return notFound("webhook", id)
	}
	if in.ID != id {
		return invalid("id %q does not match the path", in.ID)
	}
	if in.ClientSecret == "" {
		in.ClientSecret = s.webhooks[i].ClientSecret
	}
	if in.ClientIdentifier == "" {
		in.ClientIdentifier = s.webhooks[i].ClientIdentifier
	}
	s.webhooks[i] = &in
	return http.StatusOK, in.shown()
}

// Subscription returns a webhook subscription as stored: target, active,
// event types and credentials.
func (s *Server) Subscription(id string) (target string, active bool, events []string, user, secret string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.webhooks {
		if w.ID == id {
			return w.TargetURI, w.Active, slices.Clone(w.EventTypes), w.ClientIdentifier, w.ClientSecret, true
		}
	}
	return "", false, nil, "", "", false
}

// Delivery is one notification the fake posted (or keeps posting) to a
// subscription's target.
type Delivery struct {
	EventType string
	Pointer   map[string]string
	Attempts  int
	Delivered bool
	// LastStatus is the status of the last attempt (0: no answer).
	LastStatus int
}

// deliveryRetry is how soon an undelivered notification is posted again.
const deliveryRetry = 20 * time.Millisecond

// maxDeliveryAttempts bounds how long the fake keeps redelivering (Avinode
// stops after 48 hours).
const maxDeliveryAttempts = 1500

// notify posts a pointer to every active subscription to eventType, again
// and again until it answers 200, as Avinode does. Called with s.mu held.
func (s *Server) notify(eventType, kind, id, tripID string) {
	display := ""
	if t := s.trips[tripID]; t != nil {
		display = t.display
	}
	pointer := map[string]string{"id": id, "href": s.BaseURL() + "/" + kind + "/" + id, "type": kind, "tripId": display}
	for _, w := range s.webhooks {
		if !w.Active || !slices.Contains(w.EventTypes, eventType) {
			continue
		}
		d := &Delivery{EventType: eventType, Pointer: pointer}
		s.deliveries = append(s.deliveries, d)
		s.posting.Add(1)
		go s.deliver(*w, d)
	}
}

func (s *Server) deliver(w webhookIn, d *Delivery) {
	defer s.posting.Done()
	body, _ := json.Marshal(d.Pointer)
	client := &http.Client{Timeout: 5 * time.Second}
	for range maxDeliveryAttempts {
		select {
		case <-s.closed:
			return
		default:
		}
		req, err := http.NewRequest(http.MethodPost, w.TargetURI, bytes.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("Content-Type", "application/json")
		req.SetBasicAuth(w.ClientIdentifier, w.ClientSecret)
		status := 0
		if resp, err := client.Do(req); err == nil {
			status = resp.StatusCode
			_ = resp.Body.Close()
		}
		s.mu.Lock()
		d.Attempts++
		d.LastStatus = status
		d.Delivered = status == http.StatusOK
		s.mu.Unlock()
		if status == http.StatusOK {
			return
		}
		select {
		case <-s.closed:
			return
		case <-time.After(deliveryRetry):
		}
	}
}

// Deliveries returns the notifications the fake has posted so far.
func (s *Server) Deliveries() []Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Delivery, 0, len(s.deliveries))
	for _, d := range s.deliveries {
		out = append(out, *d)
	}
	return out
}

// ClearFaults drops the faults not applied yet.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

// Started counts the requests that matched method and path prefix and
// reached the fake, answered or not yet (a delayed one counts at once).
func (s *Server) Started(method, pathPrefix string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.started {
		if (method == "" || r[0] == method) && strings.HasPrefix(r[1], pathPrefix) {
			n++
		}
	}
	return n
}

// PathCounts returns how many requests of method each path received.
func (s *Server) PathCounts(method string) map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for _, r := range s.started {
		if method == "" || r[0] == method {
			out[r[1]]++
		}
	}
	return out
}
