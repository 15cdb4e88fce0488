/** @jsxImportSource preact */
import { PatientRecord } from "./clinical";
import { useEffect, useState } from "preact/hooks";
import type { Page } from "../api";
import type { MessageKey } from "../i18n";
import { DataTable, Field, useAction, useClinic, useConsole, useLoad } from "../ui";
import { ConsentSection, MessageTable } from "./reminders";

interface Tutor {
  id: string;
  name: string;
  blocked_at?: string | null;
  email: string | null;
  phone: string | null;
  national_id: string | null;
}
interface Patient {
  id: string;
  tutor_id: string;
  name: string;
  species: string;
  sex: string;
  birth_date: string | null;
}
interface InvoiceRow {
  id: string;
  status: string;
  currency: string;
  total_amount: number;
  balance: number;
  created_at: string;
}
interface VisitRow {
  id: string;
  status: string;
  scheduled_at: string;
  reason: string | null;
}

const SPECIES = ["dog", "cat", "bird", "rabbit", "rodent", "reptile", "horse", "other"];
const SEXES = ["unknown", "male", "female"];
/** Empty inputs are "not given": optional fields go out as null. */
const orNull = (value: string) => (value.trim() === "" ? null : value.trim());

function TutorForm({ tutor, onSaved }: { tutor?: Tutor; onSaved: (tutor: Tutor) => void }) {
  const { api, i18n } = useConsole();
  const [form, setForm] = useState({ name: tutor?.name ?? "", email: tutor?.email ?? "", phone: tutor?.phone ?? "", national_id: tutor?.national_id ?? "" });
  const { busy, run } = useAction();
  const set = (field: keyof typeof form) => (e: { currentTarget: HTMLInputElement }) => setForm({ ...form, [field]: e.currentTarget.value });
  const submit = (event: Event) => {
    event.preventDefault();
    const body = { name: form.name.trim(), email: orNull(form.email), phone: orNull(form.phone), national_id: orNull(form.national_id) };
    return run(async () => {
      const saved = tutor ? await api.patch<Tutor>(`/tutors/${tutor.id}`, body) : await api.post<Tutor>("/tutors", body);
      if (!tutor) setForm({ name: "", email: "", phone: "", national_id: "" });
      onSaved(saved);
    }, i18n.t("common.saved"));
  };
  return (
    <form class="card" onSubmit={submit} aria-label={tutor ? tutor.name : i18n.t("tutors.new")}>
      {!tutor && <h2>{i18n.t("tutors.new")}</h2>}
      <div class="grid">
        <Field label={i18n.t("common.name")}>
          <input name="name" required maxLength={200} value={form.name} onInput={set("name")} />
        </Field>
        <Field label={i18n.t("common.email")}>
          <input name="email" type="email" value={form.email} onInput={set("email")} />
        </Field>
        <Field label={i18n.t("common.phone")}>
          <input name="phone" value={form.phone} onInput={set("phone")} />
        </Field>
        <Field label={i18n.t("tutors.nationalId")}>
          <input name="national_id" value={form.national_id} onInput={set("national_id")} />
        </Field>
      </div>
      <button type="submit" disabled={busy}>
        {tutor ? i18n.t("common.save") : i18n.t("common.create")}
      </button>
    </form>
  );
}

export function TutorsPage() {
  const { api, i18n } = useConsole();
  const [query, setQuery] = useState("");
  const [debounced, setDebounced] = useState("");
  useEffect(() => {
    const timer = setTimeout(() => setDebounced(query.trim()), 200);
    return () => clearTimeout(timer);
  }, [query]);
  const tutors = useLoad(() => api.get<Page<Tutor>>("/tutors", { q: debounced, limit: 50 }), [debounced]);
  return (
    <section aria-labelledby="tutors-title">
      <h1 id="tutors-title">{i18n.t("tutors.title")}</h1>
      <Field label={i18n.t("common.search")}>
        <input type="search" name="q" value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
      </Field>
      <DataTable headings={["common.name", "common.phone", "common.email"]} rows={tutors.data?.data} row={(tutor) => (
        <tr>
          <td>
            <a href={`#/tutors/${tutor.id}`}>{tutor.name}</a>
          </td>
          <td>{tutor.phone ?? ""}</td>
          <td>{tutor.email ?? ""}</td>
        </tr>
      )} />
      <TutorForm onSaved={(tutor) => (location.hash = `#/tutors/${tutor.id}`)} />
    </section>
  );
}

