-- Sample rows for trying the agents' flows on a fresh database: one charter
-- request (KTEB to KOPF, 4 passengers), three operator quotes for its RFP,
-- and a cached client. Valid in both dialects; loading it twice adds
-- nothing.
INSERT INTO iso_requests (id, client_name, client_email, departure_airport, arrival_airport, departure_date, passengers, status, details, created_at)
VALUES ('req-123', 'John Smith', 'john@example.com', 'KTEB', 'KOPF', '2025-11-15', 4, 'new',
        '{"aircraft_types": ["light-jet", "mid-jet"], "max_budget": 50000}', '2025-11-01T09:00:00+00:00')
ON CONFLICT DO NOTHING;

INSERT INTO quotes (id, rfp_id, request_id, operator_id, operator_name, aircraft_type, base_price_usd, taxes_fees_usd,
                    total_price_usd, safety_rating, comfort_rating, flight_time_minutes, valid_until, created_at)
VALUES ('quote-456', 'rfp-123', 'req-123', 'op-123', 'Executive Jet Management', 'Citation X', 45000, 3200, 48200, 4.6, 4.4, 165,
        '2025-11-14T12:00:00+00:00', '2025-11-02T10:00:00+00:00'),
       ('quote-457', 'rfp-123', 'req-123', 'op-456', 'Coastal Air Charter', 'Phenom 300', 36000, 2600, 38600, 4.2, 3.8, 175,
        '2025-11-14T12:00:00+00:00', '2025-11-02T10:05:00+00:00'),
       ('quote-458', 'rfp-123', 'req-123', 'op-789', 'Skyline Private', 'Gulfstream G450', 61000, 4100, 65100, 4.9, 4.9, 155,
        '2025-11-14T12:00:00+00:00', '2025-11-02T10:10:00+00:00')
ON CONFLICT DO NOTHING;

INSERT INTO client_cache (id, client_id, email, name, company, vip_status, preferences, cached_at)
VALUES ('cc-1', 'client-456', 'john@example.com', 'John Smith', 'Smith Holdings', 'gold',
        '{"catering": "light", "preferred_aircraft": ["mid-jet"]}', '2025-11-01T08:00:00+00:00')
ON CONFLICT DO NOTHING;
