/** @jsxImportSource preact */
import { useEffect, useState } from "preact/hooks";
import type { Page } from "../api";
import { todayIn, zonedToUtc } from "../time";
import { Field, SearchPicker, useAction, useClinic, useConsole, useLoad, type Named } from "../ui";

interface CalendarVisit {
  id: string;
  status: "requested" | "scheduled" | "in_progress" | "completed" | "cancelled" | "no_show";
  scheduled_at: string;
  ends_at: string;
  vet_id: string | null;
  room_id: string | null;
  patient: { id: string; name: string } | null;
}
interface FeedStatus {
  active: boolean;
  created_at: string | null;
}
interface CreatedFeed {
  url: string;
  webcal_url: string;
}

/** The grid's rows: every half hour from 08:00 to 19:30, in the clinic's local time. */
const SLOT_MINUTES = 30;
const SLOTS = Array.from({ length: 24 }, (_, i) => `${String(8 + Math.floor(i / 2)).padStart(2, "0")}:${i % 2 ? "30" : "00"}`);

const addDays = (day: string, days: number) => new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
/** Monday of the day's ISO week. */
const mondayOf = (day: string) => addDays(day, -((new Date(`${day}T00:00:00Z`).getUTCDay() + 6) % 7));
const minutes = (visit: CalendarVisit) => Math.round((Date.parse(visit.ends_at) - Date.parse(visit.scheduled_at)) / 60_000);
/** Live visits hold their time; cancelled ones and no-shows leave it free. */
const holds = (visit: CalendarVisit) => visit.status !== "cancelled" && visit.status !== "no_show";

/**
 * The calendar: a day or a week of one vet's or one room's visits on a half-hour grid. A free
 * half hour opens the booking form at that time; visits requested online stand out, with
 * confirm and cancel.
 */
