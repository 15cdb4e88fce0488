/** @jsxImportSource preact */
import { useEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import type { Page } from "../api";
import type { I18n, MessageKey } from "../i18n";
import { todayIn } from "../time";
import { DataTable, Field, useAction, useClinic, useConsole, useLoad } from "../ui";

interface Addendum { id: string; author_id: string; text: string; created_at: string }
interface Note {
  id: string;
  visit_id: string;
  patient_id: string;
  author_id: string;
  status: "draft" | "signed";
  subjective: string | null;
  objective: string | null;
  assessment: string | null;
  plan: string | null;
  diagnoses: string[];
  signed_at: string | null;
  addenda: Addendum[];
}
interface Visit { id: string; patient_id: string; status: string; scheduled_at: string; reason: string | null }
interface Vitals { id: string; measured_at: string; weight_grams: number | null; temperature_dc: number | null; heart_rate_bpm: number | null; respiratory_rate_bpm: number | null; body_condition_score: number | null }
interface TimelineItem { kind: string; id: string; at: string; summary: string; record: Record<string, unknown> }
interface Prescription {
  id: string;
  visit_id: string | null;
  prescribed_by: string;
  drug: string;
  dose: string;
  route: string;
  frequency: string;
  duration_days: number | null;
  quantity: string | null;
  instructions: string | null;
  status: "active" | "cancelled";
  cancelled_at: string | null;
  cancel_reason: string | null;
  created_at: string;
}
interface DueItem {
  id: string;
  due_on: string;
  overdue: boolean;
  vaccine: string;
  reminder_status: Reminder;
  patient: { id: string; name: string; species: string };
  tutor: { id: string; name: string; phone: string | null };
}
type Reminder = "pending" | "contacted" | "booked" | "declined";
const REMINDERS: Reminder[] = ["pending", "contacted", "booked", "declined"];
const SECTIONS = ["subjective", "objective", "assessment", "plan"] as const;

/** Text inputs: an empty one is "not sent" (or null when clearing a note section). */
const orNull = (value: string) => (value.trim() ? value : null);

/** A visit's consultation notes: the caller's draft (edit, sign), signed ones with their addenda. */
export function VisitPage({ id }: { id: string }) {
  const { api, i18n } = useConsole();
  const clinic = useClinic();
  const visit = useLoad(() => api.get<Visit>(`/visits/${id}`), [id]);
  const patient = useLoad(() => (visit.data ? api.get<{ id: string; name: string }>(`/patients/${visit.data.patient_id}`) : Promise.resolve(undefined)), [visit.data?.patient_id]);
  const notes = useLoad(() => api.get<Page<Note>>(`/visits/${id}/notes`, { limit: 100 }), [id]);
  const { busy, run } = useAction();
  const writer = api.session.value!.user.role !== "staff";
  const draft = notes.data?.data.find((n) => n.status === "draft");
  if (!visit.data) return <p aria-busy="true">{i18n.t("common.loading")}</p>;
  const start = () => run(() => api.post(`/visits/${id}/notes`, { diagnoses: [] }), i18n.t("common.saved")).then(notes.reload);
  return (
    <section aria-labelledby="visit-title">
      <h1 id="visit-title">
        {i18n.t("record.visit")} · {i18n.dateTime(visit.data.scheduled_at, clinic.timezone)}
      </h1>
      <p>
        <a href={`#/patients/${visit.data.patient_id}`}>{patient.data?.name ?? "…"}</a> · {i18n.t(`visit.${visit.data.status}` as MessageKey)} {visit.data.reason ? `· ${visit.data.reason}` : ""}
      </p>
      {notes.data && !writer && !notes.data.data.length && (
        <p class="muted" role="note" data-testid="note-not-visible">
          {i18n.t(visit.data.status === "completed" || visit.data.status === "in_progress" ? "record.noteHidden" : "record.noNote")}
        </p>
      )}
      {notes.data?.data.filter((n) => n.status === "signed").map((note) => <SignedNote key={note.id} note={note} writer={writer} onChanged={notes.reload} />)}
      {draft ? <DraftForm key={draft.id} note={draft} onChanged={notes.reload} /> : writer && (
        <button type="button" disabled={busy} onClick={start}>
          {i18n.t("record.newNote")}
        </button>
      )}
    </section>
  );
}

function DraftForm({ note, onChanged }: { note: Note; onChanged: () => void }) {
  const { api, i18n } = useConsole();
  const { busy, run } = useAction();
  const [text, setText] = useState<Record<string, string>>(() => Object.fromEntries(SECTIONS.map((s) => [s, note[s] ?? ""])));
  const [diagnoses, setDiagnoses] = useState(note.diagnoses.join(", "));
  const body = () => ({ ...Object.fromEntries(SECTIONS.map((s) => [s, orNull(text[s] ?? "")])), diagnoses: diagnoses.split(",").map((d) => d.trim()).filter(Boolean) });
  const save = () => run(() => api.patch(`/notes/${note.id}`, body()), i18n.t("common.saved"));
  const sign = () => run(async () => {
    await api.patch(`/notes/${note.id}`, body());
    await api.post(`/notes/${note.id}/sign`);
  }, i18n.t("record.signedOk")).then(onChanged);
  return (
    <form class="card soap" data-testid="soap-draft" onSubmit={(e) => (e.preventDefault(), save())}>
      <h2>
        {i18n.t("record.note")} <span class="badge draft">{i18n.t("record.draft")}</span>
      </h2>
      {SECTIONS.map((section) => (
        <Field label={i18n.t(`record.${section}` as MessageKey)}>
          <textarea name={section} rows={3} value={text[section]} onInput={(e) => setText({ ...text, [section]: e.currentTarget.value })} />
        </Field>
      ))}
      <Field label={i18n.t("record.diagnoses")}>
        <input name="diagnoses" value={diagnoses} onInput={(e) => setDiagnoses(e.currentTarget.value)} />
      </Field>
      <div class="actions">
        <button type="submit" class="secondary" disabled={busy}>
          {i18n.t("common.save")}
        </button>
        <button type="button" disabled={busy} onClick={sign}>
          {i18n.t("record.sign")}
        </button>
      </div>
    </form>
  );
}

function SignedNote({ note, writer, onChanged }: { note: Note; writer: boolean; onChanged: () => void }) {
  const { api, i18n } = useConsole();
  const clinic = useClinic();
  const { busy, run } = useAction();
  const [addendum, setAddendum] = useState("");
  const add = () => run(() => api.post(`/notes/${note.id}/addenda`, { text: addendum }), i18n.t("common.saved")).then((ok) => ok && (setAddendum(""), onChanged()));
  return (
    <article class="card soap" data-testid="soap-signed">
      <h2>
        {i18n.t("record.note")} <span class="badge signed">{i18n.t("record.signed")}</span> <span class="muted">{i18n.dateTime(note.signed_at, clinic.timezone)}</span>
      </h2>
      <dl>
        {SECTIONS.filter((s) => note[s]).map((s) => (
          <>
            <dt>{i18n.t(`record.${s}` as MessageKey)}</dt>
            <dd>{note[s]}</dd>
          </>
        ))}
        {note.diagnoses.length > 0 && (
          <>
            <dt>{i18n.t("record.diagnoses")}</dt>
            <dd>{note.diagnoses.join(", ")}</dd>
          </>
        )}
      </dl>
      {note.addenda.length > 0 && <h3>{i18n.t("record.addenda")}</h3>}
      <ul class="plain addenda">
        {note.addenda.map((a) => (
          <li>
            <span class="muted">{i18n.dateTime(a.created_at, clinic.timezone)}</span> {a.text}
          </li>
        ))}
      </ul>
      {writer && (
        <form onSubmit={(e) => (e.preventDefault(), add())}>
          <Field label={i18n.t("record.addendum")}>
            <textarea name="addendum" rows={2} required value={addendum} onInput={(e) => setAddendum(e.currentTarget.value)} />
          </Field>
          <button type="submit" class="secondary" disabled={busy || !addendum.trim()}>
            {i18n.t("record.addAddendum")}
          </button>
        </form>
      )}
    </article>
  );
}

/** The patient's clinical record on its page: vitals with the weight chart, a vaccination, the timeline. */
export function PatientRecord({ patientId, onWeighed }: { patientId: string; onWeighed: () => void }) {
  const { api, i18n } = useConsole();
  const clinic = useClinic();
  const vitals = useLoad(() => api.get<Page<Vitals>>(`/patients/${patientId}/vitals`, { limit: 200, order: "desc" }), [patientId]);
  const timeline = useLoad(() => api.get<Page<TimelineItem>>(`/patients/${patientId}/timeline`, { limit: 100 }), [patientId]);
  const writer = api.session.value!.user.role !== "staff";
  const changed = () => (vitals.reload(), timeline.reload(), onWeighed());
  const weights = (vitals.data?.data ?? []).filter((v) => v.weight_grams !== null).reverse();
  return (
    <>
      <h2>{i18n.t("record.vitals")}</h2>
      {weights.length > 1 && <WeightChart points={weights.map((v) => [Date.parse(v.measured_at) / 1000, v.weight_grams! / 1000])} />}
      {writer && <VitalsForm patientId={patientId} onSaved={changed} />}
      {writer && <VaccinationForm patientId={patientId} onSaved={changed} />}
      <Prescriptions patientId={patientId} writer={writer} onChanged={timeline.reload} />
      <h2>{i18n.t("record.timeline")}</h2>
      <ol class="plain timeline" data-testid="timeline">
        {timeline.data?.data.map((item) => {
          const href = timelineLink(item);
          const text = timelineSentence(i18n, item, clinic);
          return (
            <li data-kind={item.kind}>
              <span class="muted">{i18n.dateTime(item.at, clinic.timezone)}</span> <span class={`badge kind-${item.kind}`}>{i18n.t(`kind.${item.kind}` as MessageKey)}</span> {href ? <a href={href}>{text}</a> : text}
            </li>
          );
        })}
      </ol>
      {timeline.data && !timeline.data.data.length && <p class="muted">{i18n.t("common.none")}</p>}
    </>
  );
}

/** Where a timeline event's record is shown: its visit, its note's visit, its sale. */
function timelineLink(item: TimelineItem): string | null {
  const record = item.record;
  if (item.kind === "visit") return `#/visits/${item.id}`;
  if (item.kind === "note") return `#/visits/${String(record.visit_id)}`;
  if (item.kind === "addendum") return `#/notes/${String(record.note_id)}`;
  if (item.kind === "invoice") return `#/invoices/${item.id}`;
  if (item.kind === "prescription") return `#prescription-${item.id}`;
  if (item.kind === "reminder") return record.kind === "appointment" ? `#/visits/${String(record.subject_id)}` : null;
  return typeof record.visit_id === "string" ? `#/visits/${record.visit_id}` : null;
}

/** What a reminder message says of itself, in the API's codes. */
export interface ReminderWords {
  kind: string;
  channel: string;
  state: string;
  suppressed_reason: string | null;
}

/** A reminder in words: about what, on which channel, what became of it and why it was not sent. */
export function reminderSentence(i18n: I18n, m: ReminderWords): string {
  const text = i18n.format("timeline.reminder", { what: i18n.label("reminders.kind", m.kind).toLocaleLowerCase(i18n.locale), channel: i18n.label("reminderChannel", m.channel), state: i18n.label("reminderState", m.state) });
  return m.suppressed_reason ? `${text} (${i18n.label("reminderReason", m.suppressed_reason)})` : text;
}

const shorten = (text: string, length = 120) => (text.length > length ? `${text.slice(0, length - 1)}…` : text);

/** One sentence per event in the user's language, from the record itself (money and units formatted). */
export function timelineSentence(i18n: I18n, item: TimelineItem, clinic: { timezone: string; currency: string }): string {
  const r = item.record as Record<string, never>;
  switch (item.kind) {
    case "visit":
      return `${i18n.format("timeline.visit", { reason: r.reason ?? i18n.t("timeline.noReason") })} (${i18n.t(`visit.${r.status}` as MessageKey)})`;
    case "note": {
      const diagnoses = (r.diagnoses as string[] | undefined) ?? [];
      return i18n.format("timeline.note", { text: shorten(diagnoses.length ? diagnoses.join(", ") : (r.assessment ?? r.subjective ?? "")) });
    }
    case "addendum":
      return i18n.format("timeline.addendum", { text: shorten(r.text ?? "") });
    case "vitals":
      return [i18n.t("timeline.vitalsPrefix"), vitalsText(i18n, item.record as unknown as Vitals)].join(" ");
    case "vaccination": {
      const next = r.next_due_on ? ` · ${i18n.format("timeline.nextDue", { date: i18n.date(r.next_due_on) })}` : "";
      return `${i18n.format("timeline.vaccination", { vaccine: r.vaccine ?? "" })}${next}`;
    }
    case "prescription": {
      const text = i18n.format("timeline.prescription", { drug: r.drug ?? "", dose: r.dose ?? "", frequency: r.frequency ?? "" });
      return r.status === "cancelled" ? `${text} (${i18n.label("prescriptionStatus", "cancelled")})` : text;
    }
    case "invoice":
      return i18n.format("timeline.invoice", { status: i18n.label("invoiceStatus", r.status), total: i18n.money(Number(r.total_amount), r.currency ?? clinic.currency) });
    case "reminder":
      return reminderSentence(i18n, item.record as unknown as ReminderWords);
    default:
      return item.summary;
  }
}

/** A set of vitals with their units: "20,8 kg, 37,7 °C, 95 lpm, 35 resp/min, CC 6/9". */
export function vitalsText(i18n: I18n, v: Vitals): string {
  const parts = [
    v.weight_grams !== null ? i18n.format("timeline.weight", { value: i18n.measure(v.weight_grams / 1000, "unit.kg", 2) }) : null,
    v.temperature_dc !== null ? i18n.format("timeline.temperature", { value: i18n.measure(v.temperature_dc / 10, "unit.celsius") }) : null,
    v.heart_rate_bpm !== null ? i18n.format("timeline.heartRate", { value: i18n.measure(v.heart_rate_bpm, "unit.bpm", 0) }) : null,
    v.respiratory_rate_bpm !== null ? i18n.format("timeline.respiratoryRate", { value: i18n.measure(v.respiratory_rate_bpm, "unit.breaths", 0) }) : null,
    v.body_condition_score !== null ? i18n.format("unit.bcs", { value: v.body_condition_score }) : null,
  ];
  return parts.filter(Boolean).join(", ");
}

/** The patient's prescriptions: the list (cancelled ones marked, with why), a vet's form, and cancel. */
function Prescriptions({ patientId, writer, onChanged }: { patientId: string; writer: boolean; onChanged: () => void }) {
  const { api, i18n } = useConsole();
  const clinic = useClinic();
  const list = useLoad(() => api.get<Page<Prescription>>(`/patients/${patientId}/prescriptions`, { limit: 200 }), [patientId]);
  const { busy, run } = useAction();
  const empty = { drug: "", dose: "", route: "", frequency: "", duration_days: "", instructions: "" };
  const [form, setForm] = useState(empty);
  const [cancelling, setCancelling] = useState<{ id: string; reason: string } | null>(null);
  const changed = () => (list.reload(), onChanged());
  const set = (field: keyof typeof form) => (e: { currentTarget: HTMLInputElement | HTMLTextAreaElement }) => setForm({ ...form, [field]: e.currentTarget.value });
  const prescribe = () =>
    run(
      () =>
        api.post(`/patients/${patientId}/prescriptions`, {
          drug: form.drug.trim(),
          dose: form.dose.trim(),
          route: form.route.trim(),
          frequency: form.frequency.trim(),
          duration_days: form.duration_days.trim() ? Math.trunc(Number(form.duration_days)) : null,
          instructions: orNull(form.instructions),
        }),
      i18n.t("common.saved"),
    ).then((ok) => ok && (setForm(empty), changed()));
  const cancel = () => cancelling && run(() => api.post(`/prescriptions/${cancelling.id}/cancel`, { reason: cancelling.reason.trim() }), i18n.t("common.saved")).then((ok) => ok && (setCancelling(null), changed()));
  const rows = [...(list.data?.data ?? [])].reverse();
  return (
    <section aria-labelledby="rx-title" data-testid="prescriptions">
      <h2 id="rx-title">{i18n.t("rx.title")}</h2>
      {list.data && !rows.length && <p class="muted">{i18n.t("common.none")}</p>}
      <ul class="plain">
        {rows.map((rx) => (
          <li id={`prescription-${rx.id}`} data-prescription-id={rx.id} data-status={rx.status} class="card">
            <strong>{rx.drug}</strong> · {rx.dose} · {rx.route} · {rx.frequency}
            {rx.duration_days !== null && <> · {i18n.format("unit.days", { value: rx.duration_days })}</>}{" "}
            <span class={`badge ${rx.status}`}>{i18n.label("prescriptionStatus", rx.status)}</span>{" "}
            <span class="muted">{i18n.dateTime(rx.created_at, clinic.timezone)}</span>
            {rx.instructions && <div>{rx.instructions}</div>}
            {rx.status === "cancelled" && (
              <div class="muted">
                {i18n.t("rx.cancelled")} {i18n.dateTime(rx.cancelled_at, clinic.timezone)}: {rx.cancel_reason}
              </div>
            )}
            {writer && rx.status === "active" && cancelling?.id !== rx.id && (
              <button type="button" class="secondary" onClick={() => setCancelling({ id: rx.id, reason: "" })}>
                {i18n.t("rx.cancel")}
              </button>
            )}
            {cancelling?.id === rx.id && (
              <form class="inline" onSubmit={(e) => (e.preventDefault(), cancel())}>
                <Field label={i18n.t("rx.cancelReason")}>
                  <input name="cancel_reason" required maxLength={1000} value={cancelling.reason} onInput={(e) => setCancelling({ id: rx.id, reason: e.currentTarget.value })} />
                </Field>
                <button type="submit" disabled={busy || !cancelling.reason.trim()}>
                  {i18n.t("rx.cancel")}
                </button>
                <button type="button" class="secondary" onClick={() => setCancelling(null)}>
                  {i18n.t("common.cancel")}
                </button>
              </form>
            )}
          </li>
        ))}
      </ul>
      {writer && (
        <form class="inline" data-testid="prescription-form" onSubmit={(e) => (e.preventDefault(), prescribe())}>
          <Field label={i18n.t("rx.drug")}>
            <input name="drug" required maxLength={200} value={form.drug} onInput={set("drug")} />
          </Field>
          <Field label={i18n.t("rx.dose")}>
            <input name="dose" required maxLength={100} value={form.dose} onInput={set("dose")} />
          </Field>
          <Field label={i18n.t("rx.route")}>
            <input name="route" required maxLength={100} value={form.route} onInput={set("route")} />
          </Field>
          <Field label={i18n.t("rx.frequency")}>
            <input name="frequency" required maxLength={100} value={form.frequency} onInput={set("frequency")} />
          </Field>
          <Field label={i18n.t("rx.duration")}>
            <input name="duration_days" type="number" min={1} max={3650} step={1} value={form.duration_days} onInput={set("duration_days")} />
          </Field>
          <Field label={i18n.t("rx.instructions")}>
            <textarea name="instructions" rows={2} maxLength={2000} value={form.instructions} onInput={set("instructions")} />
          </Field>
          <button type="submit" disabled={busy}>
            {i18n.t("rx.save")}
          </button>
        </form>
      )}
    </section>
  );
}

/** `#/notes/{id}`: a note (an addendum's, say) is shown on its visit's page. */
export function NoteRedirect({ id }: { id: string }) {
  const { api, i18n } = useConsole();
  useLoad(() => api.get<{ visit_id: string }>(`/notes/${id}`).then((note) => void location.replace(`#/visits/${note.visit_id}`)), [id]);
  return <p aria-busy="true">{i18n.t("common.loading")}</p>;
}

function WeightChart({ points }: { points: [number, number][] }) {
  const { i18n } = useConsole();
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const chart = new uPlot(
      {
        width: Math.max(320, host.current!.clientWidth),
        height: 220,
        legend: { show: false },
        scales: { x: { time: true } },
        axes: [{ label: i18n.t("chart.date") }, { label: i18n.t("chart.weightAxis") }],
        series: [{}, { label: i18n.t("chart.weightAxis"), stroke: "#2f6f4f", width: 2 }],
      },
      [points.map((p) => p[0]), points.map((p) => p[1])],
      host.current!,
    );
    return () => chart.destroy();
  }, [points.map((p) => p.join(":")).join(","), i18n.language.value]);
  return <div ref={host} class="chart" data-testid="weight-chart" role="img" aria-label={i18n.t("chart.weight")} />;
}

