package fakeavinode

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

type trip struct {
	id, display, external string
	segments              []segmentIn
	criteria              *criteriaIn
	canceled              bool
	reason, message       string
	rfqs                  []string
}

type rfq struct {
	id, tripID     string
	seller         Seller
	created        time.Time
	updated        time.Time
	lifts          []*lift
	buyerMessages  []string
	sellerMessages []string
	canceled       bool
}

type lift struct {
	id, aircraftType, category, tail string
	maxPax, year                     int
	status                           string
	declineReason, declineMessage    string
	quotes                           []string
}

type quote struct {
	id, rfqID, liftID string
	price             float64
	currency          string
	lines             []Line
	validUntil        time.Time
	message           string
	created           time.Time
}

type message struct {
	id, rfqID, text string
	seller          bool
	created         time.Time
	// kind is the message type: CHAT, or QUOTE/DECLINE for the notice of
	// a seller's response.
	kind string
}

type watch struct {
	doc watchIn
}

// Documented request shapes, decoded strictly.
type airportIn struct {
	ICAO string `json:"icao"`
	IATA string `json:"iata,omitempty"`
	Name string `json:"name,omitempty"`
}

type segmentIn struct {
	StartAirport airportIn `json:"startAirport"`
	EndAirport   airportIn `json:"endAirport"`
	DateTime     struct {
		Date      string `json:"date"`
		Time      string `json:"time"`
		Departure bool   `json:"departure"`
		Local     bool   `json:"local"`
	} `json:"dateTime"`
	PaxCount   string `json:"paxCount"`
	PaxSegment bool   `json:"paxSegment"`
	PaxTBD     bool   `json:"paxTBD"`
	TimeTBD    bool   `json:"timeTBD"`
}

type criteriaIn struct {
	RequiredLift []struct {
		AircraftCategory string `json:"aircraftCategory"`
		AircraftType     string `json:"aircraftType,omitempty"`
		AircraftTail     string `json:"aircraftTail,omitempty"`
	} `json:"requiredLift,omitempty"`
	IncludeLiftUpgrades    bool `json:"includeLiftUpgrades"`
	MaxFuelStopsPerSegment int  `json:"maxFuelStopsPerSegment"`
}

type tripIn struct {
	ExternalTripID string      `json:"externalTripId,omitempty"`
	Sourcing       bool        `json:"sourcing"`
	Segments       []segmentIn `json:"segments"`
	Criteria       *criteriaIn `json:"criteria,omitempty"`
}

var (
	icaoRE = regexp.MustCompile(`^[A-Z]{4}$`)
	dateRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	timeRE = regexp.MustCompile(`^\d{2}:\d{2}$`)
	// Categories Avinode knows.
	categories = []string{"Piston", "Turbo prop", "Very light jet", "Light jet", "Super light jet", "Midsize jet",
		"Super midsize jet", "Heavy jet", "Ultra long range", "Airliner"}
	cancelReasons = []string{"BY_CLIENT", "CHANGED", "BOOKED", "OTHER"}
)

func (s *Server) createTrip(w http.ResponseWriter, r *http.Request, body []byte) (int, any) {
	var in tripIn
	if err := decodeStrict(body, &in); err != nil {
		return invalid("body: %v", err)
	}
	if len(in.Segments) == 0 {
		return missing("segments")
	}
	for i, seg := range in.Segments {
		switch {
		case !icaoRE.MatchString(seg.StartAirport.ICAO):
			return invalid("segments[%d].startAirport.icao %q is not an ICAO code", i, seg.StartAirport.ICAO)
		case !icaoRE.MatchString(seg.EndAirport.ICAO):
			return invalid("segments[%d].endAirport.icao %q is not an ICAO code", i, seg.EndAirport.ICAO)
		case !dateRE.MatchString(seg.DateTime.Date):
			return invalid("segments[%d].dateTime.date %q is not YYYY-MM-DD", i, seg.DateTime.Date)
		case !seg.TimeTBD && !timeRE.MatchString(seg.DateTime.Time):
			return invalid("segments[%d].dateTime.time %q is not HH:MM", i, seg.DateTime.Time)
		}
		if n, err := strconv.Atoi(seg.PaxCount); !seg.PaxTBD && (err != nil || n < 1) {
			return invalid("segments[%d].paxCount %q is not a passenger count", i, seg.PaxCount)
		}
	}
	if in.Criteria != nil {
		for _, l := range in.Criteria.RequiredLift {
			if !slices.Contains(categories, l.AircraftCategory) {
				return http.StatusUnprocessableEntity, problem("LIFT_INVALID", fmt.Sprintf("unknown aircraft category %q", l.AircraftCategory))
			}
		}
	}
	t := &trip{id: s.nextID("atrip"), external: in.ExternalTripID, segments: in.Segments, criteria: in.Criteria}
	t.display = fmt.Sprintf("T%05d", s.seq%100000)
	s.trips[t.id] = t
	return http.StatusCreated, s.tripDoc(t)
}

