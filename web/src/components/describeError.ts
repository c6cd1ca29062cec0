import { ApiError, NETWORK_ERROR } from "../api/client";
import type { Translate } from "../i18n/translate";

/** One readable sentence for a failed call; never repeats what the operator typed. */
export function describeError(t: Translate, error: unknown): string {
  if (!(error instanceof ApiError)) return t("error.generic", { code: "CLIENT", message: String(error) });
  if (error.code === NETWORK_ERROR) return t("error.network");
  if (error.code === "MEMORY_UNAVAILABLE") return t("error.unavailable");
  if ((error.status === 409 || error.status === 429) && error.retryAfterSeconds !== null) {
    return t("error.retryIn", { n: error.retryAfterSeconds });
  }
  return t("error.generic", { code: error.code, message: error.message });
}
