-- Session events from agents (session.started / session.completed), unique on the event id.
CREATE TABLE session_events (
    event_id     text        PRIMARY KEY,
    type         text        NOT NULL CHECK (type IN ('session.started', 'session.completed')),
    site         text        NOT NULL,
    camera       text        NOT NULL,
    session_id   text        NOT NULL,
    event_time   timestamptz NOT NULL,
    reason       text,
    order_id     text,
    body         jsonb       NOT NULL,
    received_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX session_events_session_idx ON session_events (session_id);
CREATE INDEX session_events_time_idx ON session_events (event_time);

CREATE INDEX dead_letters_reason_idx ON dead_letters (reason, received_at);
