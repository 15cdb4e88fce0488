import { type PGlite, parse as pgliteResults, protocol } from "@electric-sql/pglite";
import type postgres from "postgres";

/** One statement of a batch: text parameters, bound through the extended protocol. */
export interface RawStatement {
  text: string;
  params: string[];
  /** Constant text the driver may keep prepared on its connection (never a caller's SQL). */
  fixedText?: boolean;
}

export interface RawResult {
  rows: unknown[][];
  fields: { name: string; typeId: number }[];
}

/**
 * Statements of one READ ONLY transaction, sent to PGlite as one protocol message: parse, bind,
 * describe and execute each, then a single sync. An error makes the server skip to the sync,
 * and `transaction` rolls back. One call instead of six per statement, which is most of the
 * embedded executor's cost.
 */
export function pgliteReadOnlyBatch(client: PGlite, statements: RawStatement[]): Promise<RawResult[]> {
  const { serialize } = protocol;
  return client.transaction(async () => {
    const parts = [{ text: "SET TRANSACTION READ ONLY", params: [] }, ...statements].flatMap((statement) => [
      serialize.parse({ text: statement.text }),
      serialize.bind({ values: statement.params }),
      serialize.describe({ type: "P" }),
      serialize.execute({}),
    ]);
    parts.push(serialize.sync());
    const message = new Uint8Array(parts.reduce((size, part) => size + part.length, 0));
    parts.reduce((offset, part) => (message.set(part, offset), offset + part.length), 0);
    const { messages } = await client.execProtocol(message, { syncToFs: false });
    return pgliteResults
      .parseResults(messages, client.parsers, { rowMode: "array" })
      .slice(1)
      .map((result) => ({ rows: result.rows as unknown[][], fields: result.fields.map((f) => ({ name: f.name, typeId: f.dataTypeID })) }));
  });
}

/**
 * The same on a PostgreSQL server, in one round trip: BEGIN READ ONLY, the statements and
 * COMMIT are all written to one reserved connection before any reply is read. A failing
 * statement aborts the transaction, so those after it fail too and COMMIT rolls back.
 */
export async function postgresReadOnlyBatch(client: postgres.Sql, statements: RawStatement[]): Promise<RawResult[]> {
  const connection = await client.reserve();
  try {
    const replies = await Promise.allSettled([
      connection.unsafe("begin read only"),
      ...statements.map((statement) => connection.unsafe(statement.text, statement.params, { prepare: statement.fixedText === true }).values()),
      connection.unsafe("commit"),
    ]);
    const failed = replies.find((reply) => reply.status === "rejected");
    if (failed) throw failed.reason;
    return replies.slice(1, -1).map((reply) => {
      const rows = (reply as PromiseFulfilledResult<postgres.RowList<unknown[][]>>).value;
      return { rows: rows as unknown as unknown[][], fields: (rows.columns ?? []).map((c) => ({ name: c.name, typeId: c.type })) };
    });
  } finally {
    connection.release();
  }
}
