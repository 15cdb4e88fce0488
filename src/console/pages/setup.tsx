/** @jsxImportSource preact */
import { useState } from "preact/hooks";
import { ApiError } from "../api";
import { describeError, Field, useConsole } from "../ui";

/**
 * A new clinic and its owner: the first run's page (`/setup#<token>`, the link the server prints
 * while the install has no user) or an invitation's (`/join#<token>`). The token rides in the
 * fragment, so it never reaches a server log or a Referer.
 */
export function SetupPage({ mode }: { mode: "setup" | "join" }) {
  const { api, i18n } = useConsole();
  const token = location.hash.replace(/^#/, "");
  const [form, setForm] = useState({ clinic_name: "", timezone: "America/Santiago", currency: "CLP", name: "", email: "", password: "" });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const field = (name: keyof typeof form) => ({ value: form[name], onInput: (e: { currentTarget: HTMLInputElement | HTMLSelectElement }) => setForm({ ...form, [name]: e.currentTarget.value }) });
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api.createClinic(form, mode === "setup" ? { token } : { invitation: token });
      // Signed in: the console proper, without the spent token in the address bar or history.
      history.replaceState(null, "", "/#/today");
    } catch (e) {
      // A refused link is about the link, not about a role.
      setError(e instanceof ApiError && e.code === "FORBIDDEN" && mode === "setup" ? i18n.t("setup.linkInvalid") : describeError(e, i18n).text);
    } finally {
      setBusy(false);
    }
  };
  const title = i18n.t(mode === "setup" ? "setup.title" : "setup.joinTitle");
  if (!token) {
    return (
      <section class="card sign-in" aria-labelledby="setup-title">
        <h1 id="setup-title">{title}</h1>
        <p role="alert">{i18n.t("setup.noToken")}</p>
        <a href="/">{i18n.t("setup.signInInstead")}</a>
      </section>
    );
  }
  return (
    <form class="card sign-in" onSubmit={submit} aria-labelledby="setup-title">
      <h1 id="setup-title">{title}</h1>
      <p>{i18n.t(mode === "setup" ? "setup.intro" : "setup.joinIntro")}</p>
      <Field label={i18n.t("setup.clinicName")}>
        <input name="clinic_name" required maxLength={200} {...field("clinic_name")} />
      </Field>
      <Field label={i18n.t("setup.timezone")}>
        <input name="timezone" required maxLength={64} {...field("timezone")} />
      </Field>
      <Field label={i18n.t("setup.currency")}>
        <select name="currency" {...field("currency")}>
          {["CLP", "USD", "EUR", "ARS", "PEN", "COP", "MXN", "BRL"].map((code) => (
            <option value={code}>{code}</option>
          ))}
        </select>
      </Field>
      <Field label={i18n.t("setup.ownerName")}>
        <input name="name" required maxLength={200} autocomplete="name" {...field("name")} />
      </Field>
      <Field label={i18n.t("signIn.email")}>
        <input type="email" name="email" required autocomplete="username" {...field("email")} />
      </Field>
      <Field label={`${i18n.t("signIn.password")} (${i18n.t("setup.passwordHint")})`}>
        <input type="password" name="password" required minLength={10} maxLength={256} autocomplete="new-password" {...field("password")} />
      </Field>
      {error && <p role="alert" class="error-text">{error}</p>}
      <button type="submit" disabled={busy}>
        {i18n.t("setup.submit")}
      </button>
    </form>
  );
}
