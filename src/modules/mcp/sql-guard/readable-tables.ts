/**
 * What `query_database` may read: one definition used by the guard (names it accepts and
 * rewrites), by `describe_schema`, and checked against the mcp_read views of the migration
 * (tests/sql-guard/defence.test.ts), so the three never disagree.
 */
export interface ReadableColumn {
  name: string;
  type: string;
  description: string;
  /** What the view shows in its place, when not the column as stored (a blocked value); of the same type. */
  expression?: string;
}

export interface ReadableTable {
  name: string;
  description: string;
  columns: ReadableColumn[];
  /** Which live rows the reader sees, when it is not every row with `deleted_at` null (drafts are never shown). */
  readerRows?: string;
  /**
   * A view that is not one table's rows: its SELECT list and FROM (with aliases), the column its
   * clinic filter reads, and what the reader may read of each table it joins (the columns, and
   * the rows through row-level security). A table readable on its own keeps its own policy.
   */
  joined?: { select: string; from: string; clinicColumn: string; reads: { table: string; columns: string[]; rows: string }[] };
}

const id = (what: string): ReadableColumn => ({ name: "id", type: "uuid", description: `The ${what}'s id (UUIDv7, time-ordered)` });
const stamps: ReadableColumn[] = [
  { name: "created_at", type: "timestamptz", description: "When the record was created (UTC)" },
  { name: "updated_at", type: "timestamptz", description: "When the record last changed (UTC)" },
];
const money = (name: string, description: string): ReadableColumn => ({ name, type: "bigint", description: `${description}, integer in the smallest currency unit` });
const col = (name: string, type: string, description: string): ReadableColumn => ({ name, type, description });
/**
 * A tax document's receiver field: kept for the Código Tributario's period after the receiver
 * (a tutor) had their data erased, and then shown to the reader as "dato bloqueado", so no
 * answer, filter or join of query_database carries or finds it.
 */
const receiver = (name: string, description: string): ReadableColumn => ({
  ...col(name, "text", `${description}; "dato bloqueado" once the receiver's data is erased`),
  expression: `CASE WHEN receiver_blocked_at IS NULL OR ${name} IS NULL THEN ${name} ELSE 'dato bloqueado' END`,
});

