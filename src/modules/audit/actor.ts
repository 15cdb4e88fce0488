import type { ChangeActor, ChangeContexts } from "../../db/change-context";
import type { KeyPrincipal } from "../mcp-keys/directory";

/**
 * Who an MCP caller is in the event log: an API key (`api_key`, its id and name) or an approved
 * OAuth connection (`connection`, its id and the client's name). MCP tools make no changes today;
 * a tool that writes calls `actAs(contexts, principalActor(principal, name))` before it does, so
 * its changes are not recorded as `system`.
 */
export function principalActor(principal: Pick<KeyPrincipal, "id" | "kind">, name: string | null): ChangeActor {
  return { type: principal.kind === "key" ? "api_key" : "connection", id: principal.id, name };
}

/** Names the actor of the current request's (or job's) changes; outside a change context, starts one. */
export function actAs(contexts: ChangeContexts, actor: ChangeActor): void {
  const current = contexts.current();
  if (current) current.actor = actor;
  else contexts.begin({ actor });
}