function VitalsForm({ patientId, onSaved }: { patientId: string; onSaved: () => void }) {
  const { api, i18n } = useConsole();
  const { busy, run } = useAction();
  const [kg, setKg] = useState("");
  const [temperature, setTemperature] = useState("");
  const [heart, setHeart] = useState("");
  const [breaths, setBreaths] = useState("");
  const [bcs, setBcs] = useState("");
  const number = (value: string, scale = 1) => (value.trim() ? Math.round(Number(value.replace(",", ".")) * scale) : undefined);
  const submit = () =>
    run(() => api.post(`/patients/${patientId}/vitals`, { weight_grams: number(kg, 1000), temperature_dc: number(temperature, 10), heart_rate_bpm: number(heart), respiratory_rate_bpm: number(breaths), body_condition_score: number(bcs) }), i18n.t("common.saved")).then(
      (ok) => ok && (setKg(""), setTemperature(""), setHeart(""), setBreaths(""), setBcs(""), onSaved()),
    );
  return (
    <form class="inline" data-testid="vitals-form" onSubmit={(e) => (e.preventDefault(), submit())}>
      <Field label={i18n.t("record.weightKg")}>
        <input name="weight" inputMode="decimal" value={kg} onInput={(e) => setKg(e.currentTarget.value)} />
      </Field>
      <Field label={i18n.t("record.temperature")}>
        <input name="temperature" inputMode="decimal" value={temperature} onInput={(e) => setTemperature(e.currentTarget.value)} />
      </Field>
      <Field label={i18n.t("record.heartRate")}>
        <input name="heart_rate" inputMode="numeric" value={heart} onInput={(e) => setHeart(e.currentTarget.value)} />
      </Field>
      <Field label={i18n.t("record.respiratoryRate")}>
        <input name="respiratory_rate" inputMode="numeric" value={breaths} onInput={(e) => setBreaths(e.currentTarget.value)} />
      </Field>
      <Field label={i18n.t("record.bcs")}>
        <input name="bcs" inputMode="numeric" value={bcs} onInput={(e) => setBcs(e.currentTarget.value)} />
      </Field>
      <button type="submit" disabled={busy}>
        {i18n.t("record.addVitals")}
      </button>
    </form>
  );
}

