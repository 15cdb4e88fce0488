-- Accent- and case-insensitive name search without an extension (works on any PostgreSQL and in
-- PGlite): lower() plus a translate() of the accented letters of Spanish and its neighbours, both
-- cases listed because lower() leaves non-ASCII letters alone under the C locale.
CREATE OR REPLACE FUNCTION fold_name(value text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT translate(lower(value), 'áàâäãåéèêëíìîïóòôöõúùûüñçýÿÁÀÂÄÃÅÉÈÊËÍÌÎÏÓÒÔÖÕÚÙÛÜÑÇÝ', 'aaaaaaeeeeiiiiooooouuuuncyyaaaaaaeeeeiiiiooooouuuuncy')
$$;--> statement-breakpoint
DROP INDEX "patients_name_trgm_idx";--> statement-breakpoint
DROP INDEX "tutors_name_trgm_idx";--> statement-breakpoint
CREATE INDEX "patients_name_folded_trgm_idx" ON "patients" USING gin (fold_name("name") gin_trgm_ops) WHERE "patients"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "tutors_name_folded_trgm_idx" ON "tutors" USING gin (fold_name("name") gin_trgm_ops) WHERE "tutors"."deleted_at" is null;