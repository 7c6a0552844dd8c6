-- The local mailbox's index: one row per .eml file under the mailbox
-- directory, with what threads, lists and searches need.
CREATE TABLE messages (
  id TEXT PRIMARY KEY,
  thread_id TEXT NOT NULL,
  rfc_message_id TEXT NOT NULL,
  in_reply_to TEXT NOT NULL DEFAULT '',
  refs TEXT NOT NULL DEFAULT '',
  from_addr TEXT NOT NULL DEFAULT '',
  to_addrs TEXT NOT NULL DEFAULT '',
  cc_addrs TEXT NOT NULL DEFAULT '',
  bcc_addrs TEXT NOT NULL DEFAULT '',
  subject TEXT NOT NULL DEFAULT '',
  date_ms INTEGER NOT NULL,
  snippet TEXT NOT NULL DEFAULT '',
  body TEXT NOT NULL DEFAULT '',
  filenames TEXT NOT NULL DEFAULT '',
  labels TEXT NOT NULL DEFAULT '',
  draft_id TEXT NOT NULL DEFAULT '',
  path TEXT NOT NULL UNIQUE,
  size INTEGER NOT NULL
) STRICT;
CREATE INDEX messages_thread ON messages(thread_id, date_ms);
CREATE INDEX messages_msgid ON messages(rfc_message_id);
CREATE INDEX messages_date ON messages(date_ms);
