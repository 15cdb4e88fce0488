import { AsyncLocalStorage } from "node:async_hooks";
import type { ActorType } from "./schema/events";

/** Who makes a change, as the event log records it. */
export interface ChangeActor {
  type: ActorType;
  id: string | null;
  name: string | null;
}

/** What the audit trigger needs to know about the changes of one request or job. */
export interface ChangeContext {
  actor?: ChangeActor;
  requestId?: string;
  /** The app's clock, so events carry the same time as the rows they describe. */
  now?: () => Date;
}

/**
 * The statement that gives the audit trigger the change context: one transaction-local setting,
 * `app.context`, holding a JSON object (one statement to send, one value for the trigger to parse).
 * Never a session setting: the service may run behind a transaction pooler. The value is written
 * into the statement, which then takes no parameters: PGlite runs it as one simple-protocol
 * message, and postgres.js sends it unnamed without first asking the server for parameter types.
 */
export function contextSettingStatement(context: string): string {
  // An escape string literal reads the same whatever standard_conforming_strings says; JSON text holds no NUL.
  return `select set_config('app.context', E'${context.replaceAll("\\", "\\\\").replaceAll("'", "''")}', true)`;
}

/** Statements that can change rows; reads outside a transaction need no settings. */
const WRITE_STATEMENT = /^\s*(insert|update|delete|with|merge)\b/i;

/**
 * The change context of the code running now (a request, a scheduled job), carried across its
 * awaits, and the one place the database layer reads it from to tag every transaction.
 */
export class ChangeContexts {
  private readonly storage = new AsyncLocalStorage<ChangeContext>();

  /**
   * Gives the rest of the current synchronous call and everything it awaits a fresh context
   * (a request's first hook, which Elysia runs before the handler's awaits).
   */
  begin(context: ChangeContext = {}): ChangeContext {
    this.storage.enterWith(context);
    return context;
  }

  run<T>(context: ChangeContext, work: () => T): T {
    return this.storage.run(context, work);
  }

  current(): ChangeContext | undefined {
    return this.storage.getStore();
  }

  /** The current context as the `app.context` setting's JSON, or undefined outside one. */
  settings(): string | undefined {
    const context = this.storage.getStore();
    if (!context) return undefined;
    const actor = context.actor;
    // PostgreSQL's text (and so jsonb's) holds neither NUL nor half a surrogate pair: a name
    // carrying one would fail the change it describes.
    const text = (value: string | null | undefined) => value?.toWellFormed().replaceAll("\0", "") ?? undefined;
    return JSON.stringify({
      actor_type: actor?.type,
      actor_id: text(actor?.id),
      actor_name: text(actor?.name),
      request_id: text(context.requestId),
      now: context.now?.().toISOString(),
    });
  }

  isWrite(statement: string): boolean {
    return WRITE_STATEMENT.test(statement);
  }
}