func (s *Server) tripDoc(t *trip) map[string]any {
	base := "https://sandbox.avinode.com/marketplace/mvc"
	status := "OPEN"
	if t.canceled {
		status = "CANCELED"
	}
	return map[string]any{
		"id": t.id, "type": "trips", "href": s.BaseURL() + "/trips/" + t.id, "tripId": t.display,
		"externalTripId": t.external, "status": status, "canceled": t.canceled, "segments": t.segments,
		"actions": map[string]any{
			"searchInAvinode": map[string]any{"type": "searchInAvinode", "description": "Search in Avinode", "href": base + "/search/load/" + t.id + "?source=api"},
			"viewInAvinode":   map[string]any{"type": "viewInAvinode", "description": "View in Avinode", "href": base + "/trips/buying/" + t.id},
			"cancel":          map[string]any{"type": "cancel", "description": "Cancel", "href": s.BaseURL() + "/trips/" + t.id + "/cancel"},
		},
		"tripBoardPost": nil, "unknownTripField": []any{1, "two"},
	}
}

func (s *Server) getTrip(w http.ResponseWriter, r *http.Request, _ []byte) (int, any) {
	t := s.trips[r.PathValue("id")]
	if t == nil {
		return notFound("trip", r.PathValue("id"))
	}
	return http.StatusOK, s.tripDoc(t)
}

func (s *Server) cancelTrip(w http.ResponseWriter, r *http.Request, body []byte) (int, any) {
	var in struct {
		ID              string `json:"id"`
		MessageToSeller string `json:"messageToSeller,omitempty"`
		Reason          string `json:"reason"`
	}
	if err := decodeStrict(body, &in); err != nil {
		return invalid("body: %v", err)
	}
	id := r.PathValue("id")
	switch {
	case in.Reason == "":
		return missing("reason")
	case !slices.Contains(cancelReasons, in.Reason):
		return invalid("reason %q is not one of %s", in.Reason, strings.Join(cancelReasons, ", "))
	case in.ID != id:
		return invalid("id %q does not match the path", in.ID)
	}
	t := s.trips[id]
	if t == nil {
		return notFound("trip", id)
	}
	t.canceled, t.reason, t.message = true, in.Reason, in.MessageToSeller
	for _, rid := range t.rfqs {
		rq := s.rfqs[rid]
		rq.canceled = true
		for _, l := range rq.lifts {
			if l.status == "Unanswered" || l.status == "Accepted" {
				l.status = "Cancelled"
			}
		}
	}
	return http.StatusOK, s.tripDoc(t)
}

func (s *Server) getRFQs(w http.ResponseWriter, r *http.Request, _ []byte) (int, any) {
	id := r.PathValue("id")
	q := r.URL.Query()
	if strings.HasPrefix(id, "atrip-") {
		t := s.trips[id]
		if t == nil {
			return notFound("trip", id)
		}
		out := []any{}
		for _, rid := range t.rfqs {
			out = append(out, s.rfqDoc(s.rfqs[rid], q))
		}
		return http.StatusOK, out
	}
	rq := s.rfqs[id]
	if rq == nil {
		return notFound("rfq", id)
	}
	return http.StatusOK, s.rfqDoc(rq, q)
}

