-- The SII's CAFs and the signing certificate are clinic records like any other: uploads and
-- replacements go to the event log (their keys, XML and certificate only as "redacted").
SELECT audit_attach('sii_cafs', 'sii_caf');
--> statement-breakpoint
SELECT audit_attach('sii_certificates', 'sii_certificate');
