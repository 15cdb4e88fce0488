import { Elysia } from "elysia";
import type { Config } from "./config";
import { createLifecycle, type AppContext, type AppDeps } from "./context";
import { authGuard } from "./http/auth";
import { consoleModule } from "./http/console";
import { corsPolicy } from "./http/cors";
import { ApiDocument, apiDocs } from "./http/docs";
import { idempotency } from "./http/idempotency";
import { errorHandler, jsonBody } from "./http/errors";
import { DeclaredInputs, inputRules } from "./http/input-rules";
import { Paginator } from "./http/pagination";
import { RestRateLimits } from "./http/rate-limit";
import { requestContext, RequestStates } from "./http/request-context";
import { changeContext } from "./http/change-context";
import { auditModule } from "./modules/audit";
import { webhooksModule } from "./modules/webhooks";
import { createWebhookRuntime } from "./modules/webhooks/runtime";
import { createSecretBox } from "./lib/secrets";
import { hmacSha256 } from "./lib/crypto";
import { authModule } from "./modules/auth";
import { installModule } from "./modules/auth/install";
import { SetupLink } from "./modules/auth/setup-link";
import { usersModule } from "./modules/users";
import { clinicModule } from "./modules/clinic";
import { healthModule } from "./modules/health";
import { mcpModule } from "./modules/mcp";
import { mcpConnectionsModule, OAUTH_FORM_PATHS, oauthModule } from "./modules/oauth";
import { formBody } from "./http/form-body";
import { McpRuntime } from "./modules/mcp/runtime";
import { clinicContextTool } from "./modules/mcp/tools/clinic-context";
import { describeSchemaTool } from "./modules/mcp/tools/describe-schema";
import { queryDatabaseTool } from "./modules/mcp/tools/query-database";
import { findAvailableSlotsTool } from "./modules/mcp/tools/find-available-slots";
import { mcpKeysModule } from "./modules/mcp-keys";
import { mcpReportsModule } from "./modules/mcp-reports";
import { backupsModule } from "./modules/backups";
import { BackupScheduler, BackupStore } from "./backup/store";
import { PlannerStatistics } from "./db/planner-statistics";
import { alertsModule } from "./modules/alerts";
import { billingModule } from "./modules/billing";
import { operationsModule } from "./modules/operations";
import { patientsModule } from "./modules/patients";
import { tutorsModule } from "./modules/tutors";
import { consentsModule } from "./modules/consents";
import { tutorRightsModule } from "./modules/tutor-rights";
import { remindersModule } from "./modules/reminders";
import { createReminderRuntime, LINK_PATHS, whatsappWebhookBody } from "./modules/reminders/runtime";
import { visitsModule } from "./modules/visits";
import { appointmentTypesModule } from "./modules/appointment-types";
import { roomsModule } from "./modules/rooms";
import { availabilityModule } from "./modules/availability";
import { bookingModule } from "./modules/booking";
import { schedulesModule } from "./modules/schedules";
import { calendarFeedModule } from "./modules/calendar-feed";
import { notesModule } from "./modules/notes";
import { vitalsModule } from "./modules/vitals";
import { vaccinationsModule } from "./modules/vaccinations";
import { prescriptionsModule } from "./modules/prescriptions";
import { timelineModule } from "./modules/timeline";

export interface BuiltApp {
  app: ReturnType<typeof buildRoutes>;
  context: AppContext;
}