func (s *Server) rfqDoc(rq *rfq, q map[string][]string) map[string]any {
	flag := func(name string) bool { return len(q[name]) > 0 && q[name][0] == "true" }
	var lifts []any
	for _, l := range rq.lifts {
		doc := map[string]any{"id": l.id, "aircraftType": l.aircraftType, "aircraftCategory": l.category,
			"aircraftTail": l.tail, "maxPax": l.maxPax, "yearOfMake": l.year, "sourcingDisplayStatus": l.status,
			"sourcingStatus": strings.ToUpper(l.status)}
		if l.declineReason != "" {
			doc["declineReason"], doc["declineMessage"] = l.declineReason, l.declineMessage
		}
		var links []any
		for _, qid := range l.quotes {
			links = append(links, map[string]any{"id": qid, "href": s.BaseURL() + "/quotes/" + qid})
		}
		doc["links"] = map[string]any{"quotes": links}
		if flag("latestquote") && len(l.quotes) > 0 {
			doc["latestQuote"] = s.quoteDoc(s.quotes[l.quotes[len(l.quotes)-1]], flag("quotebreakdown"), false)
		}
		lifts = append(lifts, doc)
	}
	doc := map[string]any{"id": rq.id, "type": "rfqs", "href": s.BaseURL() + "/rfqs/" + rq.id,
		"createdOn": rq.created.UTC().Format(time.RFC3339), "updatedOn": rq.updated.UTC().Format(time.RFC3339),
		"trip":          map[string]any{"id": rq.tripID, "href": s.BaseURL() + "/trips/" + rq.tripID},
		"sellerCompany": map[string]any{"id": rq.seller.ID, "name": rq.seller.Name, "displayName": rq.seller.Name, "countryCode": rq.seller.Country},
		"sellerLift":    lifts, "analytics": map[string]any{"views": 3}}
	if flag("buyermessages") {
		var msgs []any
		for _, mid := range rq.buyerMessages {
			msgs = append(msgs, s.messageDoc(s.messages[mid]))
		}
		doc["buyerMessages"] = msgs
	}
	if flag("sellermessagelinks") {
		var links []any
		for _, mid := range rq.sellerMessages {
			links = append(links, map[string]any{"id": mid, "href": s.BaseURL() + "/tripmsgs/" + mid})
		}
		doc["sellerMessages"] = links
	}
	return doc
}

func (s *Server) quoteDoc(q *quote, breakdown, withRefs bool) map[string]any {
	doc := map[string]any{"id": q.id, "createdOn": q.created.UTC().Format(time.RFC3339), "status": "ACTIVE",
		"sellerPrice": map[string]any{"price": q.price, "currency": q.currency}, "sellerMessage": q.message,
		"validUntil": q.validUntil.UTC().Format(time.RFC3339), "buyerPrice": map[string]any{"price": q.price * 1.1}}
	if breakdown && len(q.lines) > 0 {
		var items []any
		for _, l := range q.lines {
			items = append(items, map[string]any{"description": l.Description, "type": l.Type,
				"price": map[string]any{"price": l.Amount, "currency": q.currency}})
		}
		doc["quoteBreakdown"] = map[string]any{"sections": []any{map[string]any{"name": "Price", "lineItems": items}}}
	}
	if withRefs {
		rq := s.rfqs[q.rfqID]
		doc["rfq"] = map[string]any{"id": q.rfqID, "href": s.BaseURL() + "/rfqs/" + q.rfqID}
		doc["sellerCompany"] = map[string]any{"id": rq.seller.ID, "displayName": rq.seller.Name}
		for _, l := range rq.lifts {
			if l.id == q.liftID {
				doc["lift"] = map[string]any{"id": l.id, "aircraftType": l.aircraftType, "aircraftCategory": l.category,
					"aircraftTail": l.tail, "maxPax": l.maxPax, "yearOfMake": l.year}
			}
		}
	}
	return doc
}