/** An appointment's own columns, as the visits table holds them (the type's name comes from appointment_types). */
const APPOINTMENT_VISIT_COLUMNS = ["id", "patient_id", "vet_id", "room_id", "appointment_type_id", "status", "scheduled_at", "ends_at", "confirmed_at", "created_at", "updated_at"];

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
    columns: [id("document"), col("invoice_id", "uuid", "invoices.id"), col("doc_type", "integer", "33, 39 or 61"), col("folio", "integer", "Sequential per document type"), receiver("receiver_rut", "Receiver's RUT (facturas)"), receiver("receiver_name", "Receiver's name (facturas)"), col("referenced_document_id", "uuid", "The credited document (61)"), col("currency", "text", "ISO 4217 code"), money("net_amount", "Net"), money("tax_amount", "Tax"), money("total_amount", "Total"), col("issued_at", "timestamptz", "When it was issued"), ...stamps, col("environment", "text", "production, certification or test (test documents have no legal value); null before CAFs"), receiver("receiver_giro", "Receiver's giro (facturas)"), receiver("receiver_address", "Receiver's address (facturas)"), receiver("receiver_commune", "Receiver's comuna (facturas)"), col("receiver_blocked_at", "timestamptz", "When the receiver's data was erased (null: not erased); their fields then read \"dato bloqueado\"")],
  },
  {
    name: "clinical_notes",
    description: "Signed consultation notes (SOAP) of visits; final once signed (drafts are not shown)",
    columns: [id("note"), col("visit_id", "uuid", "visits.id"), col("patient_id", "uuid", "patients.id"), col("author_id", "uuid", "Who wrote it (a user id)"), col("subjective", "text", "S: what the tutor reports"), col("objective", "text", "O: examination findings"), col("assessment", "text", "A: the vet's assessment"), col("plan", "text", "P: treatment and follow-up"), col("diagnoses", "text[]", "Short diagnosis labels; use 'label' = ANY(diagnoses)"), col("signed_at", "timestamptz", "When it was signed"), col("signed_by", "uuid", "Who signed it (a user id)"), ...stamps],
    readerRows: "deleted_at IS NULL AND signed_at IS NOT NULL",
  },
  {
    name: "note_addenda",
    description: "Corrections and additions to signed notes, never edited",
    columns: [id("addendum"), col("note_id", "uuid", "clinical_notes.id"), col("patient_id", "uuid", "patients.id"), col("author_id", "uuid", "Who wrote it (a user id)"), col("text", "text", "The addendum"), ...stamps],
  },
  {
    name: "vitals",
    description: "Measurements of patients over time (each column may be null: not measured)",
    columns: [id("measurement"), col("patient_id", "uuid", "patients.id"), col("visit_id", "uuid", "visits.id, if any"), col("recorded_by", "uuid", "Who recorded it (a user id; null when entered as the patient's weight)"), col("measured_at", "timestamptz", "When it was measured"), col("weight_grams", "integer", "Weight in grams"), col("temperature_dc", "integer", "Temperature in tenths of °C (385 = 38.5 °C)"), col("heart_rate_bpm", "integer", "Heart rate, beats per minute"), col("respiratory_rate_bpm", "integer", "Respiratory rate, breaths per minute"), col("body_condition_score", "integer", "Body condition score, 1–9"), ...stamps],
  },
  {
    name: "vaccinations",
    description: "Vaccine doses given and their next due dates (given_at null: a due date alone)",
    columns: [id("vaccination"), col("patient_id", "uuid", "patients.id"), col("visit_id", "uuid", "visits.id, if any"), col("vaccine", "text", "Product name"), col("diseases", "text[]", "Diseases it protects against; use 'rabies' = ANY(diseases)"), col("lot", "text", "Lot number"), col("lot_expires_on", "date", "Lot expiry"), col("given_at", "timestamptz", "When the dose was given"), col("given_by", "uuid", "Who gave it (a user id)"), col("next_due_on", "date", "When the next dose is due"), col("reminder_status", "text", "pending, contacted, booked or declined"), col("due_closed_at", "timestamptz", "When a later dose for the same disease closed this due date (null: still due)"), ...stamps],
  },
  {
    name: "prescriptions",
    description: "Prescriptions issued to patients, never edited (cancelled ones keep their reason)",
    columns: [id("prescription"), col("patient_id", "uuid", "patients.id"), col("visit_id", "uuid", "visits.id, if any"), col("prescribed_by", "uuid", "Who issued it (a user id)"), col("drug", "text", "Drug and presentation"), col("dose", "text", "Dose"), col("route", "text", "Route (oral, SC, IM…)"), col("frequency", "text", "How often"), col("duration_days", "integer", "For how many days"), col("quantity", "text", "Quantity to dispense"), col("instructions", "text", "Instructions for the tutor"), col("cancelled_at", "timestamptz", "When it was cancelled (null: active)"), col("cancel_reason", "text", "Why it was cancelled"), ...stamps],
  },
  {
    name: "reminder_messages",
    description: "Reminders to tutors from the outbox, one per rule, subject, due moment and channel (where they went is not shown)",
    columns: [id("message"), col("rule_id", "uuid", "The reminder rule"), col("kind", "text", "vaccination_due, appointment or follow_up"), col("subject_id", "uuid", "The vaccination, visit or follow-up alert it is about"), col("patient_id", "uuid", "patients.id"), col("tutor_id", "uuid", "tutors.id"), col("channel", "text", "email or whatsapp"), col("due_at", "timestamptz", "The subject's moment (visit start, start of the due day)"), col("send_at", "timestamptz", "When it leaves (or left)"), col("status", "text", "queued, sent, delivered, read, failed or suppressed"), col("suppressed_reason", "text", "Why it was not sent: dose_given, appointment_cancelled, appointment_moved, patient_deceased, consent_withdrawn, tutor_blocked, late, no_address, rule_disabled, subject_gone"), col("attempts", "integer", "Attempts so far"), col("last_error", "text", "The provider's last error"), col("sent_at", "timestamptz", "When the provider accepted it"), col("delivered_at", "timestamptz", "When it reached the tutor's phone (WhatsApp)"), col("read_at", "timestamptz", "When the tutor read it (WhatsApp)"), ...stamps],
    readerRows: "true",
  },
  {
    name: "consent_records",
    description: "What tutors said about being contacted, per channel (email, whatsapp) and purpose (reminders, marketing); never changed, the latest decides",
    columns: [id("record"), col("tutor_id", "uuid", "tutors.id"), col("channel", "text", "email or whatsapp"), col("purpose", "text", "reminders or marketing"), col("granted", "boolean", "true: agreed; false: withdrew or refused"), col("source", "text", "console, booking, reply, link or import"), col("recorded_at", "timestamptz", "When"), col("recorded_by", "uuid", "The staff member who recorded it (null: the tutor, through a link or a reply)"), ...stamps],
    readerRows: "true",
  },
  {
    name: "tutor_consents",
    description: "Each tutor's standing consent per channel and purpose (the latest of consent_records)",
    columns: [id("consent"), col("tutor_id", "uuid", "tutors.id"), col("channel", "text", "email or whatsapp"), col("purpose", "text", "reminders or marketing"), col("status", "text", "granted or withdrawn"), col("source", "text", "Where the latest answer came from"), col("recorded_at", "timestamptz", "When it was given"), ...stamps],
    readerRows: "true",
  },
  {
    name: "appointments",
    description: "The calendar: each live visit as booked, with its length, room and appointment type (the clinical fields are in visits)",
    columns: [
      id("visit"),
      col("patient_id", "uuid", "patients.id"),
      col("vet_id", "uuid", "The vet it holds (a user id), if any"),
      col("room_id", "uuid", "The room it holds (rooms are not readable here), if any"),
      col("appointment_type_id", "uuid", "The appointment type, if any"),
      col("appointment_type", "text", "The appointment type's name (kept for visits of a type since deleted)"),
      col("status", "text", "requested (booked online, awaiting the clinic), scheduled, in_progress, completed, cancelled or no_show"),
      col("scheduled_at", "timestamptz", "When it starts"),
      col("ends_at", "timestamptz", "When it ends (its length is ends_at - scheduled_at)"),
      col("confirmed_at", "timestamptz", "When the tutor confirmed attendance (null: not confirmed)"),
      ...stamps,
    ],
    joined: {
      select: `v.clinic_id, ${APPOINTMENT_VISIT_COLUMNS.slice(0, 5).map((c) => `v.${c}`).join(", ")}, t.name AS appointment_type, ${APPOINTMENT_VISIT_COLUMNS.slice(5).map((c) => `v.${c}`).join(", ")}`,
      from: "public.visits v LEFT JOIN public.appointment_types t ON t.clinic_id = v.clinic_id AND t.id = v.appointment_type_id",
      clinicColumn: "v.clinic_id",
      reads: [
        { table: "visits", columns: APPOINTMENT_VISIT_COLUMNS, rows: "" },
        { table: "appointment_types", columns: ["id", "name"], rows: "true" },
      ],
    },
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
 * per statement instead of once per row; 0012 adds the clinical record's tables, so each table's
 * view grant and row-level security are stated here too, for tables newer than 0003.)
 */
