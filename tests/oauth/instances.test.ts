/**
 * Ending a connection stops its tokens at once on every instance, by the key cache's own
 * eviction notice: a second app over the same database, which has the token cached, refuses it
 * on its very next call.
 */
import { expect, test } from "bun:test";
import * as oauth from "oauth4webapi";
import { createTestApp, type TestApp } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { authorize, discover, exchange, mcpCall, registerClient } from "./helpers";

let t: TestApp;
let owner: ClinicSession;
useClinicApp((made) => ({ t, owner } = made));

test("a connection ended on one instance is refused at once on another that had it cached", async () => {
  const second = await createTestApp({ database: t.database, clock: t.clock });
  try {
    await Promise.all([t.context.mcp.keys.whenListening(), second.context.mcp.keys.whenListening()]);
    const as = await discover(t);
    const client = await registerClient(t);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await exchange(t, as, client, await authorize(t, owner, client)));
    expect((await mcpCall(second, tokens.access_token, { method: "tools/list" })).status).toBe(200);
    expect((await mcpCall(second, tokens.access_token, { method: "tools/list" })).status).toBe(200);
    const [connection] = (await owner.as<{ data: { id: string }[] }>("GET", "/api/v1/mcp/connections")).body.data;
    expect((await owner.as("DELETE", `/api/v1/mcp/connections/${connection!.id}`)).status).toBe(204);
    // In one process the two instances' listener sockets are read in no set order; a notice of
    // the second's own, echoed back on its socket, comes after the eviction on that socket (each
    // connection gets notices in commit order), so once it is back the eviction has been read.
    await second.context.mcp.keys.keyChanged(Bun.randomUUIDv7());
    const after = await mcpCall(second, tokens.access_token, { method: "tools/list" });
    expect(after.status).toBe(401);
    expect(after.headers.get("www-authenticate")).toContain('error="invalid_token"');
  } finally {
    await second.close();
  }
});