func (s *Server) getQuote(w http.ResponseWriter, r *http.Request, _ []byte) (int, any) {
	q := s.quotes[r.PathValue("id")]
	if q == nil {
		return notFound("quote", r.PathValue("id"))
	}
	return http.StatusOK, s.quoteDoc(q, r.URL.Query().Get("quotebreakdown") == "true", true)
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request, body []byte) (int, any) {
	var in struct {
		Message string `json:"message"`
	}
	if err := decodeStrict(body, &in); err != nil {
		return invalid("body: %v", err)
	}
	if strings.TrimSpace(in.Message) == "" {
		return missing("message")
	}
	rq := s.rfqs[r.PathValue("id")]
	if rq == nil {
		return notFound("rfq", r.PathValue("id"))
	}
	m := &message{id: s.nextID("abuyermsg"), rfqID: rq.id, text: in.Message, created: s.cfg.Now()}
	s.messages[m.id] = m
	rq.buyerMessages = append(rq.buyerMessages, m.id)
	return http.StatusCreated, s.messageDoc(m)
}

func (s *Server) messageDoc(m *message) map[string]any {
	kind := m.kind
	if kind == "" {
		kind = "CHAT"
	}
	doc := map[string]any{"id": m.id, "type": "tripmsgs", "message": m.text, "createdOn": m.created.UTC().Format(time.RFC3339),
		"rfq": map[string]any{"id": m.rfqID}, "messageType": kind}
	if m.seller {
		rq := s.rfqs[m.rfqID]
		doc["sellerCompany"] = map[string]any{"id": rq.seller.ID, "displayName": rq.seller.Name}
	} else {
		doc["buyerCompany"] = map[string]any{"id": "acompany-1", "displayName": "Test Broker"}
	}
	return doc
}

func (s *Server) getMessage(w http.ResponseWriter, r *http.Request, _ []byte) (int, any) {
	m := s.messages[r.PathValue("id")]
	if m == nil {
		return notFound("message", r.PathValue("id"))
	}
	return http.StatusOK, s.messageDoc(m)
}

func (s *Server) searchAirports(w http.ResponseWriter, r *http.Request, _ []byte) (int, any) {
	filter := strings.ToUpper(strings.TrimSpace(r.URL.Query().Get("filter")))
	if filter == "" {
		return missing("filter")
	}
	size := 20
	if v := r.URL.Query().Get("page[size]"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return invalid("page[size] %q is not a page size from 1 to 100", v)
		}
		size = n
	}
	out := []any{}
	for _, a := range s.airports {
		// Avinode matches codes, names and cities, ignoring case.
		if strings.Contains(strings.ToUpper(fmt.Sprint(a["icao"], " ", a["iata"], " ", a["name"], " ", a["city"])), filter) && len(out) < size {
			out = append(out, a)
		}
	}
	return http.StatusOK, out
}

// AddAirport adds an airport to the fake's airport search.
func (s *Server) AddAirport(icao, iata, name, city, country string, lat, lon float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.airports = append(s.airports, map[string]any{"id": "aapt-" + icao, "icao": icao, "iata": iata, "name": name,
		"city": city, "country": map[string]any{"code": country, "name": country},
		"coordinates": map[string]any{"latitude": lat, "longitude": lon}})
}

func (s *Server) searchEmptyLegs(w http.ResponseWriter, r *http.Request, body []byte) (int, any) {
	var in struct {
		StartAirport            *airportIn `json:"startAirport,omitempty"`
		EndAirport              *airportIn `json:"endAirport,omitempty"`
		Date                    string     `json:"date"`
		NumberOfDaysFlexibility string     `json:"numberOfDaysFlexibility"`
		Passengers              string     `json:"passengers"`
		RequiredPartnerships    []string   `json:"requiredPartnerships"`
	}
	if err := decodeStrict(body, &in); err != nil {
		return invalid("body: %v", err)
	}
	switch {
	case in.StartAirport == nil && in.EndAirport == nil:
		return missing("startAirport or endAirport")
	case !dateRE.MatchString(in.Date):
		return invalid("date %q is not YYYY-MM-DD", in.Date)
	}
	if _, err := strconv.Atoi(in.NumberOfDaysFlexibility); err != nil {
		return invalid("numberOfDaysFlexibility %q is not a number", in.NumberOfDaysFlexibility)
	}
	out := []any{}
	for _, l := range s.legs {
		from := l["startAirport"].(map[string]any)["icao"]
		to := l["endAirport"].(map[string]any)["icao"]
		if (in.StartAirport == nil || in.StartAirport.ICAO == from) && (in.EndAirport == nil || in.EndAirport.ICAO == to) {
			out = append(out, l)
		}
	}
	return http.StatusOK, out
}

