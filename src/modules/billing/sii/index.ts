import { Elysia } from "elysia";
import type { AppContext } from "../../../context";
import { errorResponses, IdParams } from "../../../http/common-model";
import { ledgerResource } from "../../../http/ledger-resource";
import { CafList, CafModel, CertificateModel, EnvelopeQuery, PdfQuery, PutCertificateBody, taxDocumentModels, UploadCafBody } from "./model";
import * as service from "./service";
import { latin1 } from "./xml";
import type { SiiSettings } from "./settings";

const XML_TYPE = "application/xml; charset=ISO-8859-1";
const xmlAnswer = (xml: string, filename: string) => new Response(latin1(xml), { headers: { "content-type": XML_TYPE, "content-disposition": `inline; filename="${filename}"` } });

/** SII documents: issuing (the ledger routes), their XML, envelopes and PDF; the CAFs and the certificate they need. */
export const siiController = (context: AppContext, settings: SiiSettings) => {
  const { auth, services } = context;
  const documents = ledgerResource(context, {
    path: "/sii/documents",
    models: taxDocumentModels,
    records: service.taxDocumentRecords,
    service: service.taxDocumentService(settings),
    createSummary: "Issue a signed 33, 39 or 61 (code 1 anula, 2 corrige texto, 3 corrige montos) with the next folio of a stored CAF of its environment (Idempotency-Key accepted)",
  });
  const files = new Elysia({ prefix: "/sii", tags: ["billing"] as never })
    .use(auth)
    .guard({ auth: true })
    .get("/documents/:id/xml", async ({ actor, params }: any) => xmlAnswer(await service.documentXml(services, actor.clinicId, params.id), `dte-${params.id}.xml`), {
      params: IdParams,
      response: errorResponses(401, 404, 409, 422),
      detail: { summary: "The signed DTE (ISO-8859-1)", "x-media-type": XML_TYPE },
    })
    .get("/documents/:id/envelope", async ({ actor, params }: any) => xmlAnswer(await service.documentEnvelope(services, settings, actor.clinicId, params.id), `envio-${params.id}.xml`), {
      params: IdParams,
      response: errorResponses(401, 404, 409, 422),
      detail: { summary: "The document alone in a signed EnvioDTE (33, 61) or EnvioBOLETA (39), ready to upload to the SII", "x-media-type": XML_TYPE },
    })
    .get(
      "/documents/:id/pdf",
      async ({ actor, params, query }: any) => {
        const { bytes, filename } = await service.documentPdf(services, actor.clinicId, params.id, query.format);
        return new Response(bytes, { headers: { "content-type": "application/pdf", "content-disposition": `inline; filename="${filename}"` } });
      },
      {
        params: IdParams,
        query: PdfQuery,
        response: errorResponses(401, 404, 409, 422),
        detail: { summary: "The printed copy with the timbre (PDF417)", "x-media-type": "application/pdf" },
      },
    )
    .get("/envelopes", async ({ actor, query }: any) => xmlAnswer(await service.dayEnvelope(services, settings, actor.clinicId, query), `envio-${query.doc_type}-${query.date}.xml`), {
      query: EnvelopeQuery,
      response: errorResponses(401, 404, 409, 422),
      detail: { summary: "One clinic day's documents of a type in one signed envelope (at most 2,000 DTEs or 500 boletas)", "x-media-type": XML_TYPE },
    })
    .get("/cafs", ({ actor }) => service.listCafs(services, actor.clinicId), {
      response: { 200: CafList, ...errorResponses(401) },
      detail: { summary: "The stored CAFs (folio ranges) with what remains and warnings; never their keys" },
    })
    .post(
      "/cafs",
      async ({ actor, body, set }) => {
        set.status = 201;
        return service.uploadCaf(services, settings, actor.clinicId, body.xml);
      },
      {
        auth: ["owner"] as const,
        body: UploadCafBody,
        response: { 201: CafModel, ...errorResponses(401, 403, 422) },
        detail: { summary: "Store a CAF after checking the SII's signature, the RUT, the type, overlap and expiry (owner)" },
      },
    )
    .get("/certificate", ({ actor }) => service.getCertificate(services, actor.clinicId), {
      response: { 200: CertificateModel, ...errorResponses(401, 404) },
      detail: { summary: "The clinic's signing certificate (never its key)" },
    })
    .put("/certificate", ({ actor, body }) => service.putCertificate(services, settings, actor.clinicId, body), {
      auth: ["owner"] as const,
      body: PutCertificateBody,
      response: { 200: CertificateModel, ...errorResponses(401, 403, 422) },
      detail: { summary: "Store the clinic's digital certificate from a PKCS#12 file and its password (owner)" },
    });
  return new Elysia().use(documents).use(files);
};
