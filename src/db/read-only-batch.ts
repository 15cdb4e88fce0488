import { type PGlite, parse as pgliteResults, protocol } from "@electric-sql/pglite";
import type postgres from "postgres";
import { LruMap } from "../lib/lru";

/** One statement of a batch: text parameters, bound through the extended protocol. */
export interface RawStatement {
  text: string;
  params: (string | null)[];
  /**
   * Worth keeping prepared on the connection (constant text, or a statement seen before):
   * planning is most of a small query's cost. Each prepared statement holds about 50 KiB in
   * its server backend, so the drivers below bound how many they keep.
   */
  prepare?: boolean;
}

export interface RawResult {
  rows: unknown[][];
  fields: { name: string; typeId: number }[];
}

export type ReadOnlyBatch = (statements: RawStatement[]) => Promise<RawResult[]>;

/** At most this many distinct prepared statements per connection (twice that on PostgreSQL). */
export const PREPARED_STATEMENT_LIMIT = 100;

/**
 * PGlite: BEGIN READ ONLY, the statements and COMMIT go as one protocol message (parse, bind,
 * describe, execute each; one sync): one call into PostgreSQL instead of three (PGlite's own
 * `transaction` sends BEGIN and COMMIT as calls of their own, each costing as much as a small
 * query). An error makes the server skip to the sync with the transaction aborted; a ROLLBACK
 * then ends it. The client's locks are held throughout, so no other query can run between.
 * Prepared statements are named by us, kept least-recently-used, and closed when pushed out.
 * The answer is parsed as PostgreSQL writes it (`execProtocolStream`, as PGlite's own queries
 * are): `execProtocol` also copies every byte of it twice more, for a raw copy nothing here reads.
 */
export function pgliteReadOnlyBatch(client: PGlite): ReadOnlyBatch {
  const { serialize } = protocol;
  const prepared = new LruMap<string, string>(PREPARED_STATEMENT_LIMIT);
  let toClose: string[] = [];
  let nextName = 1;
  const rollback = serialize.query("ROLLBACK");
  // The messages that never change are serialized once: PGlite's serializer allocates a buffer
  // and copies it for every message, which cost more than a tenth of a small query's time.
  const describeAndExecute = concatBytes([serialize.describe({ type: "P" }), serialize.execute({})]);
  const unnamed = (text: string) => concatBytes([serialize.parse({ name: "", text }), serialize.bind({ statement: "", values: [] }), describeAndExecute]);
  const begin = unnamed("BEGIN READ ONLY");
  const commit = unnamed("COMMIT");
  const sync = serialize.sync();
  const run = async (statements: RawStatement[]): Promise<RawResult[]> => {
    // This batch's statements become the most recent first, so making room never pushes them out.
    for (const statement of statements) if (statement.prepare) prepared.get(statement.text);
    const closing = toClose;
    toClose = [];
    const parsedHere: [string, string][] = [];
    const parts: Uint8Array[] = [begin];
    for (const statement of statements) {
      let name = statement.prepare ? prepared.get(statement.text) : "";
      const parse = name === "" || name === undefined; // unnamed, or new: named once, here
      if (name === undefined) {
        name = `vet_batch_${nextName++}`;
        parsedHere.push([statement.text, name]);
        const pushedOut = prepared.set(statement.text, name);
        if (pushedOut) closing.push(pushedOut[1]);
      }
      if (parse) parts.push(serialize.parse({ name, text: statement.text }));
      parts.push(serialize.bind({ statement: name, values: statement.params }), describeAndExecute);
    }
    parts.push(commit);
    // Closes go first: nothing before them can fail and skip them (closing a missing name is no error).
    const message = concatBytes([...closing.map((name) => serialize.close({ type: "S", name })), ...parts, sync]);
    let messages;
    try {
      messages = await client.execProtocolStream(message, { syncToFs: false });
    } catch (error) {
      await client.execProtocol(rollback, { syncToFs: false, throwOnError: false });
      // How far a failed batch got is unknown: forget its new names, and close them (and the closes) next time.
      for (const [text] of parsedHere) prepared.delete(text);
      toClose.push(...closing, ...parsedHere.map(([, name]) => name));
      throw error;
    }
    return pgliteResults
      .parseResults(messages, client.parsers, { rowMode: "array" })
      .slice(1, 1 + statements.length)
      .map((result) => ({ rows: result.rows as unknown[][], fields: result.fields.map((f) => ({ name: f.name, typeId: f.dataTypeID })) }));
  };
  return (statements) => client._runExclusiveTransaction(() => client._runExclusiveQuery(() => run(statements)));
}

function concatBytes(parts: Uint8Array[]): Uint8Array {
  const bytes = new Uint8Array(parts.reduce((size, part) => size + part.length, 0));
  parts.reduce((offset, part) => (bytes.set(part, offset), offset + part.length), 0);
  return bytes;
}

/** postgres.js reads `simple` at run time; its type declarations leave it out. */
const extendedProtocol = (prepare: boolean) => ({ prepare, simple: false }) as postgres.UnsafeQueryOptions;

/**
 * PostgreSQL: BEGIN READ ONLY, the statements and COMMIT are all written to one reserved
 * connection before any reply is read: one round trip. A failing statement aborts the
 * transaction, so those after it fail too and COMMIT rolls back. Every statement goes through
 * the extended protocol, even without parameters (postgres.js would otherwise send those as a
 * simple query, where one string can carry several statements, COMMIT and RESET ROLE among them).
 *
 * postgres.js keeps a connection's prepared statements until the connection ends, so at most
 * PREPARED_STATEMENT_LIMIT distinct statements are prepared per generation, and a generation
 * lasts as long as a pooled connection may (`maxLifetimeSeconds`): no connection outlives two.
 * Behind a transaction-mode pooler (`mayKeepStatements` false) every statement is unnamed: the
 * batch is one transaction, which the pooler keeps on one server connection from BEGIN to COMMIT.
 */
export function postgresReadOnlyBatch(client: postgres.Sql, maxLifetimeSeconds: number, mayKeepStatements: () => boolean = () => true, now = () => performance.now()): ReadOnlyBatch {
  let generation = new Set<string>();
  let generationStartedAt = now();
  const mayPrepare = (statement: RawStatement): boolean => {
    if (!statement.prepare || !mayKeepStatements()) return false;
    if (now() - generationStartedAt > maxLifetimeSeconds * 1000) {
      generation = new Set();
      generationStartedAt = now();
    }
    if (generation.has(statement.text)) return true;
    if (generation.size >= PREPARED_STATEMENT_LIMIT) return false;
    generation.add(statement.text);
    return true;
  };
  return async (statements) => {
    const connection = await client.reserve();
    try {
      const replies = await Promise.allSettled([
        connection.unsafe("begin read only"),
        ...statements.map((statement) => connection.unsafe(statement.text, statement.params, extendedProtocol(mayPrepare(statement))).values()),
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
  };
}
