import type { Config } from "../../../config";
import type { SecretBox } from "../../../lib/secrets";
import { cafTrust, type CafTrust } from "./trust";

/** What issuing needs beyond the database: the box the stored keys open with and the keys CAFs are checked against. */
export interface SiiSettings {
  secrets: SecretBox;
  trust: CafTrust;
}

export const siiSettings = (config: Pick<Config, "siiTestCafKeysFile">, secrets: SecretBox): SiiSettings => ({
  secrets,
  trust: cafTrust(config.siiTestCafKeysFile),
});