// AddEmptyLeg adds an empty leg the search finds.
func (s *Server) AddEmptyLeg(from, to string, depart time.Time, aircraftType, category string, maxPax int, price float64, currency, seller string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextID("aemptyleg")
	s.legs = append(s.legs, map[string]any{"id": id, "startAirport": map[string]any{"icao": from}, "endAirport": map[string]any{"icao": to},
		"earliestDeparture": depart.UTC().Format(time.RFC3339), "latestDeparture": depart.Add(3 * time.Hour).UTC().Format(time.RFC3339),
		"aircraftType": aircraftType, "aircraftCategory": category, "maxPax": maxPax,
		"price": map[string]any{"price": price, "currency": currency}, "sellerCompany": map[string]any{"displayName": seller},
		"verified": true})
	return id
}

type watchIn struct {
	ID              string `json:"id,omitempty"`
	UniqueName      string `json:"uniqueName"`
	Active          bool   `json:"active"`
	WatchedSegments []struct {
		Start struct {
			Airport     *airportIn `json:"airport,omitempty"`
			CountryCode string     `json:"countryCode,omitempty"`
		} `json:"start"`
		End struct {
			Airport     *airportIn `json:"airport,omitempty"`
			CountryCode string     `json:"countryCode,omitempty"`
		} `json:"end"`
	} `json:"watchedSegments"`
	Lifts []struct {
		AircraftCategory string `json:"aircraftCategory"`
		PriceExpectation int    `json:"priceExpectation"`
	} `json:"lifts,omitempty"`
	Priced   bool `json:"priced"`
	Verified bool `json:"verified"`
	DaysOut  int  `json:"daysOut,omitempty"`
}

func (s *Server) readWatch(body []byte) (watchIn, int, any) {
	var in watchIn
	if err := decodeStrict(body, &in); err != nil {
		st, doc := invalid("body: %v", err)
		return in, st, doc
	}
	switch {
	case in.UniqueName == "":
		st, doc := missing("uniqueName")
		return in, st, doc
	case len(in.WatchedSegments) == 0:
		st, doc := missing("watchedSegments")
		return in, st, doc
	}
	for _, l := range in.Lifts {
		if !slices.Contains(categories, l.AircraftCategory) {
			st, doc := invalid("unknown aircraft category %q", l.AircraftCategory)
			return in, st, doc
		}
	}
	return in, 0, nil
}

func (s *Server) createWatch(w http.ResponseWriter, r *http.Request, body []byte) (int, any) {
	in, st, doc := s.readWatch(body)
	if st != 0 {
		return st, doc
	}
	for _, wt := range s.watches {
		if wt.doc.UniqueName == in.UniqueName {
			return http.StatusConflict, problem("ERR_DUPLICATE", "a watch named "+in.UniqueName+" exists")
		}
	}
	in.ID = s.nextID("aemptylegwatch")
	s.watches[in.ID] = &watch{doc: in}
	return http.StatusCreated, in
}

func (s *Server) listWatches(w http.ResponseWriter, r *http.Request, _ []byte) (int, any) {
	out := []any{}
	ids := make([]string, 0, len(s.watches))
	for id := range s.watches {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		out = append(out, s.watches[id].doc)
	}
	return http.StatusOK, out
}

func (s *Server) getWatch(w http.ResponseWriter, r *http.Request, _ []byte) (int, any) {
	wt := s.watches[r.PathValue("id")]
	if wt == nil {
		return notFound("watch", r.PathValue("id"))
	}
	return http.StatusOK, wt.doc
}

func (s *Server) updateWatch(w http.ResponseWriter, r *http.Request, body []byte) (int, any) {
	in, st, doc := s.readWatch(body)
	if st != 0 {
		return st, doc
	}
	wt := s.watches[r.PathValue("id")]
	if wt == nil {
		return notFound("watch", r.PathValue("id"))
	}
	if in.ID != r.PathValue("id") {
		return invalid("id %q does not match the path", in.ID)
	}
	wt.doc = in
	return http.StatusOK, in
}

