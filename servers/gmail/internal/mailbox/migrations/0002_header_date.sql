-- The date a message shows and is searched by: its Date header (or, for a
-- received file without one, when the file was written), apart from
-- date_ms, when the mailbox got it, which orders threads. 0 for rows
-- indexed before this column: they show date_ms.
ALTER TABLE messages ADD COLUMN shown_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN date_from_header INTEGER NOT NULL DEFAULT 1;
