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

/** Sets the transaction-local settings the audit trigger reads (never session settings: the service may run behind a transaction pooler). */
const SETTINGS_SQL =
  "select set_config('app.actor_type', $1, true), set_config('app.actor_id', $2, true), set_config('app.actor_name', $3, true), set_config('app.request_id', $4, true), set_config('app.now', $5, true)";

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

  /** The settings statement for the current context, or undefined outside one. */
  settings(): [string, unknown[]] | undefined {
    const context = this.storage.getStore();
    if (!context) return undefined;
    const actor = context.actor;
    return [SETTINGS_SQL, [actor?.type ?? "", actor?.id ?? "", actor?.name ?? "", context.requestId ?? "", context.now ? context.now().toISOString() : ""]];
  }

  isWrite(statement: string): boolean {
    return WRITE_STATEMENT.test(statement);
  }
}
