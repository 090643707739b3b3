-- Rulesets with revisions: every change by `scanadmin rules add/remove` is a new revision holding
-- the whole ruleset document as agents receive it, with who changed what and when, and the
-- revision of the rules bucket it was published as.
CREATE TABLE ruleset_revisions (
    revision     bigserial   PRIMARY KEY,
    document     text        NOT NULL,
    change       text        NOT NULL,
    author       text        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    kv_revision  bigint
);
