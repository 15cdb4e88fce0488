/** @jsxImportSource preact */
import { useEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import type { Page } from "../api";
import type { MessageKey } from "../i18n";
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
interface TimelineItem { kind: string; id: string; at: string; summary: string }
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
        <a href={`#/patients/${visit.data.patient_id}`}>{i18n.t("today.patient")}</a> · {i18n.t(`visit.${visit.data.status}` as MessageKey)} {visit.data.reason ? `· ${visit.data.reason}` : ""}
      </p>
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
      <h2>{i18n.t("record.timeline")}</h2>
      <ol class="plain timeline" data-testid="timeline">
        {timeline.data?.data.map((item) => (
          <li data-kind={item.kind}>
            <span class="muted">{i18n.dateTime(item.at, clinic.timezone)}</span> <span class={`badge kind-${item.kind}`}>{i18n.t(`kind.${item.kind}` as MessageKey)}</span>{" "}
            {item.kind === "visit" ? <a href={`#/visits/${item.id}`}>{item.summary}</a> : item.summary}
          </li>
        ))}
      </ol>
      {timeline.data && !timeline.data.data.length && <p class="muted">{i18n.t("common.none")}</p>}
    </>
  );
}

function WeightChart({ points }: { points: [number, number][] }) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const chart = new uPlot(
      { width: Math.max(320, host.current!.clientWidth), height: 200, legend: { show: false }, scales: { x: { time: true } }, series: [{}, { label: "kg", stroke: "#2f6f4f", width: 2 }] },
      [points.map((p) => p[0]), points.map((p) => p[1])],
      host.current!,
    );
    return () => chart.destroy();
  }, [points.map((p) => p.join(":")).join(",")]);
  return <div ref={host} class="chart" data-testid="weight-chart" role="img" aria-label="weight (kg) over time" />;
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
        <td>{item.due_on}</td>
        <td>
          <a href={`#/patients/${item.patient.id}`}>{item.patient.name}</a> <span class="muted">{item.patient.species}</span>
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
