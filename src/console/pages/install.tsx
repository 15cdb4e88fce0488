/** @jsxImportSource preact */
import { useState } from "preact/hooks";
import { DataTable, Field, useAction, useClinic, useConsole, useLoad } from "../ui";

interface InstallView {
  registration: "closed" | "open" | "invite";
  public_url: string | null;
  database: string;
  users: number;
  clinics: number;
  administrators: { id: string; email: string; name: string }[];
}
interface BackupList {
  enabled: boolean;
  reason?: string;
  backups: { file: string; trigger: string; created_at: string; size_bytes: number }[];
}
interface Invitation {
  id: string;
  note: string | null;
  expires_at: string;
  used_at: string | null;
}

/** The whole install, for its administrators: registration, administrators, backups, invitations. */
export function InstallPage() {
  const { api, i18n } = useConsole();
  const clinic = useClinic();
  const install = useLoad(() => api.get<InstallView>("/admin/install"), []);
  const backups = useLoad(() => api.get<BackupList>("/admin/backups"), []);
  const invitations = useLoad(() => api.get<Invitation[]>("/admin/invitations"), []);
  const { busy, run } = useAction();
  const [note, setNote] = useState("");
  const [link, setLink] = useState<string | null>(null);
  const data = install.data;
  return (
    <section aria-labelledby="install-title">
      <h1 id="install-title">{i18n.t("install.title")}</h1>
      {data && (
        <div class="card">
          <h2>{i18n.t("install.registration")}</h2>
          <p data-testid="registration">{i18n.t(`install.registration.${data.registration}`)}</p>
          <h2>{i18n.t("install.counts")}</h2>
          <p>
            {data.clinics} · {data.users}
          </p>
          <h2>{i18n.t("install.administrators")}</h2>
          <ul>
            {data.administrators.map((admin) => (
              <li>
                {admin.name} ({admin.email})
              </li>
            ))}
          </ul>
        </div>
      )}
      <div class="card">
        <h2>{i18n.t("install.backups")}</h2>
        {backups.data && !backups.data.enabled ? (
          <p>{i18n.t("install.backupsOff")}</p>
        ) : (
          <>
            <button type="button" disabled={busy} onClick={() => run(() => api.post("/admin/backups").then(backups.reload), i18n.t("install.backupTaken"))}>
              {i18n.t("install.backupNow")}
            </button>
            <DataTable
              headings={["install.file", "install.trigger", "common.date"]}
              rows={backups.data?.backups}
              row={(backup) => (
                <tr>
                  <td>{backup.file}</td>
                  <td>{backup.trigger}</td>
                  <td>{i18n.dateTime(backup.created_at, clinic.timezone)}</td>
                </tr>
              )}
            />
          </>
        )}
      </div>
      <div class="card">
        <h2>{i18n.t("install.invitations")}</h2>
        <form
          onSubmit={(event) => {
            event.preventDefault();
            void run(async () => {
              const created = await api.post<{ url: string }>("/admin/invitations", { note: note || undefined });
              setLink(created.url);
              setNote("");
              invitations.reload();
            });
          }}
        >
          <Field label={i18n.t("install.inviteNote")}>
            <input maxLength={200} value={note} onInput={(e) => setNote(e.currentTarget.value)} />
          </Field>
          <button type="submit" disabled={busy}>
            {i18n.t("install.invite")}
          </button>
        </form>
        {link && (
          <p role="status">
            {i18n.t("install.inviteLink")} <code data-testid="invitation-link">{link}</code>
          </p>
        )}
        <DataTable
          headings={["install.inviteNote", "install.expires", "install.used"]}
          rows={invitations.data}
          row={(invitation) => (
            <tr>
              <td>{invitation.note ?? "—"}</td>
              <td>{i18n.dateTime(invitation.expires_at, clinic.timezone)}</td>
              <td>{i18n.dateTime(invitation.used_at, clinic.timezone)}</td>
            </tr>
          )}
        />
      </div>
    </section>
  );
}
