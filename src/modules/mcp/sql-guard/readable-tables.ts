/**
 * What `query_database` may read: one definition used by the guard (names it accepts and
 * rewrites), by `describe_schema`, and checked against the mcp_read views of the migration
 * (tests/sql-guard/defence.test.ts), so the three never disagree.
 */
export interface ReadableColumn {
  name: string;
  type: string;
  description: string;
}

export interface ReadableTable {
  name: string;
  description: string;
  columns: ReadableColumn[];
}

const id = (what: string): ReadableColumn => ({ name: "id", type: "uuid", description: `The ${what}'s id (UUIDv7, time-ordered)` });
const stamps: ReadableColumn[] = [
  { name: "created_at", type: "timestamptz", description: "When the record was created (UTC)" },
  { name: "updated_at", type: "timestamptz", description: "When the record last changed (UTC)" },
];
const money = (name: string, description: string): ReadableColumn => ({ name, type: "bigint", description: `${description}, integer in the smallest currency unit` });
const col = (name: string, type: string, description: string): ReadableColumn => ({ name, type, description });

export const READABLE_TABLES: ReadableTable[] = [
  {
    name: "tutors",
    description: "Pet owners (tutores) of the clinic",
    columns: [id("tutor"), col("name", "text", "Full name"), col("email", "text", "Email, if known"), col("phone", "text", "Phone"), col("national_id", "text", "RUT or other national id"), col("address", "text", "Postal address"), col("notes", "text", "Free notes"), ...stamps],
  },
  {
    name: "patients",
    description: "Animals treated by the clinic",
    columns: [id("patient"), col("tutor_id", "uuid", "The owner (tutors.id)"), col("name", "text", "Name"), col("species", "text", "dog, cat, bird, rabbit, rodent, reptile, horse or other"), col("breed", "text", "Breed"), col("sex", "text", "male, female or unknown"), col("birth_date", "date", "Birth date"), col("weight_grams", "integer", "Weight in grams"), col("microchip", "text", "Microchip number"), ...stamps],
  },
  {
    name: "visits",
    description: "Appointments and consultations",
    columns: [id("visit"), col("patient_id", "uuid", "patients.id"), col("vet_id", "uuid", "The attending vet (a user id)"), col("status", "text", "scheduled, in_progress, completed, cancelled or no_show"), col("scheduled_at", "timestamptz", "Appointment time"), col("started_at", "timestamptz", "When the visit started"), col("completed_at", "timestamptz", "When the visit ended"), col("reason", "text", "Reason for the visit"), col("diagnosis", "text", "Diagnosis"), col("notes", "text", "Clinical notes"), ...stamps],
  },
  {
    name: "alerts",
    description: "Reminders and warnings about patients",
    columns: [id("alert"), col("patient_id", "uuid", "patients.id, if any"), col("kind", "text", "vaccine_due, follow_up, allergy, overdue_invoice or custom"), col("message", "text", "What to remember"), col("status", "text", "active or resolved"), col("due_date", "date", "When it is due"), col("resolved_at", "timestamptz", "When it was resolved"), ...stamps],
  },
  {
    name: "invoices",
    description: "Invoices to tutors; totals include tax",
    columns: [id("invoice"), col("tutor_id", "uuid", "tutors.id"), col("visit_id", "uuid", "visits.id, if any"), col("status", "text", "draft, emitted, paid or void"), col("currency", "text", "ISO 4217 code"), money("net_amount", "Sum of the items"), money("tax_amount", "Tax (IVA)"), money("total_amount", "Net plus tax"), money("paid_amount", "Payments minus refunds"), col("emitted_at", "timestamptz", "When it was emitted"), col("paid_at", "timestamptz", "When it became fully paid"), col("voided_at", "timestamptz", "When it was voided"), ...stamps],
  },
  {
    name: "invoice_items",
    description: "Lines of invoices",
    columns: [id("item"), col("invoice_id", "uuid", "invoices.id"), col("description", "text", "What was sold"), col("quantity", "integer", "How many"), money("unit_price", "Price of one"), money("total_amount", "quantity × unit_price")],
  },
  {
    name: "payments",
    description: "Payments received against invoices",
    columns: [id("payment"), col("invoice_id", "uuid", "invoices.id"), money("amount", "Amount paid"), col("currency", "text", "ISO 4217 code"), col("method", "text", "cash, card, transfer or other"), col("paid_at", "timestamptz", "When it was paid"), money("refunded_amount", "Refunded so far"), ...stamps],
  },
  {
    name: "refunds",
    description: "Money given back on payments",
    columns: [id("refund"), col("payment_id", "uuid", "payments.id"), col("invoice_id", "uuid", "invoices.id"), money("amount", "Amount refunded"), col("currency", "text", "ISO 4217 code"), col("reason", "text", "Why"), col("refunded_at", "timestamptz", "When it was refunded"), ...stamps],
  },
  {
    name: "tax_documents",
    description: "Chilean SII tax documents: 33 factura, 39 boleta, 61 nota de crédito (the signed XML, CAFs and the certificate, whose keys are encrypted, are not readable here)",
    columns: [id("document"), col("invoice_id", "uuid", "invoices.id"), col("doc_type", "integer", "33, 39 or 61"), col("folio", "integer", "Sequential per document type"), col("receiver_rut", "text", "Receiver's RUT (facturas)"), col("receiver_name", "text", "Receiver's name (facturas)"), col("referenced_document_id", "uuid", "The credited document (61)"), col("currency", "text", "ISO 4217 code"), money("net_amount", "Net"), money("tax_amount", "Tax"), money("total_amount", "Total"), col("issued_at", "timestamptz", "When it was issued"), ...stamps, col("environment", "text", "production, certification or test (test documents have no legal value); null before CAFs"), col("receiver_giro", "text", "Receiver's giro (facturas)"), col("receiver_address", "text", "Receiver's address (facturas)"), col("receiver_commune", "text", "Receiver's comuna (facturas)")],
  },
];

