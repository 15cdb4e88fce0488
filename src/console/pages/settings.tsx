/** @jsxImportSource preact */
import { useState } from "preact/hooks";
import type { Clinic, Page, User } from "../api";
import { DataTable, Field, useAction, useClinic, useConsole, useLoad } from "../ui";

const CLINIC_FIELDS = [
  ["name", "common.name"],
  ["legal_name", "settings.legalName"],
  ["rut", "settings.rut"],
  ["address", "settings.address"],
  ["phone", "settings.phone"],
  ["giro", "settings.giro"],
  ["economic_activity_code", "settings.acteco"],
  ["commune", "settings.commune"],
  ["sii_resolution_number", "settings.resolutionNumber"],
  ["sii_resolution_date", "settings.resolutionDate"],
  ["timezone", "settings.timezone"],
  ["currency", "settings.currency"],
] as const;

/** The owner's settings: the clinic (issuer data, time zone, currency, tax, the language of messages to tutors) and its staff. */
export function SettingsPage() {
  const { i18n } = useConsole();
  return (
    <section aria-labelledby="settings-title">
      <h1 id="settings-title">{i18n.t("settings.title")}</h1>
      <ClinicForm />
      <SiiSetup />
      <Staff />
    </section>
  );
}

function ClinicForm() {
  const { api, i18n } = useConsole();
  const clinic = useClinic();
  const [form, setForm] = useState<Record<string, string>>(() => Object.fromEntries(CLINIC_FIELDS.map(([field]) => [field, clinic[field] == null ? "" : String(clinic[field])])));
  const [taxRate, setTaxRate] = useState(clinic.tax_rate_bps);
  const [language, setLanguage] = useState<Clinic["language"]>(clinic.language ?? "es");
  const { busy, run } = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    const body: Record<string, unknown> = { tax_rate_bps: taxRate };
    if (language !== clinic.language) body.language = language;
    for (const [field] of CLINIC_FIELDS) {
      const value = form[field]!.trim();
      if (value !== (clinic[field] == null ? "" : String(clinic[field]))) body[field] = value === "" ? null : field === "sii_resolution_number" ? Number(value) : value;
    }
    return run(async () => api.updateClinic(await api.patch<Clinic>("/clinic", body)), i18n.t("common.saved"));
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="clinic-title">
      <h2 id="clinic-title">{i18n.t("settings.clinic")}</h2>
      <div class="grid">
        {CLINIC_FIELDS.map(([field, label]) => (
          <Field label={i18n.t(label)}>
            <input name={field} value={form[field]} onInput={(e) => setForm({ ...form, [field]: e.currentTarget.value })} />
          </Field>
        ))}
        <Field label={i18n.t("settings.taxRate")}>
          <input name="tax_rate_bps" type="number" min={0} max={10000} step={1} value={taxRate} onInput={(e) => setTaxRate(Math.trunc(Number(e.currentTarget.value)))} />
        </Field>
        <Field label={i18n.t("settings.language")}>
          <select name="language" value={language} onChange={(e) => setLanguage(e.currentTarget.value as Clinic["language"])}>
            {(["es", "en"] as const).map((value) => (
              <option value={value}>{i18n.label("clinicLanguage", value)}</option>
            ))}
          </select>
        </Field>
      </div>
      <button type="submit" disabled={busy}>
        {i18n.t("common.save")}
      </button>
    </form>
  );
}