// Watch returns a watch's current document fields: name and active.
func (s *Server) Watch(id string) (name string, active, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	wt := s.watches[id]
	if wt == nil {
		return "", false, false
	}
	return wt.doc.UniqueName, wt.doc.Active, true
}

// Seller is an operator the tests play.
type Seller struct {
	ID, Name, Country string
}

// Aircraft is a requested lift.
type Aircraft struct {
	Type, Category, Tail string
	MaxPax, Year         int
}

// Line is one line of a quote breakdown; Type is FLIGHT, POSITIONING, FEE
// or TAX.
type Line struct {
	Description string
	Type        string
	Amount      float64
}

// AddRFQ records that the buyer sent the trip to a seller about aircraft,
// as the Avinode web application does; it returns the RFQ and lift ids.
func (s *Server) AddRFQ(tripID string, seller Seller, ac Aircraft) (rfqID, liftID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.trips[tripID]
	if t == nil {
		panic("fakeavinode: AddRFQ to unknown trip " + tripID)
	}
	now := s.cfg.Now()
	rq := &rfq{id: s.nextID("arfq"), tripID: tripID, seller: seller, created: now, updated: now}
	l := &lift{id: s.nextID("asellerlift"), aircraftType: ac.Type, category: ac.Category, tail: ac.Tail, maxPax: ac.MaxPax,
		year: ac.Year, status: "Unanswered"}
	rq.lifts = []*lift{l}
	s.rfqs[rq.id] = rq
	t.rfqs = append(t.rfqs, rq.id)
	return rq.id, l.id
}

// Quote records the seller quoting the lift; it returns the quote id.
func (s *Server) Quote(rfqID, liftID string, total float64, currency string, validFor time.Duration, msg string, lines ...Line) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	rq := s.rfqs[rfqID]
	now := s.cfg.Now()
	q := &quote{id: s.nextID("aquote"), rfqID: rfqID, liftID: liftID, price: total, currency: currency, lines: lines,
		validUntil: now.Add(validFor), message: msg, created: now}
	s.quotes[q.id] = q
	for _, l := range rq.lifts {
		if l.id == liftID {
			l.status = "Accepted"
			l.quotes = append(l.quotes, q.id)
		}
	}
	rq.updated = now
	s.respond(rq, "QUOTE", msg)
	return q.id
}

// respond records the notice of a seller's response as a trip message and
// notifies the subscriptions to seller responses with a pointer to it.
// Called with s.mu held.
func (s *Server) respond(rq *rfq, kind, text string) {
	m := &message{id: s.nextID("asellermsg"), rfqID: rq.id, text: text, seller: true, created: s.cfg.Now(), kind: kind}
	s.messages[m.id] = m
	s.notify("TripRequestSellerResponse", "tripmsgs", m.id, rq.tripID)
}

// Decline records the seller declining the lift.
func (s *Server) Decline(rfqID, liftID, reason, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rq := s.rfqs[rfqID]
	for _, l := range rq.lifts {
		if l.id == liftID {
			l.status, l.declineReason, l.declineMessage = "Declined", reason, msg
		}
	}
	rq.updated = s.cfg.Now()
	s.respond(rq, "DECLINE", msg)
}

// SellerMessage records the seller writing in the RFQ's thread.
func (s *Server) SellerMessage(rfqID, text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := &message{id: s.nextID("asellermsg"), rfqID: rfqID, text: text, seller: true, created: s.cfg.Now()}
	s.messages[m.id] = m
	s.rfqs[rfqID].sellerMessages = append(s.rfqs[rfqID].sellerMessages, m.id)
	s.notify("TripChatFromSeller", "tripmsgs", m.id, s.rfqs[rfqID].tripID)
	return m.id
}

// TripState reports a trip's cancellation as the fake recorded it.
func (s *Server) TripState(id string) (canceled bool, reason, message string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.trips[id]
	if t == nil {
		return false, "", "", false
	}
	return t.canceled, t.reason, t.message, true
}

// Trips counts the trips created.
func (s *Server) Trips() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.trips)
}
