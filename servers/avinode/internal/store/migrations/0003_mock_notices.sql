-- The simulated marketplace's outgoing notifications. When the simulation
-- delivers over HTTP to a receiver, as Avinode does, publishing an answer
-- keeps the notification body with its event (notice) in the same
-- transaction, and a sender posts it and marks it sent (noticed_at): a
-- notification is never lost between publishing and posting, and one
-- posted twice is a redelivery the receiver recognises.
ALTER TABLE mock_events ADD COLUMN notice TEXT;
ALTER TABLE mock_events ADD COLUMN noticed_at TEXT;