function Staff() {
  const { api, i18n } = useConsole();
  const users = useLoad(() => api.get<Page<User>>("/users", { limit: 200 }), []);
  const [form, setForm] = useState({ name: "", email: "", role: "staff", password: "" });
  const { busy, run } = useAction();
  const me = api.session.value!.user.id;
  const add = (event: Event) => {
    event.preventDefault();
    return run(async () => {
      await api.post("/users", form);
      setForm({ name: "", email: "", role: "staff", password: "" });
      users.reload();
    }, i18n.t("common.saved"));
  };
  const changeRole = (user: User, role: string) => run(() => api.patch(`/users/${user.id}`, { role }), i18n.t("common.saved")).then(users.reload);
  const remove = (user: User) => run(() => api.remove(`/users/${user.id}`)).then(users.reload);
  return (
    <section class="card" aria-labelledby="staff-title">
      <h2 id="staff-title">{i18n.t("settings.staff")}</h2>
      <DataTable headings={["common.name", "common.email", "settings.role", "common.actions"]} rows={users.data?.data} row={(user) => (
        <tr>
          <td>{user.name}</td>
          <td>{user.email}</td>
          <td>
            {user.role === "owner" ? (
              i18n.label("role", "owner")
            ) : (
              <select aria-label={`${i18n.t("settings.role")} ${user.name}`} value={user.role} onChange={(e) => changeRole(user, e.currentTarget.value)}>
                <option value="vet">{i18n.label("role", "vet")}</option>
                <option value="staff">{i18n.label("role", "staff")}</option>
              </select>
            )}
          </td>
          <td>
            {user.id !== me && user.role !== "owner" && (
              <button type="button" class="danger" disabled={busy} onClick={() => remove(user)}>
                {i18n.t("settings.delete")} <span class="visually-hidden">{user.name}</span>
              </button>
            )}
          </td>
        </tr>
      )} />
      <form onSubmit={add} aria-label={i18n.t("settings.addUser")}>
        <h3>{i18n.t("settings.addUser")}</h3>
        <div class="grid">
          <Field label={i18n.t("common.name")}>
            <input name="user_name" required value={form.name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />
          </Field>
          <Field label={i18n.t("common.email")}>
            <input name="user_email" type="email" required value={form.email} onInput={(e) => setForm({ ...form, email: e.currentTarget.value })} />
          </Field>
          <Field label={i18n.t("settings.role")}>
            <select name="user_role" value={form.role} onChange={(e) => setForm({ ...form, role: e.currentTarget.value })}>
              <option value="vet">{i18n.label("role", "vet")}</option>
              <option value="staff">{i18n.label("role", "staff")}</option>
            </select>
          </Field>
          <Field label={i18n.t("settings.password")}>
            <input name="user_password" type="password" autocomplete="new-password" required value={form.password} onInput={(e) => setForm({ ...form, password: e.currentTarget.value })} />
          </Field>
        </div>
        <button type="submit" disabled={busy}>
          {i18n.t("settings.addUser")}
        </button>
      </form>
    </section>
  );
}

interface Caf {
  id: string;
  doc_type: number;
  range_from: number;
  range_to: number;
  next_folio: number;
  remaining: number;
  expires_on: string | null;
  environment: string;
  warnings: string[];
}
interface Certificate {
  subject: string;
  holder_rut: string;
  valid_to: string;
}

const base64Of = async (file: File) => {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
};

/** The certificate and the CAFs that let the clinic issue DTEs, with the folio status per type. */
function SiiSetup() {
  const { api, i18n } = useConsole();
  const clinic = useClinic();
  const cafs = useLoad(() => api.get<{ data: Caf[] }>("/billing/sii/cafs"), []);
  const certificate = useLoad(() => api.get<Certificate>("/billing/sii/certificate").catch(() => null), []);
  const [password, setPassword] = useState("");
  const { busy, run } = useAction();
  const uploadCertificate = (event: Event) => {
    event.preventDefault();
    const file = ((event.currentTarget as HTMLFormElement).elements.namedItem("pkcs12") as HTMLInputElement).files?.[0];
    if (!file) return;
    return run(async () => {
      await api.put("/billing/sii/certificate", { pkcs12: await base64Of(file), password });
      setPassword("");
      certificate.reload();
    }, i18n.t("common.saved"));
  };
  const uploadCaf = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const file = (form.elements.namedItem("caf") as HTMLInputElement).files?.[0];
    if (!file) return;
    // The SII's CAF files are ISO-8859-1.
    return run(async () => {
      await api.post("/billing/sii/cafs", { xml: new TextDecoder("latin1").decode(await file.arrayBuffer()) });
      form.reset();
      cafs.reload();
    }, i18n.t("common.saved"));
  };
  return (
    <section class="card" aria-labelledby="sii-title">
      <h2 id="sii-title">{i18n.t("sii.title")}</h2>
      <h3>{i18n.t("sii.certificate")}</h3>
      {certificate.data ? (
        <p data-testid="sii-certificate">
          {certificate.data.subject} · {i18n.t("sii.holder")} {certificate.data.holder_rut} · {i18n.t("sii.validTo")} {i18n.dateTime(certificate.data.valid_to, clinic.timezone)}
        </p>
      ) : (
        certificate.data === null && <p>{i18n.t("sii.noCertificate")}</p>
      )}
      <form class="inline" onSubmit={uploadCertificate}>
        <Field label={i18n.t("sii.pkcs12")}>
          <input name="pkcs12" type="file" accept=".pfx,.p12,application/x-pkcs12" required />
        </Field>
        <Field label={i18n.t("sii.password")}>
          <input name="password" type="password" autocomplete="off" value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </Field>
        <button type="submit" disabled={busy}>
          {i18n.t("sii.uploadCertificate")}
        </button>
      </form>
      <h3>{i18n.t("sii.cafs")}</h3>
      <DataTable
        headings={["billing.docType", "sii.range", "sii.next", "sii.remaining", "sii.expires", "sii.environment", "sii.warnings"]}
        rows={cafs.data?.data}
        testId="sii-cafs"
        row={(caf) => (
          <tr data-doc-type={caf.doc_type}>
            <td>{caf.doc_type}</td>
            <td>
              {caf.range_from}–{caf.range_to}
            </td>
            <td>{caf.next_folio > caf.range_to ? "—" : caf.next_folio}</td>
            <td>{caf.remaining}</td>
            <td>{caf.expires_on ?? "—"}</td>
            <td>{i18n.label("environment", caf.environment)}</td>
            <td class={caf.warnings.length ? "warning" : undefined}>{caf.warnings.join("; ")}</td>
          </tr>
        )}
      />
      <form class="inline" onSubmit={uploadCaf}>
        <Field label={i18n.t("sii.cafFile")}>
          <input name="caf" type="file" accept=".xml,text/xml,application/xml" required />
        </Field>
        <button type="submit" disabled={busy}>
          {i18n.t("sii.uploadCaf")}
        </button>
      </form>
    </section>
  );
}