export const READABLE_TABLE_NAMES: ReadonlySet<string> = new Set(READABLE_TABLES.map((t) => t.name));
/** Every column name of a readable table: the names `alias.column` may use. */
export const READABLE_COLUMN_NAMES: ReadonlySet<string> = new Set(READABLE_TABLES.flatMap((t) => t.columns.map((c) => c.name)));
export const VIEW_SCHEMA = "mcp_read";
export const READER_ROLE = "vet_mcp_reader";

/**
 * The clinic the transaction reads, as a scalar subquery: PostgreSQL runs it once per statement
 * (an InitPlan) and compares each row with the result. Written as a bare expression it was
 * evaluated for every row a scan looked at (a settings lookup and a uuid parse each), which made
 * a count through the views twice as slow as the query alone. An index still takes it as its key.
 */
const CLINIC_SETTING = "(SELECT nullif(current_setting('app.clinic_id', true), '')::uuid)";

/**
 * The reader's access, as migration 0009 sets it (0003 made the views security barriers, which
 * PostgreSQL plans apart from the query: no index for an outer ORDER BY … LIMIT, no join
 * order, no statistics). Each view shows one clinic's rows without secret columns and runs
 * with the reader's own rights (`security_invoker`), so it is planned as part of the query.
 * The reader may SELECT only the columns the views show (and `clinic_id`), and row-level
 * security on each base table shows it only the live rows of the clinic in `app.clinic_id`,
 * applied before any condition of the query that could leak what it reads. The views keep
 * their own clinic filter as a second check. (0008 introduced this; 0009 reads the clinic once
 * per statement instead of once per row.)
 */
export function readerAccessSql(): string[] {
  return READABLE_TABLES.flatMap((t) => {
    const columns = ["clinic_id", ...t.columns.map((c) => c.name)].join(", ");
    const live = t.name === "invoice_items" ? "" : "deleted_at IS NULL AND ";
    return [
      `CREATE OR REPLACE VIEW ${VIEW_SCHEMA}.${t.name} WITH (security_barrier = false, security_invoker = true) AS\n  SELECT ${columns} FROM public.${t.name}\n  WHERE clinic_id = ${CLINIC_SETTING}`,
      `GRANT SELECT (${columns}) ON public.${t.name} TO ${READER_ROLE}`,
      `DROP POLICY IF EXISTS mcp_reader_own_clinic ON public.${t.name}`,
      `CREATE POLICY mcp_reader_own_clinic ON public.${t.name} FOR SELECT TO ${READER_ROLE} USING (${live}clinic_id = ${CLINIC_SETTING})`,
    ];
  });
}
