import consolePage from "../console/index.html";

/**
 * The clinic console at `/`: one HTML page whose scripts and styles Bun bundles (at start-up, or
 * at build time inside the single binary) and serves beside the API as a native route of the
 * listener, so it never passes through the app's hooks. It calls only the public REST API; its
 * screens are hash routes, so `/` is the only page the server needs to know.
 */
// A method map, so the CORS preflight route Elysia registers at `/` merges beside it. Bun serves
// an HTML bundle per method; its route types only list responses and handlers.
export const consoleRoutes = { "/": { GET: consolePage as unknown as Response } };
