/** @jsxImportSource preact */
import { useEffect, useState } from "preact/hooks";

/**
 * The clinic's public booking page (`/book/{slug}`) and its manage view (`/book/{slug}/manage#<token>`),
 * for tutors without an account: Spanish, one column, for a phone first. It speaks only to the
 * public booking routes; the manage token rides in the fragment, so it never reaches a server
 * log or a Referer, and is sent in the X-Booking-Token header.
 */

interface PublicType {
  id: string;
  name: string;
  duration_minutes: number;
  species: string[];
}
interface PublicClinic {
  name: string;
  address: string | null;
  phone: string | null;
  timezone: string;
  slug: string;
  cancellation_window_minutes: number;
  appointment_types: PublicType[];
  vets: { id: string; name: string }[] | null;
  consents: { channel: "email" | "whatsapp"; text: string }[];
}
interface Slot {
  start: string;
  end: string;
  vet_id: string | null;
}
interface Booking {
  id: string;
  status: string;
  start: string;
  end: string;
  appointment_type: { id: string; name: string };
  vet: { id: string; name: string } | null;
  patient_name: string;
  clinic: { name: string; slug: string; timezone: string };
  changeable_until: string;
  can_change: boolean;
}
interface BookingAnswer {
  booking: Booking;
  manage_token: string;
  manage_url: string;
  manage_expires_at: string;
}

const SPECIES: [string, string][] = [
  ["dog", "Perro"],
  ["cat", "Gato"],
  ["rabbit", "Conejo"],
  ["bird", "Ave"],
  ["rodent", "Roedor"],
  ["reptile", "Reptil"],
  ["horse", "Caballo"],
  ["other", "Otra"],
];
const STATUS: Record<string, string> = { requested: "Solicitada: la clínica la confirmará", scheduled: "Confirmada", cancelled: "Cancelada", in_progress: "En atención", completed: "Atendida", no_show: "No asistió" };

class PublicError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly fields: string[],
  ) {
    super(code);
  }
}

async function send<T>(method: string, path: string, options: { json?: unknown; headers?: Record<string, string> } = {}): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json", ...options.headers };
  if (options.json !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`/api/v1/public${path}`, { method, headers, body: options.json === undefined ? undefined : JSON.stringify(options.json) });
  const body = (await response.json().catch(() => ({}))) as { code?: string; details?: { fields?: { path: string }[] } };
  if (!response.ok) throw new PublicError(response.status, body.code ?? "UNKNOWN", body.details?.fields?.map((f) => f.path) ?? []);
  return body as T;
}

const FIELD_NAMES: Record<string, string> = {
  "body.tutor.phone": "el teléfono (con código de país, por ejemplo +56912345678)",
  "body.tutor.email": "el correo",
  "body.tutor.rut": "el RUT",
  "body.tutor.name": "tu nombre",
  "body.patient.name": "el nombre de tu mascota",
  "body.patient.species": "la especie (esta atención no es para esa especie)",
  "body.start": "la hora (ya no está disponible o está fuera del plazo para reservar)",
};

/** What to tell the tutor about a refusal, in plain Spanish. */
function explain(error: unknown): string {
  if (!(error instanceof PublicError)) return "No pudimos conectar con la clínica. Revisa tu conexión e intenta de nuevo.";
  switch (error.code) {
    case "SLOT_TAKEN":
      return "Esa hora se acaba de reservar. Elige otra, por favor.";
    case "RATE_LIMIT_EXCEEDED":
      return "Demasiados intentos seguidos. Espera un minuto e intenta de nuevo.";
    case "INVALID_STATE_TRANSITION":
      return "Esta reserva ya no se puede cambiar en línea. Llama a la clínica, por favor.";
    case "INVALID_TOKEN":
    case "TOKEN_EXPIRED":
      return "Este enlace no es válido o ya venció. Llama a la clínica, por favor.";
    case "NOT_FOUND":
      return "No encontramos esta clínica o esta reserva.";
    case "VALIDATION_FAILED": {
      const named = error.fields.map((path) => FIELD_NAMES[path]).filter(Boolean);
      return named.length ? `Revisa ${named.join(", ")}.` : "Revisa los datos del formulario.";
    }
    default:
      return "No se pudo completar. Intenta de nuevo o llama a la clínica.";
  }
}

