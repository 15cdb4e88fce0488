import { signal } from "@preact/signals";

export interface Clinic {
  id: string;
  name: string;
  legal_name: string | null;
  rut: string | null;
  address: string | null;
  phone: string | null;
  giro: string | null;
  economic_activity_code: string | null;
  commune: string | null;
  sii_resolution_number: number | null;
  sii_resolution_date: string | null;
  timezone: string;
  currency: string;
  /** The language of messages to tutors. */
  language: "es" | "en";
  tax_rate_bps: number;
  plan: string;
}
export interface User {
  id: string;
  email: string;
  name: string;
  role: "owner" | "vet" | "staff";
  /** An install administrator: sees the Install section. */
  is_admin?: boolean;
}
export interface Session {
  user: User;
  clinic: Clinic;
}
export interface Page<T> {
  data: T[];
  next_cursor?: string | null;
}

/** A refusal in the API's one envelope. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: { fields?: { path: string; message: string }[] } & Record<string, unknown>,
  ) {
    super(message);
  }
}

type Query = Record<string, string | number | undefined | null>;
interface SendOptions {
  json?: unknown;
  query?: Query;
  idempotencyKey?: string;
  /** Sign-in itself: a 401 is an answer, not an expired session. */
  anonymous?: boolean;
}

/**
 * The console's one door to the REST API. The access token lives here, in memory only; the
 * refresh cookie (HttpOnly, path /api/v1/auth) brings the session back after a reload.
 */
export class Api {
  readonly session = signal<Session | null>(null);
  /** The session ended under the user's feet: sign-in shows over the page, which keeps its state. */
  readonly expired = signal(false);
  private token: string | null = null;
  private refreshing: Promise<boolean> | null = null;
  private waiting: (() => void)[] = [];

  /** One refresh at a time: the cookie rotates, and replaying an old one would end the session. */
  refresh(): Promise<boolean> {
    this.refreshing ??= fetch("/api/v1/auth/refresh", { method: "POST", credentials: "same-origin" })
      .then(async (r) => (r.ok ? (this.start(await r.json()), true) : false))
      .catch(() => false)
      .finally(() => (this.refreshing = null));
    return this.refreshing;
  }

  async login(email: string, password: string): Promise<void> {
    this.start(await this.send("POST", "/auth/login", { json: { email, password }, anonymous: true }));
  }

  /** Whether the install still needs its first account, and how it registers clinics. */
  setupState(): Promise<{ needed: boolean; registration: "closed" | "open" | "invite" }> {
    return this.send("GET", "/auth/setup", { anonymous: true });
  }

  /** The first run's form (with the setup link's token), or a registration with an invitation: both sign the new owner in. */
  async createClinic(form: { email: string; password: string; name: string; clinic_name: string; timezone?: string; currency?: string }, grant: { token: string } | { invitation: string }): Promise<void> {
    const path = "token" in grant ? "/auth/setup" : "/auth/register";
    this.start(await this.send("POST", path, { json: { ...form, ...grant }, anonymous: true }));
  }

  async logout(): Promise<void> {
    try {
      await this.send("POST", "/auth/logout", { anonymous: true });
    } finally {
      this.token = null;
      this.session.value = null;
    }
  }

  /** Clinic settings changed: the session shows them at once. */
  updateClinic(clinic: Clinic): void {
    if (this.session.value) this.session.value = { ...this.session.value, clinic };
  }

  get = <T>(path: string, query?: Query) => this.send<T>("GET", path, { query });
  post = <T>(path: string, json?: unknown, idempotencyKey?: string) => this.send<T>("POST", path, { json, idempotencyKey });
  patch = <T>(path: string, json: unknown) => this.send<T>("PATCH", path, { json });
  put = <T>(path: string, json: unknown) => this.send<T>("PUT", path, { json });

  /** Opens a file the API answers (a PDF, an XML) in a new tab: fetched with the session's token, shown from a blob. */
  async open(path: string, query?: Query): Promise<void> {
    const url = new URL(`/api/v1${path}`, location.origin);
    for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined && value !== null && value !== "") url.searchParams.set(name, String(value));
    let response = await fetch(url, { headers: this.token ? { authorization: `Bearer ${this.token}` } : {}, credentials: "same-origin" });
    if (response.status === 401 && (await this.refresh())) response = await fetch(url, { headers: { authorization: `Bearer ${this.token}` }, credentials: "same-origin" });
    if (!response.ok) {
      const body = await response.json().catch(() => undefined);
      throw new ApiError(response.status, body?.code ?? `HTTP_${response.status}`, body?.message ?? response.statusText, body?.details);
    }
    const blob = await response.blob();
    window.open(URL.createObjectURL(blob), "_blank", "noopener");
  }
  remove = (path: string) => this.send<void>("DELETE", path);

  async send<T>(method: string, path: string, options: SendOptions = {}): Promise<T> {
    const url = new URL(`/api/v1${path}`, location.origin);
    for (const [name, value] of Object.entries(options.query ?? {})) if (value !== undefined && value !== null && value !== "") url.searchParams.set(name, String(value));
    for (;;) {
      const headers: Record<string, string> = {};
      if (this.token) headers.authorization = `Bearer ${this.token}`;
      if (options.json !== undefined) headers["content-type"] = "application/json";
      if (options.idempotencyKey) headers["idempotency-key"] = options.idempotencyKey;
      const response = await fetch(url, { method, headers, body: options.json === undefined ? undefined : JSON.stringify(options.json), credentials: "same-origin" });
      if (response.status === 401 && !options.anonymous) {
        if (await this.refresh()) continue;
        await this.signInAgain();
        continue;
      }
      const text = await response.text();
      const body = text ? JSON.parse(text) : undefined;
      if (!response.ok) throw new ApiError(response.status, body?.code ?? `HTTP_${response.status}`, body?.message ?? response.statusText, body?.details);
      return body as T;
    }
  }

  /** Waits until the user has signed in again; the request that found the session over then goes on. */
  private signInAgain(): Promise<void> {
    this.expired.value = true;
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private start(body: { access_token: string; user: User; clinic: Clinic }): void {
    this.token = body.access_token;
    this.session.value = { user: body.user, clinic: body.clinic };
    this.expired.value = false;
    for (const resume of this.waiting.splice(0)) resume();
  }
}

/** A fresh key per attempt of a financial write: a double click replays, never pays twice. */
export const newIdempotencyKey = () => crypto.randomUUID();
