/** @jsxImportSource preact */
import { useEffect, useState } from "preact/hooks";
import type { Page } from "../api";
import type { MessageKey } from "../i18n";
import { todayIn, zonedToUtc } from "../time";
import { Field, SearchPicker, useAction, useClinic, useConsole, useLoad, type Named } from "../ui";

interface BoardVisit {
  id: string;
  status: Status;
  scheduled_at: string;
  ends_at: string;
  reason: string | null;
  needs_signed_note: boolean;
  patient: { id: string; name: string; species: string } | null;
  tutor: { id: string; name: string; phone: string | null } | null;
}
type Status = "requested" | "scheduled" | "in_progress" | "completed" | "cancelled" | "no_show";

const STATUSES: Status[] = ["requested", "scheduled", "in_progress", "completed", "cancelled", "no_show"];
/** The moves the visit state machine allows from each status. */
const MOVES: Record<Status, Status[]> = { requested: ["scheduled", "cancelled"], scheduled: ["in_progress", "cancelled", "no_show"], in_progress: ["completed"], completed: [], cancelled: [], no_show: [] };

/** The clinic's day: its visits grouped by status, with the allowed moves, and a form to schedule one. */
export function TodayPage() {
  const { api, i18n } = useConsole();
  const clinic = useClinic();
  const [day, setDay] = useState(() => todayIn(clinic.timezone));
  const board = useLoad(() => api.get<Page<BoardVisit>>("/operations/visits", { date_from: day, date_to: day, limit: 200 }), [day]);
  const { busy, run } = useAction();
  const move = (visit: BoardVisit, status: Status) => run(() => api.patch(`/visits/${visit.id}`, { status })).then(board.reload);
  return (
    <section aria-labelledby="today-title">
      <div class="title-row">
        <h1 id="today-title">{i18n.t("today.title")}</h1>
        <Field label={i18n.t("today.day")}>
          <input type="date" value={day} onChange={(e) => e.currentTarget.value && setDay(e.currentTarget.value)} />
        </Field>
      </div>
      <div class="board" aria-busy={board.data ? "false" : "true"}>
        {STATUSES.map((status) => {
          const visits = board.data?.data.filter((v) => v.status === status) ?? [];
          return (
            <section class="column" aria-labelledby={`column-${status}`} data-status={status}>
              <h2 id={`column-${status}`}>
                {i18n.t(`visit.${status}` as MessageKey)} <span class="count">{visits.length}</span>
              </h2>
              {visits.map((visit) => (
                <article class="visit card" data-visit-id={visit.id} aria-label={`${visit.patient?.name ?? "—"} ${i18n.time(visit.scheduled_at, clinic.timezone)}`}>
                  <div class="visit-head">
                    <time dateTime={visit.scheduled_at}>{i18n.time(visit.scheduled_at, clinic.timezone)}</time>
                    <span class="muted visit-length">{Math.round((Date.parse(visit.ends_at) - Date.parse(visit.scheduled_at)) / 60_000)} {i18n.t("today.minutes")}</span>
                    <strong>{visit.patient ? <a href={`#/patients/${visit.patient.id}`}>{visit.patient.name}</a> : "—"}</strong>
                  </div>
                  <div class="muted">
                    {visit.tutor ? <a href={`#/tutors/${visit.tutor.id}`}>{visit.tutor.name}</a> : "—"}
                    {visit.tutor?.phone ? ` · ${visit.tutor.phone}` : ""}
                  </div>
                  {visit.reason && <div>{visit.reason}</div>}
                  {visit.needs_signed_note && <span class="badge draft" data-testid="needs-signed-note">{i18n.t("record.pendingNote")}</span>}
                  <div class="actions">
                    {MOVES[visit.status].map((to) => (
                      <button type="button" class={to === "cancelled" || to === "no_show" ? "secondary" : ""} disabled={busy} onClick={() => move(visit, to)}>
                        {i18n.t(`move.${to}` as MessageKey)}
                      </button>
                    ))}
                    {(visit.status === "in_progress" || visit.status === "completed") && (
                      <a class="button secondary" href={`#/visits/${visit.id}`}>
                        {i18n.t("record.open")}
                      </a>
                    )}
                    {visit.status === "completed" && visit.tutor && (
                      <a class="button secondary" href={`#/invoices/new?tutor=${visit.tutor.id}&visit=${visit.id}&reason=${encodeURIComponent(visit.reason ?? "")}`}>
                        {i18n.t("visit.invoice")}
                      </a>
                    )}
                  </div>
                </article>
              ))}
            </section>
          );
        })}
      </div>
      <ScheduleVisit day={day} onScheduled={board.reload} />
    </section>
  );
}