const timeIn = (iso: string, timeZone: string) => new Intl.DateTimeFormat("es-CL", { timeZone, hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(new Date(iso));
const dateTimeIn = (iso: string, timeZone: string) => new Intl.DateTimeFormat("es-CL", { timeZone, weekday: "long", day: "numeric", month: "long", hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(new Date(iso));
/** Today in the clinic's time zone, as YYYY-MM-DD. */
const todayIn = (timeZone: string) => new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date());

function Summary({ booking }: { booking: Booking }) {
  const zone = booking.clinic.timezone;
  return (
    <dl class="plain" data-testid="booking-summary">
      <dt>Clínica</dt>
      <dd>{booking.clinic.name}</dd>
      <dt>Atención</dt>
      <dd>{booking.appointment_type.name}</dd>
      <dt>Fecha y hora</dt>
      <dd data-testid="booking-when">{dateTimeIn(booking.start, zone)}</dd>
      <dt>Mascota</dt>
      <dd>{booking.patient_name}</dd>
      {booking.vet && (
        <>
          <dt>Veterinario/a</dt>
          <dd>{booking.vet.name}</dd>
        </>
      )}
      <dt>Estado</dt>
      <dd data-testid="booking-status">{STATUS[booking.status] ?? booking.status}</dd>
    </dl>
  );
}

function Booked({ answer }: { answer: BookingAnswer }) {
  const link = new URL(answer.manage_url, location.origin);
  const path = `${link.pathname}${link.hash}`;
  return (
    <section class="card sign-in" aria-labelledby="booked-title">
      <h1 id="booked-title">¡Reserva recibida!</h1>
      <Summary booking={answer.booking} />
      <p>
        Guarda este enlace: con él puedes ver, cambiar o cancelar tu reserva hasta {answer.booking.changeable_until ? dateTimeIn(answer.booking.changeable_until, answer.booking.clinic.timezone) : "antes de la hora"}.
      </p>
      <a class="button" href={path} data-testid="manage-link">
        Ver, cambiar o cancelar mi reserva
      </a>
    </section>
  );
}

export function BookingPage({ slug }: { slug: string }) {
  const [clinic, setClinic] = useState<PublicClinic | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [typeId, setTypeId] = useState("");
  const [day, setDay] = useState("");
  const [slots, setSlots] = useState<Slot[] | null>(null);
  const [slot, setSlot] = useState<Slot | null>(null);
  const [form, setForm] = useState({ name: "", phone: "+569", email: "", rut: "", pet: "", species: "dog", email_reminders: false, whatsapp_reminders: false });
  const [key, setKey] = useState("");
  const [busy, setBusy] = useState(false);
  const [answer, setAnswer] = useState<BookingAnswer | null>(null);

  useEffect(() => {
    send<PublicClinic>("GET", `/clinics/${encodeURIComponent(slug)}`)
      .then((found) => {
        setClinic(found);
        setTypeId(found.appointment_types[0]?.id ?? "");
        setDay(todayIn(found.timezone));
      })
      .catch((e) => setError(explain(e)));
  }, [slug]);

  useEffect(() => {
    if (!clinic || !typeId || !day) return;
    setSlots(null);
    setSlot(null);
    // An answer for a day or type no longer chosen is dropped.
    let current = true;
    send<{ data: Slot[] }>("GET", `/clinics/${encodeURIComponent(slug)}/availability?appointment_type_id=${typeId}&from=${day}&to=${day}`)
      .then((found) => current && setSlots(found.data))
      .catch((e) => {
        if (!current) return;
        setSlots([]);
        setError(explain(e));
      });
    return () => {
      current = false;
    };
  }, [clinic, typeId, day]);

  if (answer) return <Booked answer={answer} />;
  if (!clinic) {
    return (
      <section class="card sign-in" aria-busy={!error}>
        <h1>Reservar hora</h1>
        <p role={error ? "alert" : undefined}>{error ?? "Cargando…"}</p>
      </section>
    );
  }
  const type = clinic.appointment_types.find((t) => t.id === typeId);
  const species = type?.species.length ? SPECIES.filter(([value]) => type.species.includes(value)) : SPECIES;
  const input = (name: "name" | "phone" | "email" | "rut" | "pet") => ({ value: form[name], onInput: (e: { currentTarget: HTMLInputElement }) => setForm({ ...form, [name]: e.currentTarget.value }) });
  const pick = (chosen: Slot) => {
    setSlot(chosen);
    setKey(crypto.randomUUID()); // one key per attempt at this slot: a retry of the same form never books twice
    setError(null);
  };
  const submit = async (event: Event) => {
    event.preventDefault();
    if (!slot || !type) return;
    setBusy(true);
    setError(null);
    try {
      const made = await send<BookingAnswer>("POST", `/clinics/${encodeURIComponent(slug)}/bookings`, {
        headers: { "idempotency-key": key },
        json: {
          appointment_type_id: type.id,
          start: slot.start,
          ...(slot.vet_id ? { vet_id: slot.vet_id } : {}),
          tutor: { name: form.name, phone: form.phone.replace(/[\s()-]/g, ""), email: form.email.trim(), ...(form.rut.trim() ? { rut: form.rut.trim() } : {}) },
          patient: { name: form.pet, species: species.some(([value]) => value === form.species) ? form.species : species[0]![0] },
          consents: { email_reminders: form.email_reminders, whatsapp_reminders: form.whatsapp_reminders },
        },
      });
      setAnswer(made);
    } catch (e) {
      setError(explain(e));
      if (e instanceof PublicError && e.code === "SLOT_TAKEN") {
        setSlot(null);
        send<{ data: Slot[] }>("GET", `/clinics/${encodeURIComponent(slug)}/availability?appointment_type_id=${typeId}&from=${day}&to=${day}`).then((found) => setSlots(found.data)).catch(() => undefined);
      }
    } finally {
      setBusy(false);
    }
  };
  const vetName = (id: string | null) => clinic.vets?.find((v) => v.id === id)?.name;
  const consentText = (channel: "email" | "whatsapp") => clinic.consents.find((c) => c.channel === channel)?.text ?? "";

  return (
    <section class="card sign-in" aria-labelledby="book-title">
      <h1 id="book-title">Reservar hora en {clinic.name}</h1>
      {clinic.address && <p class="muted">{clinic.address}</p>}
      {clinic.phone && <p class="muted"><a href={`tel:${clinic.phone.replace(/[^+0-9]/g, "")}`}>{clinic.phone}</a></p>}
      {error && (
        <p class="notice error" role="alert">
          {error}
        </p>
      )}
      {!clinic.appointment_types.length ? (
        <p>Esta clínica no tiene atenciones para reservar en línea por ahora.</p>
      ) : (
        <>
          <label class="field">
            <span>Tipo de atención</span>
            <select value={typeId} onChange={(e) => setTypeId(e.currentTarget.value)} data-testid="type">
              {clinic.appointment_types.map((t) => (
                <option value={t.id}>
                  {t.name} ({t.duration_minutes} min)
                </option>
              ))}
            </select>
          </label>
          <label class="field">
            <span>Día</span>
            <input type="date" value={day} min={todayIn(clinic.timezone)} onChange={(e) => e.currentTarget.value && setDay(e.currentTarget.value)} data-testid="day" />
          </label>
          <fieldset>
            <legend>Horas disponibles</legend>
            {slots === null ? (
              <p aria-busy="true">Buscando horas…</p>
            ) : !slots.length ? (
              <p data-testid="no-slots">No quedan horas este día. Prueba con otro.</p>
            ) : (
              <div class="inline" role="group" aria-label="Horas disponibles" data-day={day}>
                {slots.map((s) => (
                  <button type="button" class={slot === s ? undefined : "secondary"} aria-pressed={slot === s} onClick={() => pick(s)} data-testid="slot">
                    {timeIn(s.start, clinic.timezone)}
                    {vetName(s.vet_id) ? ` · ${vetName(s.vet_id)}` : ""}
                  </button>
                ))}
              </div>
            )}
          </fieldset>
          {slot && (
            <form onSubmit={submit} class="sign-in" data-testid="booking-form">
              <h2>Tus datos</h2>
              <label class="field">
                <span>Nombre y apellido</span>
                <input required maxLength={100} autoComplete="name" {...input("name")} />
              </label>
              <label class="field">
                <span>Teléfono (con +56)</span>
                <input required type="tel" autoComplete="tel" pattern="^\+[1-9][0-9]{7,14}$" {...input("phone")} />
              </label>
              <label class="field">
                <span>Correo electrónico</span>
                <input required type="email" maxLength={254} autoComplete="email" {...input("email")} />
              </label>
              <label class="field">
                <span>RUT (opcional)</span>
                <input maxLength={20} {...input("rut")} />
              </label>
              <h2>Tu mascota</h2>
              <label class="field">
                <span>Nombre</span>
                <input required maxLength={100} {...input("pet")} />
              </label>
              <label class="field">
                <span>Especie</span>
                <select value={form.species} onChange={(e) => setForm({ ...form, species: e.currentTarget.value })}>
                  {species.map(([value, label]) => (
                    <option value={value}>{label}</option>
                  ))}
                </select>
              </label>
              <fieldset>
                <legend>Recordatorios (opcional)</legend>
                <label class="check">
                  <input type="checkbox" checked={form.email_reminders} onChange={(e) => setForm({ ...form, email_reminders: e.currentTarget.checked })} data-testid="consent-email" />
                  <span>{consentText("email")}</span>
                </label>
                <label class="check">
                  <input type="checkbox" checked={form.whatsapp_reminders} onChange={(e) => setForm({ ...form, whatsapp_reminders: e.currentTarget.checked })} data-testid="consent-whatsapp" />
                  <span>{consentText("whatsapp")}</span>
                </label>
              </fieldset>
              <button type="submit" disabled={busy} data-testid="book">
                Reservar {timeIn(slot.start, clinic.timezone)}
              </button>
            </form>
          )}
        </>
      )}
    </section>
  );
}

/** Another offered time for the same type: the tutor picks a day and a time, the booking moves there. */
function MoveBooking({ booking, token, onMoved }: { booking: Booking; token: string; onMoved: (answer: BookingAnswer) => void }) {
  const zone = booking.clinic.timezone;
  const [day, setDay] = useState(() => new Intl.DateTimeFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date(booking.start)));
  const [slots, setSlots] = useState<Slot[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    setSlots(null);
    let current = true;
    send<{ data: Slot[] }>("GET", `/clinics/${encodeURIComponent(booking.clinic.slug)}/availability?appointment_type_id=${booking.appointment_type.id}&from=${day}&to=${day}`)
      .then((found) => current && setSlots(found.data.filter((slot) => slot.start !== booking.start)))
      .catch((e) => current && (setSlots([]), setError(explain(e))));
    return () => {
      current = false;
    };
  }, [day]);
  const move = async (slot: Slot) => {
    setBusy(true);
    setError(null);
    try {
      onMoved(await send<BookingAnswer>("POST", "/bookings/manage", { headers: { "x-booking-token": token }, json: { action: "move", start: slot.start, ...(slot.vet_id ? { vet_id: slot.vet_id } : {}) } }));
    } catch (e) {
      setError(explain(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <fieldset data-testid="move">
      <legend>Elige la nueva hora</legend>
      {error && (
        <p class="notice error" role="alert">
          {error}
        </p>
      )}
      <label class="field">
        <span>Día</span>
        <input type="date" value={day} min={todayIn(zone)} onChange={(e) => e.currentTarget.value && setDay(e.currentTarget.value)} data-testid="move-day" />
      </label>
      {slots === null ? (
        <p aria-busy="true">Buscando horas…</p>
      ) : !slots.length ? (
        <p>No quedan horas este día. Prueba con otro.</p>
      ) : (
        <div class="inline" role="group" aria-label="Horas disponibles">
          {slots.map((slot) => (
            <button type="button" class="secondary" disabled={busy} onClick={() => move(slot)} data-testid="move-slot">
              {timeIn(slot.start, zone)}
            </button>
          ))}
        </div>
      )}
    </fieldset>
  );
}

/** The manage link's page: the booking, and buttons to move or cancel it while the clinic's window allows. */
export function ManageBookingPage() {
  const [token, setToken] = useState(() => location.hash.replace(/^#/, ""));
  const [moving, setMoving] = useState(false);
  // A move answers a new link (the old one expires with the old time): the page keeps the new one.
  const moved = (next: BookingAnswer) => {
    setAnswer(next);
    setMoving(false);
    setToken(next.manage_token);
    history.replaceState(null, "", `${location.pathname}#${next.manage_token}`);
  };
  const [answer, setAnswer] = useState<BookingAnswer | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [asking, setAsking] = useState(false);
  useEffect(() => {
    send<BookingAnswer>("GET", "/bookings/manage", { headers: { "x-booking-token": token } })
      .then(setAnswer)
      .catch((e) => setError(explain(e)));
  }, [token]);
  const cancel = async () => {
    setBusy(true);
    setError(null);
    try {
      setAnswer(await send<BookingAnswer>("POST", "/bookings/manage", { headers: { "x-booking-token": token }, json: { action: "cancel" } }));
      setAsking(false);
    } catch (e) {
      setError(explain(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="card sign-in" aria-labelledby="manage-title">
      <h1 id="manage-title">Tu reserva</h1>
      {error && (
        <p class="notice error" role="alert">
          {error}
        </p>
      )}
      {!answer && !error && <p aria-busy="true">Cargando…</p>}
      {answer && (
        <>
          <Summary booking={answer.booking} />
          {answer.booking.status === "cancelled" ? (
            <p class="notice ok" role="status" data-testid="cancelled">
              Tu reserva está cancelada. La hora quedó libre para otra persona.
            </p>
          ) : answer.booking.can_change ? (
            asking ? (
              <div class="actions">
                <p>¿Seguro que quieres cancelar esta reserva?</p>
                <button type="button" class="danger" disabled={busy} onClick={cancel} data-testid="confirm-cancel">
                  Sí, cancelar
                </button>
                <button type="button" class="secondary" onClick={() => setAsking(false)}>
                  No, mantenerla
                </button>
              </div>
            ) : moving ? (
              <>
                <MoveBooking booking={answer.booking} token={token} onMoved={moved} />
                <button type="button" class="secondary" onClick={() => setMoving(false)}>
                  Mantener la hora actual
                </button>
              </>
            ) : (
              <div class="actions">
                <button type="button" class="secondary" onClick={() => setMoving(true)} data-testid="move-start">
                  Cambiar la hora
                </button>
                <button type="button" class="danger" onClick={() => setAsking(true)} data-testid="cancel">
                  Cancelar la reserva
                </button>
              </div>
            )
          ) : (
            <p>Ya no se puede cambiar ni cancelar en línea. Si lo necesitas, llama a la clínica.</p>
          )}
          <p>
            <a href={`/book/${answer.booking.clinic.slug}`}>Reservar otra hora</a>
          </p>
        </>
      )}
    </section>
  );
}
