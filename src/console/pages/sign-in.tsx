/** @jsxImportSource preact */
import { useEffect, useState } from "preact/hooks";
import { describeError, Field, useConsole } from "../ui";

/** Email and password; shown alone at first, and over the page when a session ends. */
export function SignIn({ expired = false }: { expired?: boolean }) {
  const { api, i18n } = useConsole();
  const [email, setEmail] = useState(api.session.value?.user.email ?? "");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [noUserYet, setNoUserYet] = useState(false);
  useEffect(() => {
    if (!expired) api.setupState().then((state) => setNoUserYet(state.needed), () => {});
  }, []);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api.login(email, password);
    } catch (e) {
      setError(describeError(e, i18n).text);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="card sign-in" onSubmit={submit} aria-labelledby="sign-in-title">
      <h1 id="sign-in-title">{i18n.t("signIn.title")}</h1>
      {expired && <p role="status">{i18n.t("signIn.expired")}</p>}
      {noUserYet && (
        <p role="status" data-testid="no-user-yet">
          {i18n.t("signIn.noUserYet")}
        </p>
      )}
      <Field label={i18n.t("signIn.email")}>
        <input type="email" name="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
      </Field>
      <Field label={i18n.t("signIn.password")}>
        <input type="password" name="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
      </Field>
      {error && <p role="alert" class="error-text">{error}</p>}
      <button type="submit" disabled={busy}>
        {i18n.t("signIn.submit")}
      </button>
    </form>
  );
}