export function readerAccessSql(): string[] {
  return READABLE_TABLES.flatMap((t) => {
    if (t.joined) return joinedReaderAccessSql(t.name, t.joined);
    const columns = ["clinic_id", ...t.columns.map((c) => c.name)].join(", ");
    const shown = ["clinic_id", ...t.columns.map((c) => (c.expression ? `${c.expression} AS ${c.name}` : c.name))].join(", ");
    const live = t.name === "invoice_items" ? "" : `${t.readerRows ?? "deleted_at IS NULL"} AND `;
    // A view whose rows are narrower than the live ones (signed notes only) says so itself too.
    // Tables without deletes (the outbox, consents) say `true`: every row of the clinic.
    const narrower = t.readerRows && t.readerRows !== "true" ? ` AND ${t.readerRows.replace("deleted_at IS NULL AND ", "")}` : "";
    return [
      `CREATE OR REPLACE VIEW ${VIEW_SCHEMA}.${t.name} WITH (security_barrier = false, security_invoker = true) AS\n  SELECT ${shown} FROM public.${t.name}\n  WHERE clinic_id = ${CLINIC_SETTING}${narrower}`,
      `GRANT SELECT ON ${VIEW_SCHEMA}.${t.name} TO ${READER_ROLE}`,
      `GRANT SELECT (${columns}) ON public.${t.name} TO ${READER_ROLE}`,
      `ALTER TABLE public.${t.name} ENABLE ROW LEVEL SECURITY`,
      `DROP POLICY IF EXISTS mcp_reader_own_clinic ON public.${t.name}`,
      `CREATE POLICY mcp_reader_own_clinic ON public.${t.name} FOR SELECT TO ${READER_ROLE} USING (${live}clinic_id = ${CLINIC_SETTING})`,
    ];
  });
}

/**
 * A joined view's access: the view, its grant, the reader's columns of each table it reads, and
 * row-level security on the tables that are not readable on their own (rows `true`: every row of
 * the clinic, deleted ones too, so a visit keeps the name of a type deleted since).
 */
function joinedReaderAccessSql(name: string, joined: NonNullable<ReadableTable["joined"]>): string[] {
  return [
    `CREATE OR REPLACE VIEW ${VIEW_SCHEMA}.${name} WITH (security_barrier = false, security_invoker = true) AS\n  SELECT ${joined.select}\n  FROM ${joined.from}\n  WHERE ${joined.clinicColumn} = ${CLINIC_SETTING}`,
    `GRANT SELECT ON ${VIEW_SCHEMA}.${name} TO ${READER_ROLE}`,
    ...joined.reads.flatMap(({ table, columns, rows }) => [
      `GRANT SELECT (${["clinic_id", ...columns].join(", ")}) ON public.${table} TO ${READER_ROLE}`,
      ...(READABLE_TABLE_NAMES.has(table)
        ? []
        : [
            `ALTER TABLE public.${table} ENABLE ROW LEVEL SECURITY`,
            `DROP POLICY IF EXISTS mcp_reader_own_clinic ON public.${table}`,
            `CREATE POLICY mcp_reader_own_clinic ON public.${table} FOR SELECT TO ${READER_ROLE} USING (${rows === "true" ? "" : `${rows} AND `}clinic_id = ${CLINIC_SETTING})`,
          ]),
    ]),
  ];
}

/** The tables of the service the readable views read (for statistics). */
export const READ_BASE_TABLES: readonly string[] = [...new Set(READABLE_TABLES.flatMap((t) => (t.joined ? t.joined.reads.map((r) => r.table) : [t.name])))];
