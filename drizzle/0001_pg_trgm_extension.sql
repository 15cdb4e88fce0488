-- Trigram indexes make the case-insensitive name search (`q`) an index scan.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