/** A tutor narrows the patient search to their pets; a patient can also be found directly. */
function ScheduleVisit({ day, onScheduled }: { day: string; onScheduled: () => void }) {
  const { api, i18n } = useConsole();
  const clinic = useClinic();
  const [tutor, setTutor] = useState<Named | null>(null);
  const [patient, setPatient] = useState<Named | null>(null);
  const [tutorsPatients, setTutorsPatients] = useState<Named[]>([]);
  const [time, setTime] = useState("09:00");
  const [reason, setReason] = useState("");
  // A new round after each visit scheduled: the pickers start empty again.
  const [round, setRound] = useState(0);
  const { busy, run } = useAction();
  useEffect(() => {
    setPatient(null);
    setTutorsPatients([]);
    if (tutor) api.get<Page<Named>>("/patients", { tutor_id: tutor.id, limit: 100 }).then((page) => setTutorsPatients(page.data));
  }, [tutor]);
  const submit = async (event: Event) => {
    event.preventDefault();
    if (!patient) return;
    const done = await run(() => api.post("/visits", { patient_id: patient.id, scheduled_at: zonedToUtc(day, time, clinic.timezone), reason: reason || null }), i18n.t("today.scheduled"));
    if (done) {
      setReason("");
      setTutor(null);
      setRound(round + 1);
      onScheduled();
    }
  };
  return (
    <form class="card schedule" onSubmit={submit} aria-labelledby="schedule-title">
      <h2 id="schedule-title">{i18n.t("today.schedule")}</h2>
      <div class="grid">
        <SearchPicker
          key={`tutor-${round}`}
          label={i18n.t("today.tutor")}
          name="tutor"
          placeholder={i18n.t("today.tutorSearch")}
          picked={tutor}
          onPick={setTutor}
          search={(q) => api.get<Page<Named>>("/tutors", { q, limit: 8 }).then((page) => page.data)}
        />
        <div>
          <SearchPicker
            key={`patient-${round}`}
            label={i18n.t("today.patient")}
            name="patient"
            placeholder={i18n.t("today.pickPatient")}
            picked={patient}
            onPick={setPatient}
            search={(q) => api.get<Page<Named>>("/patients", { q, tutor_id: tutor?.id, limit: 8 }).then((page) => page.data)}
          />
          {tutor && !patient && (
            <ul class="matches" aria-label={`${i18n.t("tutors.patients")} ${tutor.name}`}>
              {tutorsPatients.map((pet) => (
                <li>
                  <button type="button" class="link" onClick={() => setPatient(pet)}>
                    {pet.name}
                  </button>
                </li>
              ))}
            </ul>
          )}
        </div>
        <Field label={i18n.t("today.time")}>
          <input type="time" name="time" value={time} required onInput={(e) => setTime(e.currentTarget.value)} />
        </Field>
        <Field label={i18n.t("today.reason")}>
          <input name="reason" maxLength={500} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
        </Field>
      </div>
      <button type="submit" disabled={busy || !patient}>
        {i18n.t("today.schedule")}
      </button>
    </form>
  );
}
