/** @jsxImportSource preact */
import { signal } from "@preact/signals";
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { Api } from "./api";
import { I18n, type Language } from "./i18n";
import { BillingPage, InvoicePage } from "./pages/billing";
import { BookingPage, ManageBookingPage } from "./pages/booking";
import { DuePage, NoteRedirect, VisitPage } from "./pages/clinical";
import { ConsentPage } from "./pages/consent";
import { McpPage } from "./pages/mcp";
import { ActivityPage, RecordRedirect } from "./pages/activity";
import { WebhooksPage } from "./pages/webhooks";
import { RemindersPage } from "./pages/reminders";
import { SettingsPage } from "./pages/settings";
import { SignIn } from "./pages/sign-in";
import { SetupPage } from "./pages/setup";
import { InstallPage } from "./pages/install";
import { TodayPage } from "./pages/today";
import { CalendarPage } from "./pages/calendar";
import { PatientPage, TutorPage, TutorsPage } from "./pages/tutors";
import { ConsoleContext, NoticeLine, OwnerOnly, useConsole, type Console } from "./ui";

/** Hash routes (`#/tutors/…`), so a reload never leaves `/` and the server serves one page. */
function useRoute(): string[] {
  const read = () => location.hash.replace(/^#\/?/, "").split("?")[0]!.split("/").filter(Boolean);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const changed = () => setRoute(read());
    addEventListener("hashchange", changed);
    return () => removeEventListener("hashchange", changed);
  }, []);
  return route;
}

function Screen({ route }: { route: string[] }) {
  const { api, i18n } = useConsole();
  const [section, id, child] = route;
  switch (section) {
    case "tutors":
      return id ? <TutorPage id={id} /> : <TutorsPage />;
    case "patients":
      return <PatientPage id={id!} />;
    case "visits":
      return <VisitPage id={id!} />;
    case "notes":
      return <NoteRedirect id={id!} />;
    case "records":
      return <RecordRedirect type={id!} id={child!} />;
    case "due":
      return <DuePage />;
    case "billing":
      return <BillingPage />;
    case "invoices":
      return <InvoicePage id={id!} />;
    case "mcp":
      return (
        <OwnerOnly>
          <McpPage />
        </OwnerOnly>
      );
    case "oauth":
      return (
        <OwnerOnly>
          <ConsentPage />
        </OwnerOnly>
      );
    case "activity":
      return (
        <OwnerOnly>
          <ActivityPage />
        </OwnerOnly>
      );
    case "webhooks":
      return (
        <OwnerOnly>
          <WebhooksPage />
        </OwnerOnly>
      );
    case "reminders":
      return <RemindersPage />;
    case "calendar":
      return <CalendarPage />;
    case "settings":
      return (
        <OwnerOnly>
          <SettingsPage />
        </OwnerOnly>
      );
    case "install":
      return api.session.value?.user.is_admin ? <InstallPage /> : <p role="alert">{i18n.t("common.notAllowed")}</p>;
    default:
      return <TodayPage />;
  }
}

function Shell({ console: c }: { console: Console }) {
  const { api, i18n } = c;
  const route = useRoute();
  const session = api.session.value!;
  const owner = session.user.role === "owner";
  const links: [string, string][] = [
    ["today", i18n.t("nav.today")],
    ["calendar", i18n.t("nav.calendar")],
    ["tutors", i18n.t("nav.tutors")],
    ["due", i18n.t("nav.due")],
    ["billing", i18n.t("nav.billing")],
    ["reminders", i18n.t("nav.reminders")],
    ...(owner ? ([["activity", i18n.t("nav.activity")], ["webhooks", i18n.t("nav.webhooks")], ["mcp", i18n.t("nav.mcp")], ["settings", i18n.t("nav.settings")]] as [string, string][]) : []),
    ...(session.user.is_admin ? ([["install", i18n.t("nav.install")]] as [string, string][]) : []),
  ];
  const current = route[0] === "patients" ? "tutors" : route[0] === "visits" || route[0] === "notes" ? "today" : route[0] === "invoices" ? "billing" : (route[0] ?? "today");
  return (
    <>
      <header class="top">
        <strong class="brand">{session.clinic.name}</strong>
        <nav aria-label={i18n.t("app.title")}>
          {links.map(([href, label]) => (
            <a href={`#/${href}`} aria-current={current === href ? "page" : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <div class="me">
          <label>
            <span class="visually-hidden">{i18n.t("nav.language")}</span>
            <select value={i18n.language.value} onChange={(e) => i18n.choose(e.currentTarget.value as Language)}>
              <option value="es">Español</option>
              <option value="en">English</option>
            </select>
          </label>
          <span>{session.user.name}</span>
          <button type="button" class="secondary" onClick={() => api.logout().finally(() => (location.hash = ""))}>
            {i18n.t("nav.signOut")}
          </button>
        </div>
      </header>
      <main>
        <NoticeLine />
        <Screen route={route} />
      </main>
      {api.expired.value && (
        <div class="overlay">
          <SignIn expired />
        </div>
      )}
    </>
  );
}

function Root({ console: c }: { console: Console }) {
  const [restoring, setRestoring] = useState(true);
  useEffect(() => {
    c.api.refresh().finally(() => setRestoring(false));
  }, []);
  if (restoring) return <main aria-busy="true">{c.i18n.t("common.loading")}</main>;
  // The setup and invitation links are pages of their own until they have signed someone in.
  const newClinic = location.pathname === "/setup" ? "setup" : location.pathname === "/join" ? "join" : null;
  if (newClinic && !c.api.session.value) {
    return (
      <ConsoleContext.Provider value={c}>
        <main class="center">
          <SetupPage mode={newClinic} />
        </main>
      </ConsoleContext.Provider>
    );
  }
  return <ConsoleContext.Provider value={c}>{c.api.session.value ? <Shell console={c} /> : <main class="center"><SignIn /></main>}</ConsoleContext.Provider>;
}

const i18n = new I18n();
document.documentElement.lang = i18n.locale;
// Inside another site's frame the console renders nothing, so no button of it (the consent page's
// Approve above all) can be clickjacked; a frame that forbids scripts gets an empty page anyway.
// A clinic's public booking page (/book/{slug}, /book/{slug}/manage#<token>) is for tutors: Spanish, no session.
const booking = /^\/book\/([^/]+)(\/manage)?\/?$/.exec(location.pathname);
if (booking) document.documentElement.lang = "es-CL";
if (window.top === window.self) {
  render(
    booking ? <main>{booking[2] ? <ManageBookingPage /> : <BookingPage slug={decodeURIComponent(booking[1]!)} />}</main> : <Root console={{ api: new Api(), i18n, notice: signal(null) }} />,
    document.getElementById("app")!,
  );
}