function VaccinationForm({ patientId, onSaved }: { patientId: string; onSaved: () => void }) {
  const { api, i18n } = useConsole();
  const clinic = useClinic();
  const { busy, run } = useAction();
  const [vaccine, setVaccine] = useState("");
  const [diseases, setDiseases] = useState("");
  const [lot, setLot] = useState("");
  const [expires, setExpires] = useState("");
  const [due, setDue] = useState("");
  const submit = () =>
    run(
      () => api.post(`/patients/${patientId}/vaccinations`, { vaccine, diseases: diseases.split(",").map((d) => d.trim().toLowerCase()).filter(Boolean), lot: orNull(lot), lot_expires_on: orNull(expires), next_due_on: orNull(due) }),
      i18n.t("common.saved"),
    ).then((ok) => ok && (setVaccine(""), setDiseases(""), setLot(""), setExpires(""), setDue(""), onSaved()));
  return (
    <form class="inline" data-testid="vaccination-form" onSubmit={(e) => (e.preventDefault(), submit())}>
      <Field label={i18n.t("record.vaccine")}>
        <input name="vaccine" required value={vaccine} onInput={(e) => setVaccine(e.currentTarget.value)} />
      </Field>
      <Field label={i18n.t("record.diseases")}>
        <input name="diseases" required placeholder="rabies" value={diseases} onInput={(e) => setDiseases(e.currentTarget.value)} />
      </Field>
      <Field label={i18n.t("record.lot")}>
        <input name="lot" value={lot} onInput={(e) => setLot(e.currentTarget.value)} />
      </Field>
      <Field label={i18n.t("record.lotExpires")}>
        <input name="lot_expires_on" type="date" value={expires} onInput={(e) => setExpires(e.currentTarget.value)} />
      </Field>
      <Field label={i18n.t("record.nextDue")}>
        <input name="next_due_on" type="date" min={todayIn(clinic.timezone)} value={due} onInput={(e) => setDue(e.currentTarget.value)} />
      </Field>
      <button type="submit" disabled={busy}>
        {i18n.t("record.addVaccination")}
      </button>
    </form>
  );
}

