-- scantrack_apply_order runs with its owner's rights (SECURITY DEFINER) and was made with
-- `search_path = public` alone: pg_catalog then came after public, so a function or operator
-- someone put in public under a catalog name would run as the owner. Like every other definer
-- function (0009_hardening.sql) it now looks in pg_catalog first and in pg_temp last.
ALTER FUNCTION scantrack_apply_order(text, text, integer, boolean, integer[], text[], integer[], text)
    SET search_path = pg_catalog, public, pg_temp;
