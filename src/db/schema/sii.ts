import { sql } from "drizzle-orm";
import { check, index, integer, pgTable, primaryKey, text, uuid } from "drizzle-orm/pg-core";
import { timestampColumn } from "./columns";

/** Where a CAF's authorization comes from: the SII's production key (IDK 300), its certification key (IDK 100), or a key trusted only for tests. */
export const SII_ENVIRONMENTS = ["production", "certification", "test"] as const;
export type SiiEnvironment = (typeof SII_ENVIRONMENTS)[number];

/**
 * A folio range the SII authorized (a CAF). `caf_xml` is the public `<CAF>` element, copied into
 * every TED; the range's private key is stored only encrypted (lib/secrets).
 */
export const siiCafs = pgTable(
  "sii_cafs",
  {
    id: uuid("id").primaryKey(),
    clinic_id: uuid("clinic_id").notNull(),
    doc_type: integer("doc_type").notNull(),
    range_from: integer("range_from").notNull(),
    range_to: integer("range_to").notNull(),
    next_folio: integer("next_folio").notNull(),
    authorized_on: text("authorized_on").notNull(),
    /** Null for boletas, whose folios do not expire. */
    expires_on: text("expires_on"),
    environment: text("environment").$type<SiiEnvironment>().notNull(),
    caf_xml: text("caf_xml").notNull(),
    private_key_encrypted: text("private_key_encrypted").notNull(),
    created_at: timestampColumn("created_at").notNull(),
  },
  (t) => [
    index("sii_cafs_clinic_type_idx").on(t.clinic_id, t.doc_type, t.range_from),
    check("sii_cafs_doc_type_check", sql`${t.doc_type} in (33, 39, 61)`),
    check("sii_cafs_range_check", sql`${t.range_from} >= 1 and ${t.range_to} >= ${t.range_from} and ${t.next_folio} >= ${t.range_from} and ${t.next_folio} <= ${t.range_to} + 1`),
    check("sii_cafs_environment_check", sql`${t.environment} in ('production', 'certification', 'test')`),
  ],
);

/** The clinic's digital certificate for signing DTEs and envelopes; its private key only encrypted. */
export const siiCertificates = pgTable(
  "sii_certificates",
  {
    clinic_id: uuid("clinic_id").notNull(),
    subject: text("subject").notNull(),
    holder_rut: text("holder_rut").notNull(),
    issuer: text("issuer").notNull(),
    valid_from: timestampColumn("valid_from").notNull(),
    valid_to: timestampColumn("valid_to").notNull(),
    certificate_pem: text("certificate_pem").notNull(),
    private_key_encrypted: text("private_key_encrypted").notNull(),
    created_at: timestampColumn("created_at").notNull(),
    updated_at: timestampColumn("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.clinic_id] })],
);