function PatientForm({ tutorId, patient, onSaved }: { tutorId: string; patient?: Patient; onSaved: () => void }) {
  const { api, i18n } = useConsole();
  const [form, setForm] = useState({ name: patient?.name ?? "", species: patient?.species ?? "dog", sex: patient?.sex ?? "unknown", birth_date: patient?.birth_date ?? "" });
  const { busy, run } = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    const body = { name: form.name.trim(), species: form.species, sex: form.sex, birth_date: orNull(form.birth_date) };
    return run(async () => {
      if (patient) await api.patch(`/patients/${patient.id}`, body);
      else {
        await api.post("/patients", { ...body, tutor_id: tutorId });
        setForm({ ...form, name: "", birth_date: "" });
      }
      onSaved();
    }, i18n.t("common.saved"));
  };
  return (
    <form class="card" onSubmit={submit} aria-label={patient ? patient.name : i18n.t("patients.new")}>
      {!patient && <h3>{i18n.t("patients.new")}</h3>}
      <div class="grid">
        <Field label={i18n.t("common.name")}>
          <input name="patient_name" required maxLength={200} value={form.name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />
        </Field>
        <Field label={i18n.t("patients.species")}>
          <select name="species" value={form.species} onChange={(e) => setForm({ ...form, species: e.currentTarget.value })}>
            {SPECIES.map((s) => (
              <option value={s}>{i18n.label("species", s)}</option>
            ))}
          </select>
        </Field>
        <Field label={i18n.t("patients.sex")}>
          <select name="sex" value={form.sex} onChange={(e) => setForm({ ...form, sex: e.currentTarget.value })}>
            {SEXES.map((s) => (
              <option value={s}>{i18n.label("sex", s)}</option>
            ))}
          </select>
        </Field>
        <Field label={i18n.t("patients.birthDate")}>
          <input name="birth_date" type="date" value={form.birth_date} onInput={(e) => setForm({ ...form, birth_date: e.currentTarget.value })} />
        </Field>
      </div>
      <button type="submit" disabled={busy}>
        {patient ? i18n.t("common.save") : i18n.t("common.create")}
      </button>
    </form>
  );
}

export function TutorPage({ id }: { id: string }) {
  const { api, i18n } = useConsole();
  const tutor = useLoad(() => api.get<Tutor>(`/tutors/${id}`), [id]);
  const patients = useLoad(() => api.get<Page<Patient>>("/patients", { tutor_id: id, limit: 100 }), [id]);
  const invoices = useLoad(() => api.get<Page<InvoiceRow>>("/billing/invoices", { tutor_id: id, order: "desc", limit: 50 }), [id]);
  if (!tutor.data) return <p aria-busy="true">{i18n.t("common.loading")}</p>;
  return (
    <section aria-labelledby="tutor-title">
      <h1 id="tutor-title">{tutor.data.name}</h1>
      <TutorForm key={tutor.data.id} tutor={tutor.data} onSaved={tutor.reload} />
      {tutor.data.blocked_at && <p class="card" role="note">{i18n.t("rights.blocked")}</p>}
      {!tutor.data.blocked_at && <ConsentSection tutorId={id} />}
      <h2>{i18n.t("tutors.patients")}</h2>
      <ul class="plain">
        {patients.data?.data.map((p) => (
          <li>
            <a href={`#/patients/${p.id}`}>{p.name}</a> <span class="muted">{i18n.label("species", p.species)}</span>
          </li>
        ))}
      </ul>
      <PatientForm tutorId={id} onSaved={patients.reload} />
      <h2>{i18n.t("tutors.invoices")}</h2>
      <InvoiceTable rows={invoices.data?.data ?? []} />
      <a class="button secondary" href={`#/invoices/new?tutor=${id}`}>
        {i18n.t("billing.newInvoice")}
      </a>
      {api.session.value?.user.role === "owner" && <TutorRights tutor={tutor.data} onErased={tutor.reload} />}
    </section>
  );
}

