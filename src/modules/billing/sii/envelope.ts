import { signEnveloped, type Signer } from "./signature";
import { SII_NAMESPACE, XML_DECLARATION } from "./dte";
import { siiRut } from "./xml";

/** The SII's RUT: every envelope's receiver. */
export const SII_RUT = "60803000-K";
/** How many DTEs one envelope may carry: the EnvioDTE and EnvioBOLETA schemas' limits. */
export const ENVELOPE_LIMIT = { dte: 2000, boleta: 500 } as const;

export interface EnvelopeInput {
  /** 39 goes in an EnvioBOLETA, 33 and 61 in an EnvioDTE. */
  docType: number;
  issuerRut: string;
  /** The certificate holder's RUT (who sends). */
  senderRut: string;
  resolution: { number: number; date: string };
  signedAt: string;
  /** The signed DTEs, each with its XML declaration. */
  documents: string[];
}

/**
 * A signed EnvioDTE or EnvioBOLETA with its Carátula. Each DTE goes in as it was signed (with its
 * own namespace declaration), so taken out again it verifies as the SII checks it; the envelope's
 * signature covers the SetDTE.
 */
export function buildEnvelope(input: EnvelopeInput, signer: Signer): string {
  const root = input.docType === 39 ? "EnvioBOLETA" : "EnvioDTE";
  const schema = input.docType === 39 ? "EnvioBOLETA_v11.xsd" : "EnvioDTE_v10.xsd";
  const documents = input.documents.map((xml) => xml.replace(/^<\?xml[^>]*\?>\s*/, "")).join("");
  const caratula =
    `<Caratula version="1.0"><RutEmisor>${siiRut(input.issuerRut)}</RutEmisor><RutEnvia>${siiRut(input.senderRut)}</RutEnvia><RutReceptor>${SII_RUT}</RutReceptor>` +
    `<FchResol>${input.resolution.date}</FchResol><NroResol>${input.resolution.number}</NroResol><TmstFirmaEnv>${input.signedAt}</TmstFirmaEnv>` +
    `<SubTotDTE><TpoDTE>${input.docType}</TpoDTE><NroDTE>${input.documents.length}</NroDTE></SubTotDTE></Caratula>`;
  const xml =
    `<${root} xmlns="${SII_NAMESPACE}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="${SII_NAMESPACE} ${schema}" version="1.0">` +
    `<SetDTE ID="SetDoc">${caratula}${documents}</SetDTE></${root}>`;
  return XML_DECLARATION + signEnveloped(xml, "SetDoc", signer);
}
