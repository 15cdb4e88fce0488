import { Elysia, type AnyElysia } from "elysia";
// Imported as files so that `bun build --compile` embeds them: /docs works with no internet.
import swaggerBundle from "../../node_modules/swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import swaggerCss from "../../node_modules/swagger-ui-dist/swagger-ui.css" with { type: "file" };
import { buildOpenApiDocument } from "./openapi-document";

const ASSETS = "/docs/assets";

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>vet-clinic-service API</title>
<link rel="stylesheet" href="${ASSETS}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${ASSETS}/swagger-ui-bundle.js"></script>
<script src="${ASSETS}/start.js"></script>
</body>
</html>`;

/** Starts Swagger UI; a token pasted into it lives only as long as the page (never in localStorage). */
const START = `window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui", persistAuthorization: false, deepLinking: true });\n`;

/**
 * The page runs only its own scripts (no inline ones), may not be framed (clickjacking a
 * pasted token), and connects only to this service. Swagger UI sets inline styles and draws its
 * icons from data: URLs.
 */
const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
};

/** Holds the document, built once from the finished app (its routes exist only then). */
export class ApiDocument {
  private document: Record<string, unknown> | undefined;

  learn(app: AnyElysia): void {
    this.document = buildOpenApiDocument(app);
  }

  get json(): Record<string, unknown> {
    if (!this.document) throw new Error("the API document is built when the app is");
    return this.document;
  }
}

/** `/openapi.json` generated from the route schemas, and a Swagger UI page at `/docs` served locally. */
export const apiDocs = (document: ApiDocument) =>
  new Elysia({ name: "api-docs" })
    .get(`${ASSETS}/swagger-ui-bundle.js`, () => new Response(Bun.file(swaggerBundle), { headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=86400" } }), { detail: { hide: true } })
    .get(`${ASSETS}/swagger-ui.css`, () => new Response(Bun.file(swaggerCss), { headers: { "content-type": "text/css; charset=utf-8", "cache-control": "public, max-age=86400" } }), { detail: { hide: true } })
    .get(`${ASSETS}/start.js`, () => new Response(START, { headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "no-cache" } }), { detail: { hide: true } })
    .get("/docs", () => new Response(PAGE, { headers: PAGE_HEADERS }), { detail: { hide: true } })
    .get("/openapi.json", () => document.json, { detail: { hide: true } });