export function InvoiceTable({ rows }: { rows: InvoiceRow[] }) {
  const { i18n } = useConsole();
  const clinic = useClinic();
  if (!rows.length) return <p class="muted">{i18n.t("common.none")}</p>;
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">{i18n.t("common.date")}</th>
          <th scope="col">{i18n.t("common.status")}</th>
          <th scope="col" class="num">
            {i18n.t("billing.total")}
          </th>
          <th scope="col" class="num">
            {i18n.t("billing.balance")}
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((invoice) => (
          <tr>
            <td>
              <a href={`#/invoices/${invoice.id}`}>{i18n.dateTime(invoice.created_at, clinic.timezone)}</a>
            </td>
            <td>
              <span class={`badge ${invoice.status}`}>{i18n.label("invoiceStatus", invoice.status)}</span>
            </td>
            <td class="num">{i18n.money(invoice.total_amount, invoice.currency)}</td>
            <td class="num">{i18n.money(invoice.balance, invoice.currency)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function PatientPage({ id }: { id: string }) {
  const { api, i18n } = useConsole();
  const clinic = useClinic();
  const patient = useLoad(() => api.get<Patient>(`/patients/${id}`), [id]);
  const tutor = useLoad(() => (patient.data ? api.get<Tutor>(`/tutors/${patient.data.tutor_id}`) : Promise.resolve(undefined)), [patient.data?.tutor_id]);
  const visits = useLoad(() => api.get<Page<VisitRow>>("/visits", { patient_id: id, limit: 100 }), [id]);
  const reminders = useLoad(() => api.get<Page<Parameters<typeof MessageTable>[0]["rows"] extends (infer R)[] | undefined ? R : never>>("/reminders", { patient_id: id, limit: 50 }), [id]);
  if (!patient.data) return <p aria-busy="true">{i18n.t("common.loading")}</p>;
  return (
    <section aria-labelledby="patient-title">
      <h1 id="patient-title">{patient.data.name}</h1>
      <p>
        {i18n.t("today.tutor")}: <a href={`#/tutors/${patient.data.tutor_id}`}>{tutor.data?.name ?? "…"}</a> · {i18n.label("species", patient.data.species)} · {i18n.label("sex", patient.data.sex)}
      </p>
      <PatientForm key={patient.data.id} tutorId={patient.data.tutor_id} patient={patient.data} onSaved={patient.reload} />
      <h2>{i18n.t("patients.visits")}</h2>
      <DataTable headings={["common.date", "common.status", "today.reason"]} rows={visits.data?.data} row={(visit) => (
        <tr>
          <td>
            <a href={`#/visits/${visit.id}`}>{i18n.dateTime(visit.scheduled_at, clinic.timezone)}</a>
          </td>
          <td>{i18n.t(`visit.${visit.status}` as MessageKey)}</td>
          <td>{visit.reason ?? ""}</td>
        </tr>
      )} />
      <PatientRecord patientId={id} onWeighed={patient.reload} />
      <h2>{i18n.t("reminders.messages")}</h2>
      <MessageTable rows={reminders.data?.data} />
    </section>
  );
}

/** Access and erasure on the tutor's request (owner only): the export as a download, erasure confirmed by the name. */
function TutorRights({ tutor, onErased }: { tutor: Tutor; onErased: () => void }) {
  const { api, i18n } = useConsole();
  const [name, setName] = useState("");
  const { busy, run } = useAction();
  const download = () =>
    run(async () => {
      const document = await api.get<unknown>(`/tutors/${tutor.id}/export`);
      const link = Object.assign(window.document.createElement("a"), { href: URL.createObjectURL(new Blob([JSON.stringify(document, null, 2)], { type: "application/json" })), download: `tutor-${tutor.id}.json` });
      link.click();
      URL.revokeObjectURL(link.href);
    });
  const erase = (event: Event) => {
    event.preventDefault();
    return run(async () => {
      await api.post(`/tutors/${tutor.id}/erase`, { confirm_name: name });
      setName("");
      onErased();
    }, i18n.t("common.saved"));
  };
  return (
    <section class="card" aria-labelledby="rights-title">
      <h2 id="rights-title">{i18n.t("rights.title")}</h2>
      <button type="button" class="secondary" disabled={busy} onClick={download}>
        {i18n.t("rights.export")}
      </button>
      {!tutor.blocked_at && (
        <form onSubmit={erase} aria-label={i18n.t("rights.erase")}>
          <h3>{i18n.t("rights.erase")}</h3>
          <p>{i18n.t("rights.eraseExplain")}</p>
          <Field label={i18n.t("rights.confirmName")}>
            <input name="confirm_name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </Field>
          <button type="submit" class="danger" disabled={busy || name.trim().toLowerCase() !== tutor.name.trim().toLowerCase()}>
            {i18n.t("rights.erase")}
          </button>
        </form>
      )}
    </section>
  );
}
