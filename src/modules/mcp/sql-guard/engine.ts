import type { Config } from "../../../config";
import type { Database } from "../../../db/client";
import { executeGuarded, ExecutorMemory, limitsFor, type QueryLimits, type QueryResult } from "./execute";
import { GuardVerdicts, type GuardResult, type ParameterTypes } from "./guard";

/**
 * The guard and the executor as one app-owned object: its verdict cache, prepared-statement
 * memory and embedded-database limits belong to the app that built it, and the limits are
 * decided once, from the database kind.
 */
export class SqlEngine {
  private readonly verdicts = new GuardVerdicts();
  private readonly memory = new ExecutorMemory();
  readonly limits: QueryLimits;

  constructor(
    private readonly database: Database,
    config: Config,
  ) {
    this.limits = limitsFor(database, config);
  }

  guard(sql: string, parameterTypes?: ParameterTypes): GuardResult {
    return this.verdicts.check(sql, parameterTypes);
  }

  /** Runs a statement the guard accepted, as the clinic, under this app's limits. */
  run(clinicId: string, guarded: { sql: string; bindsClinic: boolean }, values: (string | null)[] = []): Promise<QueryResult> {
    return executeGuarded(this.database, this.memory, clinicId, guarded.sql, guarded.bindsClinic, this.limits, values);
  }
}