function buildRoutes(context: AppContext) {
  return new Elysia({ name: "vet-clinic-service" })
    .use(requestContext(context.logger, context.requests))
    .use(changeContext(context.database.changeContexts, context.clock, context.requests))
    .use(corsPolicy(context.config))
    .use(errorHandler(context.logger, context.requests))
    .use(formBody([...OAUTH_FORM_PATHS, ...LINK_PATHS], context.config.maxBodyBytes))
    .use(whatsappWebhookBody(context.reminders.rawBodies, context.config.maxBodyBytes))
    .use(jsonBody(context.config.maxBodyBytes))
    .use(inputRules(context.declaredInputs))
    .use(apiDocs(context.apiDocument))
    .use(consoleModule())
    .use(healthModule(context))
    .use(mcpModule(context))
    .use(oauthModule(context))
    .group("/api/v1", (api) =>
      api
        .use(authModule(context))
        .use(usersModule(context))
        .use(clinicModule(context))
        .use(tutorsModule(context))
        .use(consentsModule(context))
        .use(tutorRightsModule(context))
        .use(patientsModule(context))
        .use(visitsModule(context))
        .use(appointmentTypesModule(context))
        .use(roomsModule(context))
        .use(availabilityModule(context))
        .use(bookingModule(context))
        .use(schedulesModule(context))
        .use(calendarFeedModule(context))
        .use(notesModule(context))
        .use(vitalsModule(context))
        .use(vaccinationsModule(context))
        .use(prescriptionsModule(context))
        .use(timelineModule(context))
        .use(alertsModule(context))
        .use(operationsModule(context))
        .use(billingModule(context))
        .use(mcpKeysModule(context))
        .use(mcpConnectionsModule(context))
        .use(mcpReportsModule(context))
        .use(backupsModule(context))
        .use(installModule(context))
        .use(auditModule(context))
        .use(webhooksModule(context))
        .use(remindersModule(context, context.reminders)),
    );
}

/** Builds the whole app from its dependencies; no listener, so tests call `app.handle`. */
export function createApp(deps: AppDeps): BuiltApp {
  const services = { db: deps.database.db, clock: deps.clock };
  const rateLimits = new RestRateLimits(deps.config.limits, deps.clock);
  const requests = new RequestStates();
  const mcp = new McpRuntime({ ...deps, tools: [clinicContextTool(), queryDatabaseTool(), describeSchemaTool(), findAvailableSlotsTool()] });
  const secrets = createSecretBox(deps.config.secretsKey);
  const context: AppContext = {
    mcp,
    ...deps,
    services,
    rateLimits,
    requests,
    // Cursors are signed with a key derived from the JWT secret, never the secret itself.
    paginator: new Paginator(hmacSha256(deps.config.jwtSecret, "cursor-signing")),
    lifecycle: createLifecycle(),
    auth: authGuard({ db: services.db, clock: deps.clock, config: deps.config, rateLimits, requests, changeContexts: deps.database.changeContexts }),
    idempotency: idempotency(services),
    declaredInputs: new DeclaredInputs(),
    apiDocument: new ApiDocument(),
    statistics: new PlannerStatistics(deps.database, deps.logger),
    secrets,
    setup: new SetupLink(deps.clock),
    webhooks: createWebhookRuntime({ ...deps, secrets }),
    reminders: createReminderRuntime(deps),
    backups: deps.database.kind === "postgres" ? null : new BackupScheduler(new BackupStore(deps.database, deps.clock, deps.config.backup, deps.logger), deps.clock, deps.logger),
  };
  context.backups?.start();
  context.lifecycle.onBeforeClose(() => context.webhooks.stop());
  context.lifecycle.onBeforeClose(() => context.reminders.stop());
  context.lifecycle.onBeforeClose(async () => context.backups?.stop());
  context.lifecycle.onBeforeClose(() => mcp.stop());
  context.lifecycle.onBeforeClose(() => context.statistics.stop());
  const app = buildRoutes(context);
  context.declaredInputs.learn(app);
  context.apiDocument.learn(app);
  return { app, context };
}

export type App = BuiltApp["app"];

/**
 * The listener's options. Bun's own body limit answers a bare 413 before the app runs, so it is
 * set far above MAX_BODY_BYTES and the app's body reader enforces the real limit (in the error
 * envelope, with X-Request-ID), stopping as soon as a body passes it.
 */
export function listenerOptions(config: Config) {
  // reusePort off: a second process on the same port must fail to start, not share the port
  // (two processes with different in-memory state would answer the same clients).
  return { port: config.port, hostname: config.host, reusePort: false, development: false, maxRequestBodySize: Math.max(config.maxBodyBytes * 64, 64 * 1024 * 1024) };
}
