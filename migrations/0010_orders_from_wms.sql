-- Orders from the WMS over NATS (docs/integration.md, "Orders from the WMS"): every order has a
-- revision; a create or replace with a newer revision replaces its lines, a cancel with a newer
-- revision cancels it (a cancelled order has no lines, and packs checked against it find no
-- order); a revision not newer than the stored one changes nothing. `scanadmin orders import`
-- goes through the same function with the next revision. The aggregator's role writes orders only
-- through it (migrations/roles/roles.sql grants EXECUTE), as it maintains partitions.
ALTER TABLE orders
    ADD COLUMN revision   integer     NOT NULL DEFAULT 1 CHECK (revision > 0),
    ADD COLUMN site       text,
    ADD COLUMN cancelled  boolean     NOT NULL DEFAULT false,
    ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();

-- Applies one order; returns the revision stored before (0: none). The order changed when that
-- is below the revision applied (`p_revision`, or the next one when null).
CREATE FUNCTION scantrack_apply_order(
    p_order_id text, p_site text, p_revision integer, p_cancel boolean,
    p_lines integer[], p_codes text[], p_quantities integer[], p_source text)
RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
DECLARE
    stored integer;
    next integer;
BEGIN
    SELECT revision INTO stored FROM orders WHERE order_id = p_order_id FOR UPDATE;
    next := coalesce(p_revision, coalesce(stored, 0) + 1);
    IF stored IS NOT NULL AND next <= stored THEN
        RETURN stored;
    END IF;
    INSERT INTO orders (order_id, source, revision, site, cancelled, updated_at)
    VALUES (p_order_id, p_source, next, p_site, p_cancel, now())
    ON CONFLICT (order_id) DO UPDATE SET source = EXCLUDED.source, revision = EXCLUDED.revision,
        site = EXCLUDED.site, cancelled = EXCLUDED.cancelled, updated_at = now(), imported_at = now();
    DELETE FROM order_lines WHERE order_id = p_order_id;
    IF NOT p_cancel THEN
        INSERT INTO order_lines (order_id, line, code, quantity)
        SELECT p_order_id, t.line, t.code, t.quantity
        FROM unnest(p_lines, p_codes, p_quantities) AS t(line, code, quantity);
    END IF;
    RETURN coalesce(stored, 0);
END $$;
REVOKE ALL ON FUNCTION scantrack_apply_order(text, text, integer, boolean, integer[], text[], integer[], text)
    FROM PUBLIC;