/** The due list reception calls from: overdue, then this week; each reminder marked as it goes. */
export function DuePage() {
  const { api, i18n } = useConsole();
  const clinic = useClinic();
  const today = todayIn(clinic.timezone);
  const weekEnd = new Date(Date.parse(`${today}T00:00:00Z`) + 6 * 86_400_000).toISOString().slice(0, 10);
  const list = useLoad(() => api.get<Page<DueItem>>("/vaccinations/due", { from: today, to: weekEnd, limit: 200 }), [today]);
  const { busy, run } = useAction();
  const mark = (item: DueItem, status: Reminder) => run(() => api.patch(`/vaccinations/${item.id}/reminder`, { reminder_status: status }), i18n.t("common.saved")).then(list.reload);
  const rows = (overdue: boolean) => list.data?.data.filter((d) => d.overdue === overdue);
  const table = (overdue: boolean, testId: string) => (
    <DataTable testId={testId} headings={["record.dueOn", "today.patient", "today.tutor", "common.phone", "record.vaccine", "record.reminder"]} rows={rows(overdue)} row={(item) => (
      <tr data-due-id={item.id}>
        <td>{i18n.date(item.due_on)}</td>
        <td>
          <a href={`#/patients/${item.patient.id}`}>{item.patient.name}</a> <span class="muted">{i18n.label("species", item.patient.species)}</span>
        </td>
        <td>
          <a href={`#/tutors/${item.tutor.id}`}>{item.tutor.name}</a>
        </td>
        <td>{item.tutor.phone ? <a href={`tel:${item.tutor.phone}`}>{item.tutor.phone}</a> : "—"}</td>
        <td>{item.vaccine}</td>
        <td>
          <label>
            <span class="visually-hidden">{i18n.t("record.reminder")}</span>
            <select name="reminder_status" disabled={busy} value={item.reminder_status} onChange={(e) => mark(item, e.currentTarget.value as Reminder)}>
              {REMINDERS.map((r) => (
                <option value={r}>{i18n.t(`reminder.${r}` as MessageKey)}</option>
              ))}
            </select>
          </label>
        </td>
      </tr>
    )} />
  );
  return (
    <section aria-labelledby="due-title">
      <h1 id="due-title">{i18n.t("due.title")}</h1>
      <h2>{i18n.t("due.overdue")}</h2>
      {table(true, "due-overdue")}
      <h2>{i18n.t("due.thisWeek")}</h2>
      {table(false, "due-week")}
    </section>
  );
}
