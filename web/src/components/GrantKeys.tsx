import type { TraceGrant } from "../api/types";
import { useI18n } from "../i18n/I18n";
import { spaceList } from "../labels/labels";

/** "Keys in this request: Detective, Bulletin board": the compartments a search could open, from its grant (a record
 * from before grants has none, and shows nothing). */
export function GrantKeys({ grant, className = "grant-keys" }: { grant: TraceGrant | null | undefined; className?: string }) {
  const { t } = useI18n();
  if (!grant) return null;
  return (
    <p className={className} data-testid="grant-keys" data-keys={grant.keys.join(" ")}>
      <KeyIcon /> {t("grant.keys", { spaces: spaceList(t, grant.keys) })}
    </p>
  );
}

/** A small key drawn inline (no emoji font needed). */
function KeyIcon() {
  return (
    <svg className="key-icon" width="1em" height="1em" viewBox="0 0 16 16" aria-hidden="true" focusable="false">
      <circle cx="5" cy="8" r="3.2" fill="none" stroke="currentColor" strokeWidth="1.8" />
      <path d="M8 8h7M12.5 8v3M14.5 8v2.2" fill="none" stroke="currentColor" strokeWidth="1.8" />
    </svg>
  );
}
