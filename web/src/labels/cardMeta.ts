import { isMessageKey } from "../i18n/strings";
import type { Translate } from "../i18n/translate";

/** A word from one of the card vocabularies (kind, memory type, trust, writer) in the interface language;
 * a value the UI has no word for is shown as it is. */
export function vocabulary(t: Translate, prefix: "cardKind" | "memoryType" | "trust" | "createdBy", value: string | number): string {
  const key = `${prefix}.${value}`;
  return isMessageKey(key) ? t(key) : String(value).replace(/_+/g, " ");
}
