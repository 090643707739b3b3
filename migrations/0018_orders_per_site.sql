-- Orders are a site's: keyed by (site, order id), so that one site's WMS cannot replace or cancel
-- another site's order of the same id. An order imported without a site (`scanadmin orders
-- import` without --site) has the site '' and serves every site that has no order of that id of its
-- own. A new revision may be at most 1,000,000 past the stored one (a first revision may be any): a
-- WMS (or anyone on its subject) can no longer freeze an existing order at revision 2147483647.
UPDATE orders SET site = '' WHERE site IS NULL;
ALTER TABLE orders ALTER COLUMN site SET DEFAULT '', ALTER COLUMN site SET NOT NULL;
ALTER TABLE order_lines ADD COLUMN site text NOT NULL DEFAULT '';
UPDATE order_lines l SET site = o.site FROM orders o WHERE o.order_id = l.order_id;
ALTER TABLE order_lines DROP CONSTRAINT order_lines_order_id_fkey, DROP CONSTRAINT order_lines_pkey;
ALTER TABLE orders DROP CONSTRAINT orders_pkey, ADD PRIMARY KEY (site, order_id);
ALTER TABLE order_lines ALTER COLUMN site DROP DEFAULT,
    ADD PRIMARY KEY (site, order_id, line),
    ADD FOREIGN KEY (site, order_id) REFERENCES orders (site, order_id) ON DELETE CASCADE;

-- Applies one order of a site ('' for none); returns the revision stored before (0: none), or -1
-- when the revision jumps more than 1,000,000 past the stored one (nothing changed). The order
-- changed when the result is below the revision applied (`p_revision`, or the next one when null).
CREATE OR REPLACE FUNCTION scantrack_apply_order(
    p_order_id text, p_site text, p_revision integer, p_cancel boolean,
    p_lines integer[], p_codes text[], p_quantities integer[], p_source text)
RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    site_key text := coalesce(p_site, '');
    stored integer;
    next integer;
BEGIN
    SELECT revision INTO stored FROM orders WHERE site = site_key AND order_id = p_order_id FOR UPDATE;
    next := coalesce(p_revision, coalesce(stored, 0) + 1);
    IF stored IS NOT NULL AND next <= stored THEN
        RETURN stored;
    END IF;
    IF stored IS NOT NULL AND next::bigint > stored::bigint + 1000000 THEN
        RETURN -1;
    END IF;
    INSERT INTO orders (order_id, source, revision, site, cancelled, updated_at)
    VALUES (p_order_id, p_source, next, site_key, p_cancel, now())
    ON CONFLICT (site, order_id) DO UPDATE SET source = EXCLUDED.source, revision = EXCLUDED.revision,
        cancelled = EXCLUDED.cancelled, updated_at = now(), imported_at = now();
    DELETE FROM order_lines WHERE site = site_key AND order_id = p_order_id;
    IF NOT p_cancel THEN
        INSERT INTO order_lines (site, order_id, line, code, quantity)
        SELECT site_key, p_order_id, t.line, t.code, t.quantity
        FROM unnest(p_lines, p_codes, p_quantities) AS t(line, code, quantity);
    END IF;
    RETURN coalesce(stored, 0);
END $$;