export function CalendarPage() {
  const { api, i18n } = useConsole();
  const clinic = useClinic();
  const me = api.session.value!.user;
  const [day, setDay] = useState(() => todayIn(clinic.timezone));
  const [span, setSpan] = useState<"day" | "week">("day");
  const [by, setBy] = useState<"vet" | "room">("vet");
  const [who, setWho] = useState<string>(me.id);
  const [booking, setBooking] = useState<{ day: string; time: string } | null>(null);
  // Only the owner lists the clinic's people; anyone else sees their own calendar.
  const people = useLoad(() => (me.role === "owner" ? api.get<Page<Named>>("/users", { limit: 200 }).then((p) => p.data) : Promise.resolve([{ id: me.id, name: me.name }])), []);
  const rooms = useLoad(() => api.get<Page<Named>>("/rooms", { limit: 200 }).then((p) => p.data), []);
  const days = span === "day" ? [day] : Array.from({ length: 7 }, (_, i) => addDays(mondayOf(day), i));
  const board = useLoad(() => api.get<Page<CalendarVisit>>("/operations/visits", { date_from: days[0], date_to: days.at(-1), limit: 200 }), [days[0], span]);
  const { busy, run } = useAction();
  useEffect(() => {
    const choices = by === "vet" ? people.data : rooms.data;
    if (choices && !choices.some((c) => c.id === who)) setWho(choices[0]?.id ?? "");
  }, [by, people.data, rooms.data]);
  const mine = (board.data?.data ?? []).filter((v) => (by === "vet" ? v.vet_id === who : v.room_id === who));
  const cellOf = (d: string, time: string) => {
    const start = Date.parse(zonedToUtc(d, time, clinic.timezone));
    const end = start + SLOT_MINUTES * 60_000;
    const starting = mine.filter((v) => Date.parse(v.scheduled_at) >= start && Date.parse(v.scheduled_at) < end);
    const held = mine.some((v) => holds(v) && Date.parse(v.scheduled_at) < end && start < Date.parse(v.ends_at));
    return { starting, held };
  };
  const move = (visit: CalendarVisit, status: "scheduled" | "cancelled") => run(() => api.patch(`/visits/${visit.id}`, { status })).then(board.reload);
  return (
    <section aria-labelledby="calendar-title" class="calendar">
      <div class="title-row">
        <h1 id="calendar-title">{i18n.t("calendar.title")}</h1>
        <Field label={i18n.t("today.day")}>
          <input type="date" value={day} onChange={(e) => e.currentTarget.value && setDay(e.currentTarget.value)} />
        </Field>
        <Field label={i18n.t("calendar.span")}>
          <select value={span} onChange={(e) => setSpan(e.currentTarget.value as "day" | "week")}>
            <option value="day">{i18n.t("calendar.dayView")}</option>
            <option value="week">{i18n.t("calendar.weekView")}</option>
          </select>
        </Field>
        <Field label={i18n.t("calendar.by")}>
          <select value={by} onChange={(e) => setBy(e.currentTarget.value as "vet" | "room")}>
            <option value="vet">{i18n.t("calendar.byVet")}</option>
            <option value="room">{i18n.t("calendar.byRoom")}</option>
          </select>
        </Field>
        <Field label={by === "vet" ? i18n.t("calendar.vet") : i18n.t("calendar.room")}>
          <select value={who} name="who" onChange={(e) => setWho(e.currentTarget.value)}>
            {((by === "vet" ? people.data : rooms.data) ?? []).map((c) => (
              <option value={c.id}>{c.name}</option>
            ))}
          </select>
        </Field>
      </div>
      <table class="calendar-grid" aria-busy={board.data ? "false" : "true"}>
        <thead>
          <tr>
            <th scope="col">{i18n.t("today.time")}</th>
            {days.map((d) => (
              <th scope="col">{i18n.date(d)}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {SLOTS.map((time) => (
            <tr>
              <th scope="row">{time}</th>
              {days.map((d) => {
                const { starting, held } = cellOf(d, time);
                return (
                  <td class={held ? "held" : "free"}>
                    {starting.map((visit) => (
                      <article class={`visit card status-${visit.status}`} data-visit-id={visit.id} data-status={visit.status}>
                        <time dateTime={visit.scheduled_at}>{i18n.time(visit.scheduled_at, clinic.timezone)}</time>{" "}
                        <span class="muted visit-length">
                          {minutes(visit)} {i18n.t("today.minutes")}
                        </span>{" "}
                        <strong>{visit.patient ? <a href={`#/patients/${visit.patient.id}`}>{visit.patient.name}</a> : "—"}</strong>
                        {visit.status === "requested" && (
                          <div class="actions">
                            <span class="badge">{i18n.t("calendar.requested")}</span>
                            <button type="button" disabled={busy} onClick={() => move(visit, "scheduled")}>
                              {i18n.t("move.scheduled")}
                            </button>
                            <button type="button" class="secondary" disabled={busy} onClick={() => move(visit, "cancelled")}>
                              {i18n.t("move.cancelled")}
                            </button>
                          </div>
                        )}
                      </article>
                    ))}
                    {!held && who && (
                      <button type="button" class="link free-slot" aria-label={`${i18n.t("calendar.bookAt")} ${d} ${time}`} onClick={() => setBooking({ day: d, time })}>
                        +
                      </button>
                    )}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
      {booking && (
        <BookVisit
          key={`${booking.day}-${booking.time}`}
          day={booking.day}
          time={booking.time}
          resource={by === "vet" ? { vet_id: who } : { room_id: who }}
          onDone={() => {
            setBooking(null);
            board.reload();
          }}
        />
      )}
      <CalendarFeed userId={me.id} />
    </section>
  );
}

/** The booking form for a free half hour: a patient found by name, the time as clicked (it may be changed). */
function BookVisit(props: { day: string; time: string; resource: { vet_id: string } | { room_id: string }; onDone: () => void }) {
  const { api, i18n } = useConsole();
  const clinic = useClinic();
  const [patient, setPatient] = useState<Named | null>(null);
  const [time, setTime] = useState(props.time);
  const [reason, setReason] = useState("");
  const { busy, run } = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    if (!patient) return;
    const body = { patient_id: patient.id, scheduled_at: zonedToUtc(props.day, time, clinic.timezone), reason: reason || null, ...props.resource };
    if (await run(() => api.post("/visits", body), i18n.t("today.scheduled"))) props.onDone();
  };
  return (
    <form class="card schedule" onSubmit={submit} aria-labelledby="book-title">
      <h2 id="book-title">
        {i18n.t("today.schedule")} · {i18n.date(props.day)}
      </h2>
      <div class="grid">
        <SearchPicker
          label={i18n.t("today.patient")}
          name="patient"
          placeholder={i18n.t("today.pickPatient")}
          picked={patient}
          onPick={setPatient}
          search={(q) => api.get<Page<Named>>("/patients", { q, limit: 8 }).then((page) => page.data)}
        />
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

/** The signed-in person's calendar feed: made or replaced here; its address is shown once. */
function CalendarFeed({ userId }: { userId: string }) {
  const { api, i18n } = useConsole();
  const status = useLoad(() => api.get<FeedStatus>(`/users/${userId}/calendar-feed`), [userId]);
  const [created, setCreated] = useState<CreatedFeed | null>(null);
  const { busy, run } = useAction();
  const make = () => run(async () => setCreated(await api.post<CreatedFeed>(`/users/${userId}/calendar-feed`)), i18n.t("calendar.feedMade")).then(status.reload);
  const revoke = () => run(() => api.remove(`/users/${userId}/calendar-feed`), i18n.t("calendar.feedRevoked")).then(() => (setCreated(null), status.reload()));
  return (
    <section class="card" aria-labelledby="feed-title">
      <h2 id="feed-title">{i18n.t("calendar.feed")}</h2>
      <p class="muted">{i18n.t("calendar.feedHelp")}</p>
      {created && (
        <p>
          <input readOnly name="feed-url" aria-label={i18n.t("calendar.feedUrl")} value={created.url} onFocus={(e) => e.currentTarget.select()} /> <a href={created.webcal_url}>{i18n.t("calendar.feedSubscribe")}</a>
        </p>
      )}
      <div class="actions">
        <button type="button" disabled={busy} onClick={make}>
          {status.data?.active ? i18n.t("calendar.feedRotate") : i18n.t("calendar.feedMake")}
        </button>
        {status.data?.active && (
          <button type="button" class="secondary" disabled={busy} onClick={revoke}>
            {i18n.t("calendar.feedRevoke")}
          </button>
        )}
      </div>
    </section>
  );
}
