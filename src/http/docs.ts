import { openapi } from "@elysiajs/openapi";
import { Elysia } from "elysia";
// Imported as files so that `bun build --compile` embeds them: /docs works with no internet.
import swaggerBundle from "../../node_modules/swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import swaggerCss from "../../node_modules/swagger-ui-dist/swagger-ui.css" with { type: "file" };
import pkg from "../../package.json";

const ASSETS = "/docs/assets";

/** `/openapi.json` generated from the route schemas, and a Swagger UI page at `/docs` served locally. */
export const apiDocs = () =>
  new Elysia({ name: "api-docs" })
    .get(`${ASSETS}/swagger-ui-bundle.js`, () => new Response(Bun.file(swaggerBundle), { headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=86400" } }), { detail: { hide: true } })
    .get(`${ASSETS}/swagger-ui.css`, () => new Response(Bun.file(swaggerCss), { headers: { "content-type": "text/css; charset=utf-8", "cache-control": "public, max-age=86400" } }), { detail: { hide: true } })
    .use(
      openapi({
        path: "/docs",
        specPath: "/openapi.json",
        provider: "swagger-ui",
        swagger: { cdn: `${ASSETS}/swagger-ui-bundle.js`, theme: `${ASSETS}/swagger-ui.css`, persistAuthorization: true },
        exclude: { paths: [`${ASSETS}/swagger-ui-bundle.js`, `${ASSETS}/swagger-ui.css`, "/docs", "/openapi.json"] },
        documentation: {
          info: {
            title: "vet-clinic-service",
            version: pkg.version,
            description:
              "Practice management for small veterinary clinics. REST under /api/v1 (Bearer JWT), MCP under /mcp (Bearer svc_ API key). Errors use one envelope: {error, code, message, details?, request_id}.",
          },
          components: {
            securitySchemes: {
              accessToken: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "Access token from /api/v1/auth/login" },
              apiKey: { type: "http", scheme: "bearer", description: "MCP API key svc_…" },
            },
          },
          security: [{ accessToken: [] }],
        },
      }),
    );
