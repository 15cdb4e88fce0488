-- The reader's tax_documents view gains what analysts need of a DTE (its environment and the
-- factura receiver's giro, address and comuna). The signed XML, the CAF and the SII columns stay
-- out, and the new sii_cafs / sii_certificates tables (encrypted keys) get no view and no grant.
CREATE OR REPLACE VIEW mcp_read.tax_documents WITH (security_barrier = false, security_invoker = true) AS
  SELECT clinic_id, id, invoice_id, doc_type, folio, receiver_rut, receiver_name, referenced_document_id, currency, net_amount, tax_amount, total_amount, issued_at, created_at, updated_at, environment, receiver_giro, receiver_address, receiver_commune FROM public.tax_documents
  WHERE clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
GRANT SELECT (environment, receiver_giro, receiver_address, receiver_commune) ON public.tax_documents TO vet_mcp_reader;
